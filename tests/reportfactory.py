"""Results archives for the report tests, written with the layout `nvcregen collect` documents.

`nvcregen/results/archive.py` documents the folder (objects/, summary.json,
bandwidth.csv, verdicts.json, provenance.json, SHA256SUMS); these builders write it
directly, without collect's code, with the archive's one model
(`nvcregen/results/archivemodel.py`), so the report is tested against the file contract.
The builders return plain data (as the files hold it) for tests to change before
`sample_run` writes it; what they change is read back through the model.
`sample_run` is a failing two-node run with everything the page shows: rounds over IB
and one over Socket (a transport failure), a provisional round, an algbw threshold,
excluded and failed nodes, goodput, and names that need escaping.
"""

from __future__ import annotations

import csv
import hashlib
import importlib.util
import io
from pathlib import Path
from typing import Any

from nvcregen.results.archivemodel import (
    BANDWIDTH_COLUMNS,
    BandwidthCsvRow,
    ImageRecord,
    ProvenanceFile,
    SiteRef,
    SummaryFile,
    file_text,
)
from nvcregen.results.figures import Figure
from nvcregen.results.gate import Transport
from nvcregen.results.models import (
    BandwidthMeasurement,
    FailedNode,
    Finality,
    GoodputComponents,
    GoodputMeasurement,
    ObjectRef,
)
from nvcregen.results.runs import RunResult
from nvcregen.results.verdicts import GroupVerdict, RunVerdict, ThresholdVerdict, Verdicts
from nvcregen.results.words import Reason

ROOT = Path(__file__).resolve().parent.parent
MIB, GIB = 1 << 20, 1 << 30
SIZES = (MIB, 64 * MIB, GIB)
Obj = dict[str, Any]
NASTY = "<script>alert('x')</script> | *bold* _it_ `code`"
SAMPLE_ID = "20261014T130100Z-0123456789ab"


def bw_rows(
    group: str,
    rnd: int,
    busbw: tuple[float, ...],
    *,
    finality: str = "final",
    reason: str = "JobSucceeded",
    transport: str = "IB",
    stage: str = "two-node",
    test: str = "nccl-all-reduce",
) -> list[dict[str, object]]:
    """bandwidth.csv rows of one round: one per size of SIZES (algbw = busbw / 1.875),
    each by its column as collect writes it."""
    rows = [
        BandwidthCsvRow(
            stage=stage,
            scope="inter-node" if stage == "two-node" else "intra-node",
            test=test,
            group=group,
            round=rnd,
            measurement=f"{test}-{group}-{rnd}-job-bw",
            finality=finality,
            reason=reason,
            size_bytes=size,
            algbw=value / 1.875,
            busbw=value,
            samples=10,
            transports=(transport,),
        )
        for size, value in zip(SIZES, busbw, strict=True)
    ]
    return [dict(zip(BANDWIDTH_COLUMNS, row.cells(), strict=True)) for row in rows]


def reason(code: str, word: str, message: str) -> Reason:
    """A verdict reason."""
    return Reason.model_validate({"code": code, "word": word, "message": message})


def figure(name: str, rounds: list[float], median: float, unit: str = "GB/s") -> Figure:
    """A figure over rounds."""
    spread = (max(rounds) - min(rounds)) / median
    return Figure(name=name, unit=unit, rounds=tuple(rounds), median=median, spread=spread)


def group(word: str, reasons: list[Reason], figures: list[Figure], seen: list[str]) -> GroupVerdict:
    """One group's verdict over three rounds of nodes a and b."""
    return GroupVerdict.model_validate(
        {
            "group": "group-0",
            "nodes": ("node-a", "node-b"),
            "word": word,
            "reasons": tuple(reasons),
            "rounds": 3,
            "final_rounds": 2,
            "figures": tuple(figures),
            "transport": Transport(expected="IB", seen=tuple(seen), checked=bool(seen)),
        }
    )


def threshold(
    index: int,
    field: str,
    comparison: str,
    bound: float,
    at: str | None,
    word: str,
    groups: list[GroupVerdict],
) -> ThresholdVerdict:
    """One threshold verdict of the two-node stage."""
    return ThresholdVerdict.model_validate(
        {
            "threshold": index,
            "test": "training-goodput" if field == "goodput" else "nccl-all-reduce",
            "scope": "inter-node",
            "stage": "two-node",
            "field": field,
            "comparison": comparison,
            "bound": bound,
            "unit": "" if field == "goodput" else "GB/s",
            "at": at,
            "size_bytes": {"1GiB": GIB, "64MiB": 64 * MIB}.get(at or ""),
            "word": word,
            "reasons": tuple(r for g in groups for r in g.reasons if r.word != "pass"),
            "groups": tuple(groups),
        }
    )


