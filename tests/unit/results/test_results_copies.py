"""Issue #31: one log is evidence for one run at most, and a copied round proves nothing."""

from __future__ import annotations

from typing import Any

from sitefactory import catalog, parse, site_yaml, units_of

from nvcregen.results.copies import SIZES, copies
from nvcregen.results.examine import examine
from nvcregen.results.logrecords import LogRecord
from nvcregen.results.models import (
    BandwidthMeasurement,
    BandwidthRow,
    Finality,
    ObjectRef,
    RunState,
)
from nvcregen.results.runs import RunResult, RunSet
from nvcregen.results.verdicts import judge
from nvcregen.results.words import Word

GIB = 1 << 30


def logged(name: str, group: str, round_: int, busbw: float = 465.0, **fields: Any) -> Any:
    rows = (BandwidthRow(size_bytes=GIB, bus_bw=busbw, alg_bw=busbw / 1.75, samples=1),)
    base: dict[str, Any] = {
        "ref": ObjectRef(kind="TrainJob", namespace="nvcre", name=name),
        "group": group,
        "iteration": round_,
        "finality": Finality.FINAL,
        "rows": rows,
        "from_log": True,
    }
    return BandwidthMeasurement(**(base | fields))


def run(*measured: BandwidthMeasurement, test: str = "nccl-all-reduce") -> RunResult:
    return RunResult(stage="node", scope="intra-node", test=test, bandwidth=measured)


def record(run_: str, sha256: str, kind: str = "nccl", **fields: Any) -> LogRecord:
    """What collect read of one log: its run, its sha256, its kind, how it ended."""
    base: dict[str, Any] = {
        "path": f"logs/nvcre/{run_}.log", "sha256": sha256, "kind": kind, "stage": "node",
        "test": "nccl-all-reduce", "run": run_, "round": 1, "group": "", "status": "ok",
    }  # fmt: skip
    return LogRecord(**(base | fields))


def logs(sums: dict[str, str]) -> list[LogRecord]:
    """The NCCL launcher logs of some runs, by their sha256."""
    return [record(run_, sha256) for run_, sha256 in sums.items()]


def found(*runs: RunResult, digests: dict[str, str] | None = None) -> list[Any]:
    return [(f.code, f.group, f.round) for f in copies(RunSet(runs), logs(digests or {}))]


def test_a_log_saved_as_another_groups_run_makes_both_incomplete_naming_the_other() -> None:
    same = logs({"a-r1-g0": "ab", "a-r1-g1": "ab"})
    mine, theirs = logged("a-r1-g0", "g0", 1, 465.0), logged("a-r1-g1", "g1", 1, 470.0)
    result = copies(RunSet((run(mine, theirs),)), same)  # same bytes, figures aside
    assert [(f.code, f.kind, f.word, f.group) for f in result] == [
        ("NVC740", "unbound", Word.INCOMPLETE, "g0"),
        ("NVC740", "unbound", Word.INCOMPLETE, "g1"),
    ]
    assert result[0].message == (
        "the same evidence as g1 round 1 (a-r1-g1), byte for byte: one log is evidence for one"
        " run at most"
    )
    assert result[0].source == "a-r1-g0"
    other = run(logged("b-r1-g0", "g0", 1), test="nccl-all-gather")
    (gather, reduce) = copies(RunSet((run(logged("a-r1-g0", "g0", 1)), other)))
    assert gather.message.startswith("the same evidence as node/nccl-all-reduce g0 round 1")
    assert reduce.message.startswith(
        "the same evidence as node/nccl-all-gather g0 round 1 (b-r1-g0), figure for figure"
    )


def test_rounds_of_one_group_that_repeat_are_a_copied_round() -> None:
    rounds = run(logged("a-r1-g0", "g0", 1), logged("a-r2-g0", "g0", 2), logged("a-r3-g0", "g0", 3))
    assert found(rounds) == [("NVC741", "g0", 1), ("NVC741", "g0", 2), ("NVC741", "g0", 3)]
    (one, *_) = copies(RunSet((rounds,)))
    assert (one.kind, one.word) == ("anomaly", Word.INCOMPLETE)
    assert one.message == (
        "the same as g0 round 2 (a-r2-g0), figure for figure; g0 round 3 (a-r3-g0), figure for"
        " figure: a copied round proves nothing"
    )
    hosts_edited = logs({f"a-r{r}-g0": f"sum{r}" for r in (1, 2, 3)})  # other bytes
    assert copies(RunSet((rounds,)), hosts_edited)[0].message == one.message
    apart = run(logged("a-r1-g0", "g0", 1, 465.0), logged("a-r2-g0", "g0", 2, 465.01))
    assert found(apart) == []  # a hundredth of a GB/s apart: two runs
    mixed = run(logged("a-r1-g0", "g0", 1), logged("a-r2-g0", "g0", 2), logged("a-r1-g1", "g1", 1))
    assert {code for code, _, _ in found(mixed)} == {"NVC740"}  # another group has it too


