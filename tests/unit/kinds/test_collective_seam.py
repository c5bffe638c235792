"""A collective kind is timed, thresholded and alerted on by what it says it sweeps (issue 35).

The layers ask a collective kind for its sweep (`TestKind.sweep`, a `kindapi.protocol.Sweep`)
and never read its block: the physics model times it (`plan/physics.py`), NVC353 checks a
threshold's `at:` against its sizes (`validate/thresholds.py`) and a threshold's alert is
labelled with its collective (`compile/monitoring/alerts.py`). A throwaway collective kind,
written outside `nvcregen/` with a block naming its sweep in words of its own and
registered by swapping the registry (`tests/throwawaykinds.py`), goes through the same
seam as nccl: its own numbers, not nccl's, decide its time, its sizes and its label.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sitefactory import FILE, line_of, parse, site_yaml, unit, units_of
from sitefactory import catalog as shipped
from throwawaykinds import Throwaway, package_digest, registering

from nvcregen.catalog.load import Catalog, load_catalog
from nvcregen.compile.monitoring.alerts import threshold_alerts
from nvcregen.core.errors import Diagnostic, Severity
from nvcregen.kindapi.registry import KINDS, kind_of
from nvcregen.plan import physics
from nvcregen.plan.model import TestUnit
from nvcregen.plan.resolve import plan
from nvcregen.plan.run import run_of
from nvcregen.validate.site import check_site

PARAMS_SOURCE = '''
from nvcregen.spec.v1alpha1 import Size, StrictModel


class RingParams(StrictModel):
    """A ring benchmark's sweep, in its own words."""

    op: str
    smallest: Size
    largest: Size
    factor: int
    timed: int
    rounds: int