def sample_verdicts() -> Obj:
    """verdicts.json of the sample run: busbw and algbw fail on transport, goodput passes."""
    transport = reason("transport", "fail", "expected IB (RDMA), but the rounds ran over Socket")
    busbw = figure("busbw", [363.76, 427.58], 395.67)
    algbw = figure("algbw", [155.2, 160.0], 157.6)
    good = figure("goodput", [0.942373, 0.95], 0.9461865, unit="")
    run = {"stage": "two-node", "scope": "inter-node", "test": "nccl-all-reduce",
           "source": "lab-two-node-0002", "state": "failed", "word": "fail",
           "reasons": (reason("failed-node", "fail", f"node-<b>: {NASTY}"),)}  # fmt: skip
    verdicts = Verdicts.model_validate({
        "word": "fail",
        "thresholds": (
            threshold(1, "busbw", ">= 2880 Gb/s", 360.0, "1GiB", "fail",
                      [group("fail", [transport], [busbw, algbw], ["IB", "Socket"])]),
            threshold(2, "algbw", ">= 150 GB/s", 150.0, "64MiB", "fail",
                      [group("fail", [transport], [busbw, algbw], ["IB", "Socket"])]),
            threshold(3, "goodput", ">= 0.9", 0.9, None, "pass",
                      [group("pass", [reason("met", "pass", "goodput 0.9462")], [good], [])]),
        ),
        "runs": (RunVerdict.model_validate(run),),
    })  # fmt: skip
    return verdicts.model_dump(mode="json")


def sample_summary() -> Obj:
    """summary.json of the sample run."""
    gp = tuple(
        GoodputMeasurement.model_validate(
            {"group": "group-0", "iteration": i, "finality": f, "reason": r, "ratio": ratio,
             "components": GoodputComponents(training=1000.0, lost_work=20.0, resume=10.0,
                                             reschedule=0.0, checkpoint_save=save),
             "avg_step_time_sec": 1.95, "avg_tflops_per_gpu": 295.0, "interruptions": 1}
        )
        for i, f, r, ratio, save in (
            (1, "final", "JobSucceeded", 0.942373, 27.627),
            (2, "final", "JobSucceeded", 0.95, 20.0),
            (3, "provisional", "Measuring", None, None),
        )
    )  # fmt: skip
    run = RunResult.model_validate(
        {
            "stage": "two-node",
            "scope": "inter-node",
            "test": "nccl-all-reduce",
            "expected_transport": "IB",
            "state": "failed",
            "excluded_nodes": ("node-c",),
            "exclusion_reason": "NodeNotReady: <taint> & cordoned",
            "failed_nodes": (
                FailedNode(name="node-<b>", reason="ThresholdViolation", message=NASTY),
            ),
        }
    )
    training = RunResult.model_validate(
        {"stage": "two-node", "scope": "inter-node", "test": "training-goodput",
         "expected_transport": "IB", "state": "succeeded", "goodput": gp}
    )  # fmt: skip
    summary = SummaryFile.model_validate(
        {
            "site": "edge-lab",
            "run_id": SAMPLE_ID,
            "verdict": "fail",
            "counts": {"pass": 1, "incomplete": 0, "fail": 3},
            "collected_from": "folder export",
            "runs": (run, training),
            "notes": ("the cluster serves no ReportExport (its CRD is not installed)",),
        }
    )
    return summary.model_dump(mode="json")


def sample_provenance() -> Obj:
    """provenance.json of the sample run."""
    image = "nvcr.io/nvidia/pytorch:26.01-py3@sha256:" + "4c" * 32
    provenance = ProvenanceFile(
        site=SiteRef(name="edge-lab", file="sites/edge-lab.yaml", sha256="ab" * 32),
        nvcregen="0.1.0",
        collected_from="folder export",
        images=(ImageRecord(image=image, digest="sha256:" + "4c" * 32),),
        nccl_versions=("2.27.3",),
    )
    return provenance.model_dump(mode="json")


def sample_rows() -> list[dict[str, object]]:
    """bandwidth.csv of the sample: rounds 1 and 2 over IB (2 final), round 3 over Socket."""
    return [
        *bw_rows("group-0", 1, (36.38, 291.01, 363.76)),
        *bw_rows("group-0", 2, (42.76, 342.06, 427.58)),
        *bw_rows("group-0", 4, (40.0, 300.0, 410.0), finality="provisional", reason="Measuring"),
        *bw_rows("group-0", 3, (0.3, 2.0, 2.25), transport="Socket"),
    ]


def csv_text(rows: list[dict[str, object]]) -> str:
    """bandwidth.csv text, as collect writes it (rows changed by a test, by their column)."""
    out = io.StringIO()
    writer = csv.DictWriter(out, BANDWIDTH_COLUMNS, lineterminator="\n")  # collect's dialect
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