def test_every_node_with_the_same_figures_names_three_and_counts_the_rest() -> None:
    nodes = run(*(logged(f"a-r1-g{i}", f"g{i}", 1) for i in range(6)))
    result = copies(RunSet((nodes,)))
    assert [f.code for f in result] == ["NVC740"] * 6
    assert result[0].message.endswith(
        "g3 round 1 (a-r1-g3), figure for figure and 2 more: one log is evidence for one run"
        " at most"
    )


def test_only_final_rounds_read_from_logs_are_compared() -> None:
    digests = {"a-r1-g0": "e3b0", "a-r1-g1": "e3b0"}  # two empty logs
    empty: dict[str, Any] = {"rows": (), "finality": Finality.PROVISIONAL}
    assert found(run(logged("a-r1-g0", "g0", 1, **empty), logged("a-r1-g1", "g1", 1, **empty)),
                 digests=digests) == []  # fmt: skip
    nvcre: dict[str, Any] = {"from_log": False}
    assert (
        found(run(logged("a-r1-g0", "g0", 1, **nvcre), logged("a-r1-g1", "g1", 1, **nvcre))) == []
    )
    no_rows: dict[str, Any] = {"rows": ()}
    assert (
        found(run(logged("a-r1-g0", "g0", 1, **no_rows), logged("a-r1-g1", "g1", 1, **no_rows)))
        == []
    )
    assert found(
        run(logged("a-r1-g0", "g0", 1, **no_rows), logged("a-r1-g1", "g1", 1, **no_rows)),
        digests=digests,
    ) == [("NVC740", "g0", 1), ("NVC740", "g1", 1)]  # the same bytes, even without a table


def per_node(run_: str, sha256: str, node: str, round_: int = 1, **fields: Any) -> LogRecord:
    """A DCGM Job's log on one node (group `n<index>`), naming its node (its begin line)."""
    group = f"n{node[-1]}"
    fields.setdefault("hosts", (node,))
    return record(run_, sha256, "dcgm", test="dcgm-l1", group=group, round=round_,
                  nodes=(node,), **fields)  # fmt: skip


def test_dcgm_logs_of_an_older_render_that_name_no_node_are_not_compared() -> None:
    """Found by review: their JSON names no host or time, so honest ones can be alike."""
    older = [per_node(f"d-r1-n{i}", "ab", f"gpu-{i}", hosts=()) for i in (0, 1)]
    assert copies(RunSet(()), older) == []


def test_one_dcgm_log_for_two_nodes_names_each_node_and_the_other() -> None:
    both = [per_node("d-r1-n0", "ab", "gpu-0"), per_node("d-r1-n1", "ab", "gpu-1")]
    result = copies(RunSet(()), both)
    assert [(f.code, f.kind, f.word, f.group, f.nodes, f.source) for f in result] == [
        ("NVC740", "unbound", Word.INCOMPLETE, "n0", ("gpu-0",), "d-r1-n0"),
        ("NVC740", "unbound", Word.INCOMPLETE, "n1", ("gpu-1",), "d-r1-n1"),
    ]
    assert result[0].message == (
        "the same evidence as n1 round 1 (d-r1-n1), byte for byte: one log is evidence for one"
        " run at most"
    )
    apart = [per_node("d-r1-n0", "ab", "gpu-0"), per_node("d-r1-n1", "ac", "gpu-1")]
    assert copies(RunSet(()), apart) == []
    rounds = [per_node(f"d-r{r}-n0", "ab", "gpu-0", r) for r in (1, 2)]
    assert [(f.code, f.round) for f in copies(RunSet(()), rounds)] == [
        ("NVC741", 1),
        ("NVC741", 2),
    ]
    other_test = [per_node("d-r1-n0", "ab", "gpu-0"), record("h-n0", "ab", "node", test="health",
                                                             hosts=("gpu-0",))]  # fmt: skip
    assert [(f.code, f.test, f.nodes) for f in copies(RunSet(()), other_test)] == [
        ("NVC740", "dcgm-l1", ("gpu-0",)),
        ("NVC740", "health", ("gpu-0",)),  # node-health names its node from its log
    ]


def test_node_health_logs_of_two_nodes_in_no_group_are_evidence_for_two_runs() -> None:
    """NVCRE mode's node-health logs have no group: the same bytes on two nodes is NVC740."""
    two = [record(f"h-{n}", "ab", "node", test="health", nodes=(n,)) for n in ("gpu-1", "gpu-2")]
    assert [(f.code, f.group, f.nodes) for f in copies(RunSet(()), two)] == [
        ("NVC740", "", ("gpu-1",)),
        ("NVC740", "", ("gpu-2",)),
    ]
    assert copies(RunSet(()), two)[0].message.startswith("the same evidence as gpu-2 round 1")


