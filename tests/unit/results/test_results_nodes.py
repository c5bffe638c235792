"""Nodes in every verdict: failed alone, suspect, excluded, untested, cleared."""

from __future__ import annotations

from typing import Any

from sitefactory import POOL, parse, site_yaml

from nvcregen.results.findings import Finding
from nvcregen.results.models import (
    BandwidthMeasurement,
    BandwidthRow,
    FailedNode,
    Finality,
    ObjectRef,
    RunState,
)
from nvcregen.results.nodes import judge_nodes, refused_nodes
from nvcregen.results.runs import PlannedGroup, RunResult, RunSet
from nvcregen.results.verdicts import judge
from nvcregen.results.words import Word

GIB = 1 << 30
SITE = parse(site_yaml())[0]  # nodes gpu-1 and gpu-2
THREE = parse(site_yaml(pools=POOL.replace("gpu-2]", "gpu-2, gpu-3]")))[0]


def bw(group: str, nodes: tuple[str, ...], round_: int, **fields: Any) -> BandwidthMeasurement:
    base: dict[str, Any] = {
        "ref": ObjectRef(kind="BandwidthMeasurement", name=f"{group}-{round_}"),
        "group": group,
        "nodes": nodes,
        "iteration": round_,
        "finality": Finality.FINAL,
        "rows": (BandwidthRow(size_bytes=GIB, bus_bw=400.0, alg_bw=213.0, samples=1),),
    }
    return BandwidthMeasurement(**(base | fields))


def run(*measured: BandwidthMeasurement, **fields: Any) -> RunResult:
    base: dict[str, Any] = {
        "stage": "fabric",
        "scope": "inter-node",
        "test": "nccl-all-reduce",
        "state": RunState.SUCCEEDED,
        "bandwidth": measured,
    }
    return RunResult(**(base | fields))


def statuses(*runs: RunResult, rounds: int = 1, **words: Any) -> dict[str, str]:
    found = judge_nodes(SITE, RunSet(tuple(runs)), words.get("thresholds", {}), rounds)
    return {n.node: n.status for n in found}


def test_a_job_that_failed_on_one_node_fails_that_node_alone() -> None:
    single = run(
        bw("g0", ("gpu-1",), 1, finality=Finality.NOT_EVALUATED, reason="JobFailed"),
        bw("g1", ("gpu-2",), 1),
        stage="node",
        scope="intra-node",
    )
    assert statuses(single) == {"gpu-1": "failed", "gpu-2": "cleared"}


def test_a_failing_pair_with_no_passing_partner_is_suspect_and_its_threshold_says_why() -> None:
    pair = run(bw("g0", ("gpu-1", "gpu-2"), 1))
    thresholds = {("fabric", "nccl-all-reduce", "g0"): [(Word.FAIL, "median busbw 300 GB/s")]}
    found = judge_nodes(SITE, RunSet((pair,)), thresholds, 1)
    assert [(n.node, n.status, n.word) for n in found] == [
        ("gpu-1", "suspect", Word.FAIL),
        ("gpu-2", "suspect", Word.FAIL),
    ]
    assert found[0].reasons == (
        "only in failing groups of fabric / nccl-all-reduce g0 with gpu-2: median busbw 300 GB/s",
    )


def test_nvcre_failed_nodes_excluded_nodes_and_untested_ones() -> None:
    failed = run(failed_nodes=(FailedNode(name="gpu-1", reason="HardwareFailureDetected"),))
    excluded = run(excluded_nodes=("gpu-2",), exclusion_reason="NodeNotReady", test="dcgm-l1")
    found = {n.node: n for n in judge_nodes(SITE, RunSet((failed, excluded)), {}, 1)}
    assert (found["gpu-1"].status, found["gpu-1"].reasons) == (
        "failed",
        ("failed alone in fabric / nccl-all-reduce: HardwareFailureDetected",),
    )
    assert (found["gpu-2"].status, found["gpu-2"].word) == ("excluded", Word.INCOMPLETE)
    assert found["gpu-2"].reasons == ("excluded from fabric / dcgm-l1: NodeNotReady",)
    assert statuses() == {"gpu-1": "untested", "gpu-2": "untested"}


