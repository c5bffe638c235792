"""Verdicts: medians per figure, the transport gate, finality, groups, goodput, runs."""

from __future__ import annotations

from typing import Any

import pytest

from nvcregen.results.figures import bandwidth_figures, median_of, spread_of
from nvcregen.results.models import (
    BandwidthMeasurement,
    BandwidthRow,
    FailedNode,
    Finality,
    GoodputComponents,
    GoodputMeasurement,
    ObjectRef,
    RunState,
)
from nvcregen.results.runs import RunResult, RunSet
from nvcregen.results.verdicts import Word, judge_run, judge_threshold
from nvcregen.spec.v1alpha1 import Threshold

GIB = 1 << 30
ROCE = (363.76, 452.28, 427.58)  # the field report's rounds, not in order


def bw(
    busbw: float,
    *,
    round_: int = 1,
    group: str = "group-0",
    algbw: float | None = None,
    finality: Finality = Finality.FINAL,
    reason: str = "JobSucceeded",
    transports: tuple[str, ...] = (),
    sizes: dict[int, float] | None = None,
) -> BandwidthMeasurement:
    rows = sizes or {GIB: busbw}
    return BandwidthMeasurement(
        ref=ObjectRef(kind="BandwidthMeasurement", name=f"{group}-{round_}-bw"),
        group=group,
        iteration=round_,
        finality=finality,
        reason=reason,
        transports=transports,
        rows=tuple(
            BandwidthRow(size_bytes=size, bus_bw=value, alg_bw=algbw or value / 1.875, samples=10)
            for size, value in sorted(rows.items())
        ),
    )


def run(*measurements: BandwidthMeasurement, **fields: Any) -> RunResult:
    base: dict[str, Any] = {
        "stage": "two-node",
        "scope": "inter-node",
        "test": "nccl-all-reduce",
        "expected_transport": "IB",
        "state": RunState.SUCCEEDED,
        "bandwidth": measurements,
    }
    return RunResult(**(base | fields))


def threshold(**fields: Any) -> Threshold:
    base = {"test": "nccl-all-reduce", "scope": "inter-node", "at": "1GiB", "busbw": ">= 360 GB/s"}
    return Threshold.model_validate(base | fields)


def rounds(values: tuple[float, ...] = ROCE, **kwargs: Any) -> list[BandwidthMeasurement]:
    return [bw(v, round_=i, **kwargs) for i, v in enumerate(values, 1)]


def test_median_and_spread() -> None:
    assert median_of([363.76, 452.28, 427.58]) == 427.58
    assert spread_of([363.76, 452.28, 427.58]) == pytest.approx((452.28 - 363.76) / 427.58)
    assert median_of([]) is None
    assert spread_of([0.0, 0.0]) is None


def test_each_figure_takes_its_own_median_over_the_rounds() -> None:
    # algbw's median round (210) is not busbw's median round (427.58): each is its own.
    measured = [
        bw(363.76, round_=1, algbw=250.0),
        bw(452.28, round_=2, algbw=200.0),
        bw(427.58, round_=3, algbw=210.0),
    ]
    busbw, algbw = bandwidth_figures(measured, GIB)
    assert busbw.median == 427.58
    assert busbw.rounds == (363.76, 452.28, 427.58)
    assert busbw.spread == pytest.approx(0.20702, abs=1e-5)
    assert algbw.median == 210.0


def test_three_final_rounds_above_the_bound_pass() -> None:
    (verdict,) = judge_threshold(1, threshold(), [run(*rounds())], 3)
    assert verdict.word is Word.PASS
    assert verdict.stage == "two-node"
    assert verdict.bound == 360.0
    (group,) = verdict.groups
    assert (group.rounds, group.final_rounds) == (3, 3)
    assert group.figures[0].median == 427.58
    assert "median busbw 427.58 GB/s over 3 rounds" in verdict.reasons[-1].message