def test_failed_truncated_and_empty_per_node_logs_are_not_compared() -> None:
    for status in ("failed", "truncated", "no-data", "disordered"):
        logs_ = [per_node(f"d-r1-n{i}", "e3b0", f"gpu-{i}", status=status) for i in (0, 1)]
        assert copies(RunSet(()), logs_) == [], status
    failed_jobs = [per_node(f"d-r1-n{i}", "e3b0", f"gpu-{i}", job_failed=True) for i in (0, 1)]
    assert copies(RunSet(()), failed_jobs) == []


def test_an_nccl_logs_digest_counts_for_the_round_of_its_own_namespace() -> None:
    rounds = run(logged("a-r1-g0", "g0", 1, 465.0), logged("a-r1-g1", "g1", 1, 470.0))
    same = [record("a-r1-g0", "ab"), record("a-r1-g1", "ab", path="logs/other/a-r1-g1.log")]
    assert copies(RunSet((rounds,)), same) == []
    assert len(copies(RunSet((rounds,)), logs({"a-r1-g0": "ab", "a-r1-g1": "ab"}))) == 2


def sweep(sizes: int, busbw: float = 400.0) -> tuple[BandwidthRow, ...]:
    """An NVCRE table of `sizes` sizes from 1 GiB up."""
    return tuple(
        BandwidthRow(size_bytes=GIB << i, bus_bw=busbw + i, alg_bw=(busbw + i) / 1.75, samples=1)
        for i in range(sizes)
    )


def test_nvcre_rounds_with_every_figure_the_same_are_copies_from_two_sizes() -> None:
    """The reviewer's r6: 2 nodes x 3 rounds of one NVCRE table passed."""
    assert SIZES == 2
    nvcre: dict[str, Any] = {"from_log": False, "rows": sweep(SIZES)}
    rounds = [logged(f"{g}-{r}", g, r, **nvcre) for g in ("g0", "g1") for r in (1, 2, 3)]
    result = copies(RunSet((run(*rounds),)))
    assert [(f.code, f.group, f.round) for f in result] == [
        ("NVC740", g, r) for g in ("g0", "g1") for r in (1, 2, 3)
    ]
    assert result[0].message.startswith("the same evidence as g0 round 2 (g0-2), figure for figure")
    own = [logged(f"g0-{r}", "g0", r, **nvcre) for r in (1, 2)]
    assert [f.code for f in copies(RunSet((run(*own),)))] == ["NVC741", "NVC741"]
    one_size: dict[str, Any] = {"from_log": False, "rows": sweep(SIZES - 1)}
    alike = [logged(f"{g}-1", g, 1, **one_size) for g in ("g0", "g1")]
    assert copies(RunSet((run(*alike),))) == []  # one figure can repeat by chance
    apart = [logged("g0-1", "g0", 1, from_log=False, rows=sweep(30, 400.0)),
             logged("g1-1", "g1", 1, from_log=False, rows=sweep(30, 400.01))]  # fmt: skip
    assert copies(RunSet((run(*apart),))) == []
    provisional = [logged(f"{g}-1", g, 1, finality=Finality.PROVISIONAL, **nvcre) for g in "ab"]
    assert copies(RunSet((run(*provisional),))) == []


def test_nvcre_nodes_whose_rounds_repeat_every_figure_are_not_cleared() -> None:
    """r6 through `examine` and `judge`: an intra-node NVCRE run, 2 nodes x 3 rounds alike."""
    text = site_yaml(rounds=3)
    site, units = parse(text)[0], units_of(text)
    rows = sweep(SIZES)
    measured = [
        logged(f"{g}-{r}", g, r, from_log=False, nodes=(node,), rows=rows,
               ref=ObjectRef(kind="BandwidthMeasurement", name=f"{g}-{r}"))
        for g, node in (("g0", "gpu-1"), ("g1", "gpu-2"))
        for r in (1, 2, 3)
    ]  # fmt: skip
    single = RunResult(stage="node", scope="intra-node", test="nccl-all-reduce",
                       state=RunState.SUCCEEDED, bandwidth=tuple(measured),
                       source=ObjectRef(kind="Certification", name="c"))  # fmt: skip
    runs = RunSet((single,))
    found = examine(units, catalog(), runs)
    assert {f.code for f in found if f.word is not Word.PASS} == {"NVC740"}
    verdicts = judge(site, runs, found)
    assert verdicts.word is Word.INCOMPLETE
    assert {n.node: n.status for n in verdicts.nodes} == {"gpu-1": "untested", "gpu-2": "untested"}