def write_run(folder: Path, files: dict[str, str]) -> Path:
    """Write a run folder's files and its SHA256SUMS (sha256sum -c format, sorted)."""
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, encoding="utf-8")
    lines = [f"{hashlib.sha256((folder / n).read_bytes()).hexdigest()}  {n}" for n in sorted(files)]
    (folder / "SHA256SUMS").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def sample_files(**changes: Any) -> dict[str, str]:
    """The sample run's files; keyword arguments replace summary, verdicts, provenance or rows."""
    parts = {
        "summary": sample_summary(),
        "verdicts": sample_verdicts(),
        "provenance": sample_provenance(),
        "rows": sample_rows(),
    } | changes
    return {
        "objects/certification/nvcre/lab-two-node-0002.yaml": "kind: Certification\n",
        "summary.json": file_text(SummaryFile.model_validate(parts["summary"])),
        "verdicts.json": file_text(Verdicts.model_validate(parts["verdicts"])),
        "provenance.json": file_text(ProvenanceFile.model_validate(parts["provenance"])),
        "bandwidth.csv": csv_text(parts["rows"]),
    }


def sample_run(results: Path, run_id: str = SAMPLE_ID, **changes: Any) -> Path:
    """Write the sample run as results/edge-lab/<run_id>/ and return its folder.

    Its summary.json names `run_id`, as collect writes it, unless `summary` names another
    than the sample's.
    """
    summary = changes.get("summary", sample_summary())
    if summary.get("run_id") == SAMPLE_ID:
        changes["summary"] = summary | {"run_id": run_id}
    return write_run(results / "edge-lab" / run_id, sample_files(**changes))


def groups_run(
    results: Path,
    run_id: str,
    finished: str | None,
    groups: dict[tuple[str, ...], tuple[float, ...]],
) -> Path:
    """A run of the two-node all-reduce whose groups (by their nodes) had these final 1 GiB
    bus bandwidths, one per round, over IB; summary.json names each measurement's nodes.
    """
    rows: list[dict[str, object]] = []
    rounds: list[Obj] = []
    for index, (nodes, busbw) in enumerate(groups.items()):
        name = f"group-{index}"
        for n, value in enumerate(busbw, 1):
            found = bw_rows(name, n, (value / 10, value / 2, value))
            rows += found
            ref = ObjectRef(kind="BandwidthMeasurement", name=str(found[0]["measurement"]))
            measured = BandwidthMeasurement(
                ref=ref, group=name, nodes=nodes, iteration=n, finality=Finality.FINAL
            )
            rounds.append(measured.model_dump(mode="json"))
    summary = sample_summary() | {"run_id": run_id, "finished_at": finished}
    summary["runs"][0]["bandwidth"] = rounds
    return sample_run(results, run_id, rows=rows, summary=summary)