def test_a_bound_in_bits_is_compared_in_bytes() -> None:
    (verdict,) = judge_threshold(1, threshold(busbw=">= 2880 Gb/s"), [run(*rounds())], 3)
    assert verdict.word is Word.PASS
    assert verdict.bound == 360.0
    assert "needs >= 360 GB/s (written >= 2880 Gb/s)" in verdict.reasons[-1].message


def test_a_median_below_the_bound_fails() -> None:
    (verdict,) = judge_threshold(1, threshold(busbw=">= 430 GB/s"), [run(*rounds())], 3)
    assert verdict.word is Word.FAIL
    assert [r.code for r in verdict.reasons] == ["threshold"]


def test_socket_when_rdma_is_expected_fails_however_fast() -> None:
    measured = rounds(transports=("Socket",))
    (verdict,) = judge_threshold(1, threshold(transport="IB"), [run(*measured)], 3)
    assert verdict.word is Word.FAIL
    assert [r.code for r in verdict.reasons] == ["transport"]
    assert "expected IB (RDMA), but the rounds ran over Socket" in verdict.reasons[0].message
    transport = verdict.groups[0].transport
    assert (transport.expected, transport.seen, transport.checked) == ("IB", ("Socket",), True)


def test_one_round_over_socket_is_enough_to_fail() -> None:
    measured = [
        *rounds((427.58, 452.28), transports=("IB",)),
        bw(2.25, round_=3, transports=("Socket",)),
    ]
    (verdict,) = judge_threshold(1, threshold(busbw=">= 1 GB/s"), [run(*measured)], 3)
    assert verdict.word is Word.FAIL
    assert verdict.reasons[0].code == "transport"


def test_the_plan_sets_the_expected_transport_when_the_threshold_does_not() -> None:
    measured = rounds(transports=("Socket",))
    (verdict,) = judge_threshold(1, threshold(), [run(*measured, expected_transport="IB")], 3)
    assert verdict.word is Word.FAIL


def test_a_pinned_nccl_net_counts_as_the_transport() -> None:
    wrong = run(*rounds(), pinned_transport="Socket")
    (verdict,) = judge_threshold(1, threshold(transport="IB"), [wrong], 3)
    assert verdict.word is Word.FAIL
    right = run(*rounds(), pinned_transport="IB")
    (verdict,) = judge_threshold(1, threshold(transport="IB"), [right], 3)
    assert verdict.word is Word.PASS
    assert verdict.groups[0].transport.checked


def test_an_unrecorded_transport_is_noted_not_checked() -> None:
    (verdict,) = judge_threshold(1, threshold(transport="IB"), [run(*rounds())], 3)
    assert verdict.word is Word.PASS
    assert not verdict.groups[0].transport.checked
    assert "transport-unverified" in [r.code for r in verdict.groups[0].reasons]


@pytest.mark.parametrize("reason", ["Measuring", "NoDataCollected", "LogsUnavailable"])
def test_a_provisional_round_is_never_a_pass(reason: str) -> None:
    measured = [
        *rounds((427.58, 452.28)),
        bw(999.0, round_=3, finality=Finality.PROVISIONAL, reason=reason),
    ]
    (verdict,) = judge_threshold(1, threshold(), [run(*measured)], 3)
    assert verdict.word is Word.INCOMPLETE
    assert "provisional" in [r.code for r in verdict.reasons]
    assert reason in verdict.reasons[0].message
    assert verdict.groups[0].final_rounds == 2
    assert verdict.groups[0].figures[0].rounds == (427.58, 452.28)  # 999 never counts


def test_a_round_whose_job_failed_fails() -> None:
    measured = [
        *rounds((427.58, 452.28)),
        bw(0.0, round_=3, finality=Finality.NOT_EVALUATED, reason="JobFailed"),
    ]
    (verdict,) = judge_threshold(1, threshold(), [run(*measured)], 3)
    assert verdict.word is Word.FAIL
    assert verdict.reasons[0].code == "job-failed"


