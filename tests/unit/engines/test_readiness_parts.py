"""Each readiness engine writes its own objects (issue 35 item 3): the compiler asks
through `compile.readiness.engineparts.ReadinessObjects`, found in the engine's package."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from periodicfactory import periodic_text
from pluginparts import only_plugin
from sitefactory import catalog, parse, site_yaml

from nvcregen.compile.readiness.components import PERIODIC, PREVIEW, READINESS
from nvcregen.compile.readiness.engineparts import ReadinessObjects, readiness_objects
from nvcregen.engineapi import registry
from nvcregen.engineapi.registry import READINESS as ENGINES
from nvcregen.engineapi.registry import readiness_engine
from nvcregen.plan.resolve import plan

ENGINE_SOURCE = """
from nvcregen.engineapi.protocol import ReadinessEngine


class Plain(ReadinessEngine):
    name = "plain"
    installs_nvcre = writes_runs = separate_launcher = taint_selectors = False
    attaches_pod_network = gang_scheduler = diagnose_groups = False

    def run_object(self, mode, gang):
        return ("batch", "Job")


ENGINE = Plain()
"""


@pytest.fixture
def plain_engine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A readiness engine whose package holds nothing but its traits."""
    yield from only_plugin(
        tmp_path,
        monkeypatch,
        "fakereadiness.plain.engine",
        ENGINE_SOURCE,
        (registry, "READINESS_MODULES"),
        registry.READINESS,
    )


def test_every_registered_readiness_engine_writes_its_objects_from_its_own_package() -> None:
    assert sorted(ENGINES) == ["nvcre", "trainer"]
    for engine in ENGINES.values():
        found = readiness_objects(engine)
        assert isinstance(found, ReadinessObjects)
        assert type(found).__module__ == f"{registry.package_of(engine)}.objects"


def test_an_engine_whose_package_holds_no_objects_is_named(plain_engine: None) -> None:
    with pytest.raises(LookupError, match="readiness engine plain writes no readiness objects"):
        readiness_objects(ENGINES["plain"])


def test_trainer_mode_writes_the_periodic_layer_and_nvcre_none() -> None:
    """The same periodic site: its CronJobs are trainer mode's; NVCRE (NVC327) has none."""
    site, _ = parse(periodic_text())
    units = plan(site, catalog())
    periodic = readiness_objects(readiness_engine("trainer")).periodic(site, units)
    assert {m.kind for m in periodic} == {"PriorityClass", "CronJob"}
    assert {m.component for m in periodic} == {PERIODIC}
    assert readiness_objects(readiness_engine("nvcre")).periodic(site, units) == []


def test_nvcre_previews_its_workloadruns_and_trainer_mode_has_nothing_to_preview() -> None:
    site, _ = parse(site_yaml())
    units = plan(site, catalog())
    nvcre = readiness_objects(readiness_engine("nvcre"))
    readiness = nvcre.readiness(site, units)
    assert {m.component for m in readiness} == {READINESS}
    assert "WorkloadRun" in {m.kind for m in readiness}
    preview = nvcre.preview(readiness)
    assert {m.kind for m in preview} == {"TrainingRuntime", "TrainJob"}
    assert {m.component for m in preview} == {PREVIEW}
    assert readiness_objects(readiness_engine("trainer")).preview(readiness) == []
