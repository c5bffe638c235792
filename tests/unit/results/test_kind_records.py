"""A kind's record of one log (`results/kindlogs.py`): the one helper the dcgm, burn-in and
nvbandwidth readers build their LogRecord with, and the cap on the errors it names."""

from __future__ import annotations

from nvcregen.results.kindlogs import MAX_ERRORS, capped, kind_record


def test_a_record_names_at_most_64_errors_then_counts_the_rest() -> None:
    errors = [f"gpu {n}" for n in range(MAX_ERRORS + 2)]
    assert MAX_ERRORS == 64
    assert capped(errors[:MAX_ERRORS]) == errors[:MAX_ERRORS]  # the bound itself: all named
    assert capped(errors[: MAX_ERRORS + 1]) == [*errors[:MAX_ERRORS], "and 1 more"]
    assert capped(errors) == [*errors[:MAX_ERRORS], "and 2 more"]
    assert capped(errors[:3], 2) == ["gpu 0", "gpu 1", "and 1 more"]
    assert capped([]) == []


def test_a_kinds_record_is_what_collect_knows_with_its_kind_status_and_errors() -> None:
    base = {"path": "logs/nvcre/x.log", "run": "r", "round": 2, "hosts": ("node-a",)}
    record = kind_record("burnin", base, "failed", ["node-a GPU 3: low"])
    assert (record.path, record.run, record.round) == ("logs/nvcre/x.log", "r", 2)
    assert (record.kind, record.status, record.errors) == (
        "burnin",
        "failed",
        ("node-a GPU 3: low",),
    )