'''
KIND_SOURCE = """
from dataclasses import dataclass

from nvcregen.kindapi.protocol import TestKind
from extrakinds.{package}.params import RingParams


@dataclass(frozen=True)
class RingSweep:
    min_bytes: str
    max_bytes: str
    step_factor: int
    iterations: int
    cycles: int
    test_type: str


class Ring(TestKind[RingParams]):
    name = "{name}"
    params = RingParams
    per_node = one_node = node_health = False
    collective = True
    pod_size = "nccl"

    def duration_basis(self, test):
        return "its sweep"

    def fixed_time(self, test, pod_start):
        return None

    def sweep(self, test):
        ring = self.block(test)
        return RingSweep(
            ring.smallest, ring.largest, ring.factor, ring.timed, ring.rounds, ring.op
        )


KIND = Ring()
"""
TEST_FILE = """\
name: ring-all-gather
title: a ring benchmark's all-gather
kind: ring
scopes: [intra-node, inter-node]
transport: fabric
image: nccl
measurement: bandwidth
ring:
  op: all_gather
  smallest: 1KiB
  largest: 1GiB
  factor: 4
  timed: 20
  rounds: 2
sources: [a throwaway kind of tests/unit/kinds/test_collective_seam.py]
"""
RING = Throwaway(PARAMS_SOURCE, KIND_SOURCE, "ring-all-gather.yaml", TEST_FILE)
STAGES = "- {name: pair, scope: inter-node, tests: [ring-all-gather]}"
KIB, GIB = 1 << 10, 1 << 30
RING_SIZES = tuple(KIB * 4**k for k in range(11))  # 1KiB x 4^k up to 1GiB


@pytest.fixture
def catalog(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Catalog]:
    """The real catalog with the ring kind registered and its test beside nccl's."""
    registered = registering(tmp_path, monkeypatch, RING)
    extra = next(registered)("ring")
    yield load_catalog(extra.catalog)
    assert package_digest() == extra.before  # no file of nvcregen/ edited
    next(registered, None)  # the registry back as it was


def planned(catalog: Catalog, thresholds: str = "") -> tuple[list[TestUnit], list[Diagnostic]]:
    """The ring test's units on two H100 nodes over 2 x 400 Gb/s IB, and the site's checks."""
    site, doc = parse(site_yaml(stages=STAGES, thresholds=thresholds))
    return plan(site, catalog), check_site(doc, catalog).diagnostics


def test_a_collective_kind_is_timed_by_its_own_sweep(catalog: Catalog) -> None:
    (ring,) = planned(catalog)[0]
    run = run_of(ring)
    assert kind_of(ring.test) is KINDS["ring"]
    assert run.collective == "all_gather"  # its `op`, through its sweep
    assert physics.measured_sizes(ring, catalog) == RING_SIZES
    data = catalog.physics
    calls = data.nccl_tests.modes * (
        data.nccl_tests.sync_iterations + 20 + data.nccl_tests.check_iterations
    )

    def call(size: int) -> float:
        return physics.call_seconds(run, catalog, size)

    warmup = data.nccl_tests.warmup_iterations * (call(GIB) + call(KIB))
    expected = 90 + warmup + 2 * calls * sum(call(s) for s in RING_SIZES)  # 2 rounds
    assert physics.expected_duration(ring, catalog) == pytest.approx(expected)
    assert physics.explain(ring, catalog).startswith(
        f"90s start-up + 2 cycles x 11 sizes (1KiB..1GiB, x4) x {calls} calls at "
    )
    assert "all_gather over 16 ranks" in physics.explain(ring, catalog)


@pytest.mark.parametrize(
    ("at", "message", "hint"),
    [
        (
            "3MiB",
            "at: 3MiB is not a size ring-all-gather runs (1KiB x 4^k up to 1GiB)",
            "nearest sizes it runs: 1MiB, 4MiB",
        ),
        (
            "2GiB",
            "at: 2GiB is beyond the largest size ring-all-gather runs (1GiB)",
            "pick a size the sweep runs, up to its maxBytes",
        ),
        (
            "512B",
            "at: 512B is below the smallest size ring-all-gather runs (1KiB)",
            "the sweep starts at minBytes 1KiB",
        ),
    ],
)
def test_a_collective_kinds_at_size_is_checked_against_its_own_sweep(
    catalog: Catalog, at: str, message: str, hint: str
) -> None:
    rule = f'- {{test: ring-all-gather, scope: inter-node, at: {at}, busbw: ">= 10 GB/s"}}'
    found = [d for d in planned(catalog, rule)[1] if d.code == "NVC353"]
    assert [(d.severity, d.message, d.hint) for d in found] == [(Severity.ERROR, message, hint)]
    text = site_yaml(stages=STAGES, thresholds=rule)
    assert (found[0].span.file, found[0].span.line) == (FILE, line_of(text, f"at: {at}"))
    assert found[0].path == "/spec/thresholds/0/at"
    for runs in ("4MiB", "1KiB", "1GiB"):  # sizes it runs, 8B..16GiB x2 as nccl's does not
        fine = rule.replace(f"at: {at}", f"at: {runs}")
        assert "NVC353" not in [d.code for d in planned(catalog, fine)[1]], runs


def test_a_collective_kinds_alert_is_labelled_with_its_collective(
    catalog: Catalog,
) -> None:
    rule = '- {test: ring-all-gather, scope: inter-node, at: 4MiB, busbw: ">= 10 GB/s"}'
    units = planned(catalog, rule)[0]
    site, _ = parse(site_yaml(stages=STAGES, thresholds=rule))
    (alert,) = threshold_alerts(site, units, "1h")
    assert 'nccl_test="all_gather"' in str(alert.rule["expr"])
    assert 'message_size_bytes="4194304"' in str(alert.rule["expr"])
    assert "(all_gather at 4MiB, 4194304 bytes)" in alert.note


def test_a_kind_giving_neither_a_time_nor_a_sweep_is_a_bug_named(
    catalog: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    (ring,) = planned(catalog)[0]
    monkeypatch.setattr(type(KINDS["ring"]), "sweep", lambda self, test: None)
    wrong = "test ring-all-gather: the ring kind gives neither a time nor a sweep"
    with pytest.raises(ValueError, match=wrong):
        physics.expected_duration(ring, catalog)
    assert physics.measured_sizes(ring, catalog) == ()  # no sweep: no sizes to print


def test_nccls_sweep_is_its_block_and_a_kind_sweeping_nothing_gives_none() -> None:
    nccl, dcgm = shipped().tests["nccl-all-gather"], shipped().tests["dcgm-l1"]
    block: object = KINDS["nccl"].block(nccl)
    assert KINDS["nccl"].sweep(nccl) is block
    assert kind_of(dcgm).sweep(dcgm) is None  # the protocol's default
    assert run_of(unit(units_of(), "node", "dcgm-l1")).sweep is None
