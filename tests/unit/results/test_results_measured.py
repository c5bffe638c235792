"""Issue #31: a run with no readable final measurement clears no one (NVC742)."""

from __future__ import annotations

from typing import Any

from sitefactory import parse, site_yaml

from nvcregen.results.findings import first_lines
from nvcregen.results.measured import unmeasured
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

ROW = BandwidthRow(size_bytes=1 << 30, bus_bw=400.0, alg_bw=213.0, samples=1)
SITE = parse(site_yaml())[0]  # nodes gpu-1 and gpu-2


def bw(round_: int, rows: tuple[BandwidthRow, ...] = (ROW,), **fields: Any) -> Any:
    base: dict[str, Any] = {
        "ref": ObjectRef(kind="TrainJob", name=f"fabric-r{round_}-g0"),
        "group": "g0",
        "nodes": ("gpu-1", "gpu-2"),
        "iteration": round_,
        "finality": Finality.FINAL,
        "rows": rows,
    }
    return BandwidthMeasurement(**(base | fields))


def run(*measured: BandwidthMeasurement, state: RunState = RunState.SUCCEEDED) -> RunResult:
    return RunResult(
        stage="fabric", scope="inter-node", test="nccl-all-gather", state=state, bandwidth=measured
    )


def test_a_final_round_without_a_figure_is_incomplete() -> None:
    found = unmeasured(run(bw(1), bw(2, rows=())))
    assert [(f.code, f.kind, f.word, f.group, f.round) for f in found] == [
        ("NVC742", "unmeasured", Word.INCOMPLETE, "g0", 2)
    ]
    assert found[0].message == "final, but no bandwidth of its table could be read"
    assert unmeasured(run(bw(1), bw(2))) == []
    assert unmeasured(run(bw(1), bw(2, rows=(), finality=Finality.PROVISIONAL))) == []


def test_a_succeeded_run_with_no_readable_final_measurement_holds_its_nodes() -> None:
    empty = run(bw(1, rows=()))
    codes = [(f.code, f.group, f.round) for f in unmeasured(empty)]
    assert codes == [("NVC742", "g0", 1), ("NVC742", "", None)]
    (whole,) = unmeasured(run())
    assert whole.message == (
        "the run succeeded, but no round has a readable final measurement: nothing shows"
        " what it measured"
    )
    assert unmeasured(run(state=RunState.FAILED)) == []  # it fails already
    assert unmeasured(run(state=RunState.IN_PROGRESS)) == []  # incomplete already
    verdicts = judge(SITE, RunSet((empty,)), unmeasured(empty))
    assert verdicts.word == "incomplete"  # no threshold names all-gather: it passed before
    assert {n.node: n.status for n in verdicts.nodes} == {"gpu-1": "untested", "gpu-2": "untested"}
    assert first_lines(verdicts.findings)[1] == (
        "No measurement (NVC742), fabric/nccl-all-gather: the run succeeded, but no round has"
        " a readable final measurement: nothing shows what it measured"
    )