def test_fewer_final_rounds_than_planned_is_incomplete() -> None:
    (verdict,) = judge_threshold(1, threshold(), [run(*rounds((427.58, 452.28)))], 3)
    assert verdict.word is Word.INCOMPLETE
    assert verdict.reasons[0].message == "2 of 3 rounds final"


def test_a_size_no_round_measured_is_incomplete() -> None:
    measured = rounds(sizes={1 << 20: 40.0})
    (verdict,) = judge_threshold(1, threshold(), [run(*measured)], 3)
    assert verdict.word is Word.INCOMPLETE
    assert verdict.reasons[0].code == "size-not-measured"
    assert "at 1GiB" in verdict.reasons[0].message


def test_without_a_size_each_round_contributes_its_best_size() -> None:
    measured = [
        bw(0, round_=i, sizes={1 << 20: 40.0, GIB: v, 2 * GIB: v + 1})
        for i, v in enumerate(ROCE, 1)
    ]
    (verdict,) = judge_threshold(1, threshold(at=None), [run(*measured)], 3)
    assert verdict.word is Word.PASS
    assert verdict.groups[0].figures[0].median == 428.58


def test_every_node_of_an_intra_node_run_is_judged_on_its_own() -> None:
    measured = rounds((465.1, 466.0, 464.2), group="node-a") + rounds(
        (401.2, 405.0, 399.9), group="node-b"
    )
    single = run(*measured, stage="single-node", scope="intra-node", expected_transport=None)
    (verdict,) = judge_threshold(0, threshold(scope="intra-node", busbw=">= 420 GB/s"), [single], 3)
    assert verdict.word is Word.FAIL
    assert [(g.group, g.word) for g in verdict.groups] == [
        ("node-a", Word.PASS),
        ("node-b", Word.FAIL),
    ]
    assert verdict.reasons[0].message.startswith("node-b: median busbw 401.2 GB/s")


def test_a_threshold_without_comparisons_checks_the_transport() -> None:
    tcp = run(
        *rounds((2.21, 2.25, 2.31)),
        test="nccl-all-reduce-tcp",
        expected_transport="Socket",
        pinned_transport="Socket",
    )
    baseline = Threshold.model_validate(
        {"test": "nccl-all-reduce-tcp", "scope": "inter-node", "transport": "Socket"}
    )
    (verdict,) = judge_threshold(2, baseline, [tcp], 3)
    assert (verdict.field, verdict.word) == ("transport", Word.PASS)
    assert verdict.reasons[0].message == "ran over Socket (pinned with NCCL_NET)"


def test_a_threshold_no_stage_runs_is_incomplete() -> None:
    (verdict,) = judge_threshold(0, threshold(test="nccl-alltoall"), [run(*rounds())], 3)
    assert verdict.word is Word.INCOMPLETE
    assert verdict.reasons[0].code == "not-planned"


def gp(ratio: float, round_: int, finality: Finality = Finality.FINAL) -> GoodputMeasurement:
    return GoodputMeasurement(
        ref=ObjectRef(kind="GoodputMeasurement", name=f"gp-{round_}"),
        group="group-0",
        iteration=round_,
        finality=finality,
        ratio=ratio,
        components=GoodputComponents(
            training=1000.0,
            lost_work=10.0 * round_,
            resume=5.0,
            reschedule=0.0,
            checkpoint_save=20.0,
        ),
    )


def test_goodput_compares_the_median_ratio_and_reports_its_components() -> None:
    training = run(test="training-goodput", goodput=(gp(0.94, 1), gp(0.88, 2), gp(0.95, 3)))
    rule = Threshold.model_validate(
        {"test": "training-goodput", "scope": "inter-node", "goodput": ">= 0.9"}
    )
    (verdict,) = judge_threshold(3, rule, [training], 3)
    assert verdict.word is Word.PASS
    figures = {f.name: f for f in verdict.groups[0].figures}
    assert figures["goodput"].median == 0.94
    assert figures["lost_work_time"].median == 20.0
    assert figures["lost_work_time"].rounds == (10.0, 20.0, 30.0)
    (verdict,) = judge_threshold(3, rule.model_copy(update={"goodput": ">= 95%"}), [training], 3)
    assert verdict.word is Word.FAIL