def test_a_group_that_has_not_finished_clears_no_one() -> None:
    pending = run(
        bw("g0", ("gpu-1", "gpu-2"), 1, finality=Finality.PROVISIONAL, reason="Measuring")
    )
    assert statuses(pending) == {"gpu-1": "untested", "gpu-2": "untested"}
    short = run(bw("g0", ("gpu-1", "gpu-2"), 1))
    assert statuses(short, rounds=2) == {"gpu-1": "untested", "gpu-2": "untested"}
    assert statuses(short, rounds=1) == {"gpu-1": "cleared", "gpu-2": "cleared"}


def test_a_round_over_the_wrong_transport_fails_its_group() -> None:
    socket = run(bw("g0", ("gpu-1", "gpu-2"), 1, transports=("Socket",)), expected_transport="IB")
    assert statuses(socket) == {"gpu-1": "suspect", "gpu-2": "suspect"}


def test_a_node_passing_another_group_of_the_same_test_is_cleared() -> None:
    groups = run(bw("g0", ("gpu-1", "gpu-2"), 1), bw("g1", ("gpu-1", "gpu-3"), 1))
    thresholds = {("fabric", "nccl-all-reduce", "g0"): [(Word.FAIL, "slow")]}
    found = judge_nodes(THREE, RunSet((groups,)), thresholds, 1)
    assert {n.node: n.status for n in found} == {
        "gpu-2": "suspect",
        "gpu-1": "cleared",
        "gpu-3": "cleared",
    }


def test_a_name_outside_the_plan_is_a_finding_never_a_node_verdict() -> None:
    """A Workflow group and NVCRE's failed nodes name nodes no pool names (issue #31)."""
    group = run(bw("g0", ("gpu-1", "prod-control-plane-1"), 1))
    failed = run(
        failed_nodes=(
            FailedNode(name="prod-control-plane-1", reason="HardwareFailureDetected"),
            FailedNode(name="node-a/status", reason="HardwareFailureDetected"),
            FailedNode(name="../../api/v1/namespaces/kube-system", reason="X"),
        ),
        succeeded_nodes=("gpu-3",),
        excluded_nodes=("kube-apiserver",),
        test="dcgm-l1",
    )
    runs = RunSet((group, failed))
    assert statuses(group, failed) == {"gpu-1": "cleared", "gpu-2": "untested"}
    found = refused_nodes(SITE, runs)
    names = ["prod-control-plane-1", "node-a/status", "../../api", "gpu-3", "kube-apiserver"]
    assert [f.code for f in found] == ["NVC750"] * 5
    assert all(n in f.message for n, f in zip(names, found, strict=True))
    assert {(f.kind, f.word, f.stage) for f in found} == {("unbound", Word.FAIL, "fabric")}
    assert [f.test for f in found] == ["nccl-all-reduce", *["dcgm-l1"] * 4]
    assert found[0].group == "g0" and found[1].group == ""
    assert "is not a node the site's pools name" in found[0].message
    assert "is not a node name (an RFC 1123 subdomain)" in found[1].message
    verdicts = judge(SITE, runs)
    assert [f.code for f in verdicts.findings] == ["NVC750"] * 5
    assert {v.word for v in verdicts.runs} == {Word.FAIL}  # the runs that named them fail


def test_a_name_outside_the_plan_fails_no_planned_node_through_a_threshold() -> None:
    """Found by review: NVC750 joined every threshold group of its test, failing each node."""
    threshold = '- {test: nccl-all-reduce, scope: intra-node, at: 1GiB, busbw: ">= 300 GB/s"}\n'
    site = parse(site_yaml(thresholds=threshold))[0]
    named = run(
        bw("g0", ("gpu-1",), 1),
        bw("g1", ("gpu-2",), 1),
        stage="node",
        scope="intra-node",
        failed_nodes=(FailedNode(name="prod-control-plane-1", reason="HardwareFailureDetected"),),
    )
    verdicts = judge(site, RunSet((named,)))
    assert {n.node: n.status for n in verdicts.nodes} == {"gpu-1": "cleared", "gpu-2": "cleared"}
    assert verdicts.word is Word.FAIL  # the run that named it fails


