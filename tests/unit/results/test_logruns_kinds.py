"""Which reader reads a run's log: the one of the format its kind declares (issue 35)."""

from __future__ import annotations

from pathlib import Path

from sitefactory import catalog, parse

from nvcregen.kindapi.registry import KINDS
from nvcregen.plan.resolve import plan
from nvcregen.results import logruns
from nvcregen.results.kindlogs import log_reader_of, pair_reader_of
from nvcregen.results.logplace import Placed
from nvcregen.results.logrecords import RunLog

SITE = Path(__file__).resolve().parents[2] / "fixtures" / "collect" / "site.yaml"


def test_every_log_format_a_kind_declares_is_read_by_the_kind_itself() -> None:
    """`logruns` reads no format itself: each kind's package holds its reader (`kindlogs.py`)."""
    own = {k.log_format for k in KINDS.values() if log_reader_of(k.name) is not None or k.pair}
    declared = {k.log_format for k in KINDS.values() if k.log_format is not None}
    assert declared == own
    assert "nccl-tests" in own  # nccl-tests' launcher logs: the nccl kind's `logs.READER`
    assert "dcgm-burnin" in own  # the burn-in kind reads its logs in its own package
    assert "perftest-pair" in own  # a pair kind's sides are read together (`logs.PAIR`)
    assert all(pair_reader_of(k.name) is not None for k in KINDS.values() if k.pair)
    assert KINDS["training"].log_format is None


def test_a_log_of_a_kind_that_prints_none_nvcregen_reads_is_no_data_never_a_guess() -> None:
    site, _ = parse(SITE.read_text(encoding="utf-8"))
    (unit,) = [u for u in plan(site, catalog()) if u.test.name == "training-goodput"]
    placed = Placed(unit, "lab-two-node-training-goodput-r1-g0", 1, 0, ("node-a", "node-b"))
    text = b"  1073741824  268435456  float  sum  -1  4709.6  227.99  427.48  0\n"
    read = logruns._read(RunLog("nvcre", placed.run, text), placed, failed=False)
    assert read.record.kind == "training"
    assert read.record.status == "no-data"
    assert read.record.errors == ("test training-goodput prints no log nvcregen reads",)
    assert read.measurement is None