def test_a_provisional_goodput_is_incomplete() -> None:
    training = run(
        test="training-goodput",
        goodput=(gp(0.94, 1), gp(0.95, 2), gp(0.99, 3, Finality.PROVISIONAL)),
    )
    rule = Threshold.model_validate(
        {"test": "training-goodput", "scope": "inter-node", "goodput": ">= 0.9"}
    )
    (verdict,) = judge_threshold(3, rule, [training], 3)
    assert verdict.word is Word.INCOMPLETE


def test_runs_are_judged_by_nvcre_and_by_their_nodes() -> None:
    assert judge_run(run()).word is Word.PASS
    failed = judge_run(
        run(state=RunState.FAILED, reason="WorkflowFailed", message="group-0 failed")
    )
    assert (failed.word, failed.reasons[0].message) == (Word.FAIL, "WorkflowFailed: group-0 failed")
    excluded = judge_run(run(excluded_nodes=("node-c",), exclusion_reason="node-c is cordoned"))
    assert excluded.word is Word.INCOMPLETE
    assert excluded.reasons[0].message == "node-c not tested: node-c is cordoned"
    bad = FailedNode(name="node-b", reason="ThresholdViolation", message="401.2 < 420")
    with_nodes = judge_run(run(failed_nodes=(bad,)))
    assert with_nodes.word is Word.FAIL
    assert with_nodes.reasons[0].message == "node-b: ThresholdViolation (401.2 < 420)"
    missing = judge_run(
        run(
            state=RunState.PENDING,
            reason="NotFound",
            message="no Certification category of this site runs it",
        )
    )
    assert missing.word is Word.INCOMPLETE
    assert missing.reasons[0].code == "not-found"
    running = judge_run(run(state=RunState.IN_PROGRESS, reason="WorkflowRunning"))
    assert (running.word, running.reasons[0].code) == (Word.INCOMPLETE, "in-progress")


def test_an_empty_run_set_judges_nothing() -> None:
    assert RunSet(()).runs == ()


def test_the_median_leaves_rounds_over_another_transport_out() -> None:
    """Two RoCE rounds and one TCP round: the median is the RoCE rounds' (as the IB chart)."""
    measured = [
        *rounds((427.58, 452.28), transports=("IB",)),
        bw(2.25, round_=3, transports=("Socket",)),
    ]
    (verdict,) = judge_threshold(1, threshold(transport="IB"), [run(*measured)], 3)
    (group,) = verdict.groups
    busbw = group.figures[0]
    assert busbw.rounds == (427.58, 452.28)
    assert busbw.median == (427.58 + 452.28) / 2
    assert [r.code for r in verdict.reasons] == ["transport"]
    assert [r.code for r in group.reasons] == ["transport", "met"]
    assert "over 2 rounds" in group.reasons[1].message
    assert "(1 round(s) over another transport left out)" in group.reasons[1].message
    assert verdict.word is Word.FAIL


def test_a_run_over_socket_where_rdma_is_expected_fails_without_a_threshold() -> None:
    measured = [
        *rounds((427.58, 452.28), transports=("IB",)),
        bw(2.25, round_=3, transports=("Socket",)),
    ]
    verdict = judge_run(run(*measured))
    assert verdict.word is Word.FAIL
    assert [(r.code, r.message) for r in verdict.reasons] == [
        ("transport", "group-0 round 3 (group-0-3-bw) ran over Socket, expected IB (RDMA)")
    ]
    assert judge_run(run(*rounds(transports=("IB",)))).word is Word.PASS
    assert judge_run(run(*rounds())).word is Word.PASS  # not recorded: nothing to gate
    tcp = run(*rounds(transports=("Socket",)), expected_transport="Socket")
    assert judge_run(tcp).word is Word.PASS