def test_a_single_group_without_named_members_is_the_stage_pool() -> None:
    """NVCRE full-scale: the Workflow names no members; the group is the pool less exclusions."""
    whole = run(bw("g0", (), 1), stage="inter-node-stage")
    assert statuses(whole) == {"gpu-1": "untested", "gpu-2": "untested"}  # no such stage
    found = judge_nodes(SITE, RunSet((run(bw("g0", (), 1), stage="fabric"),)), {}, 1)
    assert {n.node: n.status for n in found} == {"gpu-1": "cleared", "gpu-2": "cleared"}


def finding(code: str, word: Word, group: str = "", test: str = "nccl-all-reduce") -> Finding:
    return Finding(
        code=code, kind="unbound", word=word, stage="node", test=test, group=group, message="m"
    )


def single(test: str = "nccl-all-reduce", **fields: Any) -> RunResult:
    groups = (bw("g0", ("gpu-1",), 1), bw("g1", ("gpu-2",), 1))
    return run(*groups, stage="node", scope="intra-node", test=test, **fields)


def test_findings_count_against_their_group_whether_or_not_a_threshold_names_it() -> None:
    """Issue #31: gpu-2's log in gpu-1's slot (NVC730) never clears gpu-1."""
    foreign = [finding("NVC730", Word.FAIL, "g0", test="nccl-all-gather")]
    found = judge_nodes(SITE, RunSet((single("nccl-all-gather"),)), {}, 1, foreign)
    assert {n.node: n.status for n in found} == {"gpu-1": "failed", "gpu-2": "cleared"}
    assert found[0].reasons == ("failed alone in node / nccl-all-gather g0: NVC730: group g0: m",)
    copied = [finding("NVC740", Word.INCOMPLETE, "g1")]
    found = judge_nodes(SITE, RunSet((single(),)), {}, 1, copied)
    assert {n.node: (n.status, n.word) for n in found} == {
        "gpu-2": ("untested", Word.INCOMPLETE),
        "gpu-1": ("cleared", Word.PASS),
    }
    assert found[0].reasons == ("incomplete in node / nccl-all-reduce g1: NVC740: group g1: m",)
    notes = [finding("NVC739", Word.PASS, "g1")]
    assert judge_nodes(SITE, RunSet((single(),)), {}, 1, notes)[1].status == "cleared"


def test_a_finding_about_the_whole_run_holds_every_node_it_would_have_cleared() -> None:
    whole = [finding("NVC742", Word.INCOMPLETE)]
    found = judge_nodes(SITE, RunSet((single(),)), {}, 1, whole)
    assert {n.node: n.status for n in found} == {"gpu-1": "untested", "gpu-2": "untested"}
    dcgm = run(stage="node", test="dcgm-l1", succeeded_nodes=("gpu-1", "gpu-2"))
    about = [finding("NVC742", Word.INCOMPLETE, test="dcgm-l1")]
    found = judge_nodes(SITE, RunSet((dcgm,)), {}, 1, about)
    assert {n.node: n.status for n in found} == {"gpu-1": "untested", "gpu-2": "untested"}
    assert found[0].reasons == ("incomplete in node / dcgm-l1: NVC742: m",)


def test_an_unfinished_group_holds_back_a_node_another_test_passed() -> None:
    """A node cleared by one test is not cleared while another test's group is incomplete."""
    passed = single("nccl-all-gather")
    pending = run(
        bw("g0", ("gpu-1",), 1, finality=Finality.PROVISIONAL, reason="Measuring"),
        bw("g1", ("gpu-2",), 1),
        stage="node",
        scope="intra-node",
    )
    assert statuses(passed, pending) == {"gpu-1": "untested", "gpu-2": "cleared"}
    again = run(bw("g2", ("gpu-1",), 1), stage="node", scope="intra-node")
    both = pending.model_copy(update={"bandwidth": (*pending.bandwidth, *again.bandwidth)})
    assert statuses(passed, both) == {"gpu-1": "cleared", "gpu-2": "cleared"}  # passed g2