def lab_module() -> Any:
    """collect's own fixture (tests/unit/collect/labstate.py): the lab site's cluster state."""
    path = ROOT / "tests" / "unit" / "collect" / "labstate.py"
    spec = importlib.util.spec_from_file_location("labstate_for_report", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


FLEET_FAILED = tuple(f"gpu-{i:04d}" for i in range(100, 140))  # 40 below the threshold
FLEET_SUSPECT = ("gpu-0512", "gpu-0777")  # their pair's other node failed nothing


def fleet_run(
    results: Path,
    count: int = 1024,
    run_id: str = SAMPLE_ID,
    failed_nodes: tuple[str, ...] = FLEET_FAILED,
) -> Path:
    """A passed-looking intra-node run of `count` nodes `gpu-0000`..., one group per node.

    The nodes of `failed_nodes` (FLEET_FAILED) measure 300 GB/s against `busbw >= 420 GB/s`
    (the threshold fails, those nodes fail), FLEET_SUSPECT are held back as suspect, every
    other node measures 460 GB/s and is cleared. The run itself succeeded: verdicts.json words it
    `pass`, as collect words a run by its state, beside the failed threshold.
    """
    names = [f"gpu-{i:04d}" for i in range(count)]
    failed, suspect = set(failed_nodes), set(FLEET_SUSPECT) - set(failed_nodes)
    rows: list[dict[str, object]] = []
    groups: list[Obj] = []
    nodes: list[Obj] = []
    for name in names:
        value = 300.0 if name in failed else 460.0
        for rnd in (1, 2, 3):
            rows += bw_rows(name, rnd, (value / 10, value / 2, value), stage="single-node")
        word = "fail" if name in failed else "pass"
        why = (
            reason("below", "fail", f"{name}: busbw 300 GB/s < 420 GB/s")
            if word == "fail"
            else reason("met", "pass", "busbw 460 GB/s")
        )
        groups.append(
            {
                "group": name,
                "nodes": [name],
                "word": word,
                "reasons": [why],
                "rounds": 3,
                "final_rounds": 3,
                "figures": [figure("busbw", [value] * 3, value)],
                "transport": {"expected": None, "seen": [], "pinned": None, "checked": False},
            }
        )
        status = "failed" if name in failed else "suspect" if name in suspect else "cleared"
        node_word = {"failed": "fail", "suspect": "incomplete", "cleared": "pass"}[status]
        run = {
            "stage": "single-node",
            "scope": "intra-node",
            "test": "nccl-all-reduce",
            "group": name,
            "nodes": [name],
            "word": "incomplete" if status == "suspect" else word,
        }
        nodes.append(
            {
                "node": name,
                "status": status,
                "word": node_word,
                "reasons": [] if status == "cleared" else [f"{status} in single-node"],
                "runs": [run],
            }
        )
    bad = [g["reasons"][0] for g in groups if g["word"] != "pass"]
    verdicts = Verdicts.model_validate({
        "word": "fail",
        "thresholds": [{
            "threshold": 1, "test": "nccl-all-reduce", "scope": "intra-node",
            "stage": "single-node", "field": "busbw", "comparison": ">= 420 GB/s",
            "bound": 420.0, "unit": "GB/s", "at": "1GiB", "size_bytes": GIB, "word": "fail",
            "reasons": bad, "groups": groups,
        }],
        "runs": [{"stage": "single-node", "scope": "intra-node", "test": "nccl-all-reduce",
                  "source": "lab-single-node-0001", "state": "succeeded", "word": "pass",
                  "reasons": [reason("succeeded", "pass", "the run succeeded")]}],
        "exports": [],
        "nodes": nodes,
    })  # fmt: skip
    summary = SummaryFile.model_validate({
        "site": "edge-lab",
        "run_id": run_id,
        "verdict": "fail",
        "counts": {"pass": 1, "incomplete": 0, "fail": 1},
        "collected_from": "folder export",
        "runs": [{"stage": "single-node", "scope": "intra-node", "test": "nccl-all-reduce",
                  "expected_transport": None, "state": "succeeded",
                  "failed_nodes": [{"name": n, "reason": "ThresholdViolation"}
                                   for n in failed_nodes]}],
    })  # fmt: skip
    return sample_run(
        results,
        run_id,
        summary=summary.model_dump(mode="json"),
        verdicts=verdicts.model_dump(mode="json"),
        rows=rows,
    )


NodeGroups = dict[str, list[tuple[str, str, str]]]
"""Per node: the (stage, test, word) of each group that held it alone."""


def judged_run(
    site_folder: Path,
    run_id: str,
    finished: str,
    nodes: NodeGroups,
    *,
    site: str = "edge-lab",
    site_sha256: str = "ab" * 32,
    statuses: dict[str, str] | None = None,
) -> Path:
    """A run of intra-node tests judged node by node, as `site_folder/run_id`.

    Each node's groups (one node each) end with the word given; a node is `failed` when
    one fails, `untested` when one is incomplete or it has none, else `cleared` (unless
    `statuses` says otherwise).
    summary.json names every (stage, test) run and `finished` (its measurement time).
    """
    verdicts: list[Obj] = []
    tests: dict[tuple[str, str], None] = {}
    for node, groups in nodes.items():
        words = {word for _, _, word in groups}
        status = "failed" if "fail" in words else "untested" if words != {"pass"} else "cleared"
        status = (statuses or {}).get(node, status)
        runs = []
        for stage, test, word in groups:
            tests[(stage, test)] = None
            runs.append({"stage": stage, "scope": "intra-node", "test": test, "group": node,
                         "nodes": [node], "word": word, "why": word})  # fmt: skip
        verdicts.append({
            "node": node, "status": status,
            "word": {"failed": "fail", "untested": "incomplete"}.get(status, "pass"),
            "reasons": [f"{status} in this run"], "runs": runs,
        })  # fmt: skip
    word = "fail" if any(v["status"] == "failed" for v in verdicts) else "pass"
    summary = SummaryFile.model_validate({
        "site": site, "run_id": run_id, "finished_at": finished, "verdict": word,
        "collected_from": "folder export",
        "runs": [{"stage": s, "scope": "intra-node", "test": t, "state": "succeeded"}
                 for s, t in tests],
    })  # fmt: skip
    provenance = sample_provenance()
    provenance["site"] = SiteRef(name=site, file=f"sites/{site}.yaml", sha256=site_sha256)
    changes = {
        "summary": summary.model_dump(mode="json"),
        "verdicts": Verdicts.model_validate({"word": word, "nodes": verdicts}).model_dump(
            mode="json"
        ),
        "provenance": ProvenanceFile.model_validate(provenance).model_dump(mode="json"),
        "rows": [],
    }
    return write_run(site_folder / run_id, sample_files(**changes))
