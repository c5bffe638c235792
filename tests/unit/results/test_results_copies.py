"""Issue #31: one log is evidence for one run at most, and a copied round proves nothing."""

from __future__ import annotations

from typing import Any

from nvcregen.results.copies import copies, log_digests
from nvcregen.results.logrecords import LogRecord
from nvcregen.results.models import (
    BandwidthMeasurement,
    BandwidthRow,
    Finality,
    ObjectRef,
)
from nvcregen.results.runs import RunResult, RunSet
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


def found(*runs: RunResult, digests: dict[tuple[str, str], str] | None = None) -> list[Any]:
    return [(f.code, f.group, f.round) for f in copies(RunSet(runs), digests or {})]


def test_a_log_saved_as_another_groups_run_makes_both_incomplete_naming_the_other() -> None:
    same = {("nvcre", "a-r1-g0"): "ab", ("nvcre", "a-r1-g1"): "ab"}
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
    (gather, reduce) = copies(RunSet((run(logged("a-r1-g0", "g0", 1)), other)), {})
    assert gather.message.startswith("the same evidence as node/nccl-all-reduce g0 round 1")
    assert reduce.message.startswith(
        "the same evidence as node/nccl-all-gather g0 round 1 (b-r1-g0), figure for figure"
    )


def test_rounds_of_one_group_that_repeat_are_a_copied_round() -> None:
    rounds = run(logged("a-r1-g0", "g0", 1), logged("a-r2-g0", "g0", 2), logged("a-r3-g0", "g0", 3))
    assert found(rounds) == [("NVC741", "g0", 1), ("NVC741", "g0", 2), ("NVC741", "g0", 3)]
    (one, *_) = copies(RunSet((rounds,)), {})
    assert (one.kind, one.word) == ("anomaly", Word.INCOMPLETE)
    assert one.message == (
        "the same as g0 round 2 (a-r2-g0), figure for figure; g0 round 3 (a-r3-g0), figure for"
        " figure: a copied round proves nothing"
    )
    hosts_edited = {("nvcre", f"a-r{r}-g0"): f"sum{r}" for r in (1, 2, 3)}  # other bytes
    assert copies(RunSet((rounds,)), hosts_edited)[0].message == one.message
    apart = run(logged("a-r1-g0", "g0", 1, 465.0), logged("a-r2-g0", "g0", 2, 465.01))
    assert found(apart) == []  # a hundredth of a GB/s apart: two runs
    mixed = run(logged("a-r1-g0", "g0", 1), logged("a-r2-g0", "g0", 2), logged("a-r1-g1", "g1", 1))
    assert {code for code, _, _ in found(mixed)} == {"NVC740"}  # another group has it too


def test_every_node_with_the_same_figures_names_three_and_counts_the_rest() -> None:
    nodes = run(*(logged(f"a-r1-g{i}", f"g{i}", 1) for i in range(6)))
    result = copies(RunSet((nodes,)), {})
    assert [f.code for f in result] == ["NVC740"] * 6
    assert result[0].message.endswith(
        "g3 round 1 (a-r1-g3), figure for figure and 2 more: one log is evidence for one run"
        " at most"
    )


def test_only_final_rounds_read_from_logs_are_compared() -> None:
    digests = {("nvcre", "a-r1-g0"): "e3b0", ("nvcre", "a-r1-g1"): "e3b0"}  # two empty logs
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


def test_log_digests_are_keyed_as_a_rounds_ref_names_its_run() -> None:
    record = LogRecord(
        path="logs/nvcre/a-r1-g0-launcher-0-0-x1y2z.log", sha256="ab", kind="nccl",
        stage="node", test="nccl-all-reduce", run="a-r1-g0", round=1, group="g0",
        status="ok",
    )  # fmt: skip
    assert log_digests([record]) == {("nvcre", "a-r1-g0"): "ab"}