def test_a_selector_pool_stage_names_nodes_checked_as_node_names_only() -> None:
    """A selector pool names no node: its runs' names are checked as node names only."""
    pools = POOL.replace("nodes: [gpu-1, gpu-2]", "selector: {pool: h100}\n  nodeCount: 2")
    selector = parse(site_yaml(pools=pools))[0]
    named = run(
        bw("g0", ("gpu-7", "gpu-8"), 1), failed_nodes=(FailedNode(name="Bad_Name", reason="X"),)
    )
    found = judge_nodes(selector, RunSet((named,)), {}, 1)
    assert {n.node: n.status for n in found} == {"gpu-7": "cleared", "gpu-8": "cleared"}
    (refused,) = refused_nodes(selector, RunSet((named,)))
    assert "'Bad_Name' is not a node name" in refused.message


UNJUDGED = FailedNode(
    name="gpu-1",
    reason="NodeHealthUnjudged",
    message="NVC825 node gpu-1: Xid events not judged: dmesg was refused",
)


def health(**fields: Any) -> RunResult:
    base: dict[str, Any] = {"stage": "node", "scope": "intra-node", "test": "node-health"}
    return RunResult(**(base | {"state": RunState.IN_PROGRESS} | fields))


def test_a_node_a_check_of_which_was_not_judged_is_never_cleared_by_other_passes() -> None:
    passed = run(bw("g0", ("gpu-1", "gpu-2"), 1))  # both pass the fabric test
    unjudged = health(unjudged_nodes=(UNJUDGED,), succeeded_nodes=("gpu-2",))
    assert statuses(passed) == {"gpu-1": "cleared", "gpu-2": "cleared"}
    found = judge_nodes(SITE, RunSet((passed, unjudged)), {}, 1)
    assert {n.node: n.status for n in found} == {"gpu-1": "untested", "gpu-2": "cleared"}
    (node,) = (n for n in found if n.node == "gpu-1")
    assert node.word is Word.INCOMPLETE
    assert node.reasons == (f"not judged in node / node-health: {UNJUDGED.message}",)
    assert [(r.test, r.word) for r in node.runs] == [
        ("nccl-all-reduce", Word.PASS),
        ("node-health", Word.INCOMPLETE),
    ]


def test_a_node_failed_elsewhere_stays_failed_when_a_check_of_it_was_not_judged() -> None:
    failed = health(
        test="dcgm-l1", failed_nodes=(FailedNode(name="gpu-1", reason="DiagnosticFailed"),)
    )
    assert statuses(failed, health(unjudged_nodes=(UNJUDGED,)))["gpu-1"] == "failed"


def test_a_failed_run_whose_groups_were_not_measured_fails_its_threshold() -> None:
    """Found by review: with groups named, a failed run's threshold read incomplete."""
    threshold = '- {test: nccl-all-reduce, scope: intra-node, at: 1GiB, busbw: ">= 300 GB/s"}\n'
    site = parse(site_yaml(thresholds=threshold))[0]
    groups = (PlannedGroup(name="g0", nodes=("gpu-1",)), PlannedGroup(name="g1", nodes=("gpu-2",)))
    for state, word in ((RunState.FAILED, Word.FAIL), (RunState.SUCCEEDED, Word.INCOMPLETE)):
        failed = run(
            stage="node", scope="intra-node", state=state, reason="JobFailed", groups=groups
        )
        (verdict,) = judge(site, RunSet((failed,))).thresholds
        assert [(g.group, g.word) for g in verdict.groups] == [("g0", word), ("g1", word)]


def test_an_unnamed_intra_node_group_clears_no_node() -> None:
    """Found by review: one measurement without nodes in an intra-node run cleared the pool."""
    alone = run(bw("g0", (), 1), stage="node", scope="intra-node")
    found = judge_nodes(SITE, RunSet((alone,)), {}, 1)
    assert {n.node: n.status for n in found} == {"gpu-1": "untested", "gpu-2": "untested"}
    spanning = run(bw("g0", (), 1), stage="fabric", scope="inter-node")
    found = judge_nodes(SITE, RunSet((spanning,)), {}, 1)
    assert {n.node: n.status for n in found} == {"gpu-1": "cleared", "gpu-2": "cleared"}
