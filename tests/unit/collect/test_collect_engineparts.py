"""`collect` asks a readiness engine for its own collector (issue 35 item 3): trainer mode
collects its pod logs itself, NVCRE's results are its objects."""

from __future__ import annotations

from nvcregen.collect.engineparts import is_own_collector, own_collector
from nvcregen.engineapi.registry import READINESS


def test_trainer_mode_collects_itself_and_nvcre_mode_leaves_it_to_collect() -> None:
    owns = {name: own_collector(engine) is not None for name, engine in READINESS.items()}
    assert owns == {"nvcre": False, "trainer": True}
    found = own_collector(READINESS["trainer"])
    assert type(found).__module__ == "nvcregen.engines.readiness.trainer.collect"
    # the engines whose results are pod logs are those that collect themselves
    assert all(owns[name] is engine.writes_runs for name, engine in READINESS.items())


def test_only_an_object_with_a_collect_method_is_a_collector() -> None:
    class Collects:
        def collect(self, loaded: object, options: object, key: object) -> object:
            return None

    assert is_own_collector(Collects())
    assert not is_own_collector(object())
