"""The training kind (checkpointed training): its time, and why the twin makes no log of it."""

from __future__ import annotations

from nvcregen.catalog.load import load_catalog
from nvcregen.catalog.models import TestEntry as Entry
from nvcregen.kindapi.protocol import FixedTime
from nvcregen.kindapi.registry import kind_of, package_of
from nvcregen.kinds.training.kind import KIND as TRAINING
from nvcregen.rehearse.makers.registry import maker_of, refusal_of


def entry(name: str) -> Entry:
    return load_catalog().tests[name]


def test_training_time_counts_every_step_and_each_whole_checkpoint_interval() -> None:
    base = entry("training-goodput")
    params = TRAINING.block(base).model_copy(
        update={
            "max_steps": 10,
            "save_interval": 4,
            "startup": "1m",
            "step_time": "2s",
            "checkpoint_save": "5s",
        }
    )
    test = base.model_copy(update={"training": params})
    assert kind_of(test).fixed_time(test, "15s") == FixedTime(
        60 + 10 * 2 + 2 * 5, "1m start-up + 10 steps x 2s + 2 checkpoints x 5s"
    )


def test_the_twin_makes_no_log_of_it_and_its_package_says_why() -> None:
    assert package_of("training") == "nvcregen.kinds.training"
    assert maker_of("training") is None
    reason = refusal_of("training")
    assert reason is not None and "no trainer-mode form (NVC322)" in reason
