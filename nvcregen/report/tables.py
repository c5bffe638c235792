"""The report's tables (pure): verdicts, runs, nodes, goodput and provenance, as plain text.

Both the HTML page and summary.md are written from these rows, so they always agree.
Numbers keep four significant digits; ratios are shown as percentages where the site
wrote them as ratios (spread).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from nvcregen.fabric.names import compress
from nvcregen.report.archive import ReadArchive
from nvcregen.results.findings import summarize_rounds
from nvcregen.results.models import GoodputMeasurement
from nvcregen.results.runs import RunResult
from nvcregen.results.verdicts import ThresholdVerdict
from nvcregen.results.words import Reason

NONE = "—"
_RANK = {"pass": 0, "incomplete": 1, "fail": 2}


@dataclass(frozen=True)
class ReasonText:
    """One reason of a verdict."""

    word: str
    message: str


@dataclass(frozen=True)
class VerdictRow:
    """One threshold comparison for one stage."""

    word: str
    test: str
    scope: str
    stage: str
    check: str
    transport: str
    medians: tuple[str, ...]
    reasons: tuple[ReasonText, ...]


@dataclass(frozen=True)
class RunRow:
    """One planned test of one stage, as NVCRE finished it."""

    word: str
    stage: str
    test: str
    source: str
    state: str
    reasons: tuple[ReasonText, ...]


@dataclass(frozen=True)
class NodeRow:
    """A node a run excluded, failed or could not judge, and why."""

    stage: str
    test: str
    node: str
    status: str
    reason: str


@dataclass(frozen=True)
class NodeLine:
    """A node's status, its verdict and why, for the opening of the report."""

    node: str
    status: str
    word: str
    why: str


@dataclass(frozen=True)
class GoodputTable:
    """The training rounds of one run: goodput, its components, and their medians."""

    stage: str
    test: str
    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    median: tuple[str, ...]


def number(value: float | None) -> str:
    """A number with four significant digits, or a dash."""
    return NONE if value is None else f"{value:.4g}"


def percent(value: float | None) -> str:
    """A ratio as a percentage with one decimal, or a dash."""
    return NONE if value is None else f"{value * 100:.1f}%"


def _reasons(reasons: Sequence[Reason]) -> tuple[ReasonText, ...]:
    return tuple(ReasonText(r.word, r.message or r.code) for r in reasons)


def verdict_rows(archive: ReadArchive) -> list[VerdictRow]:
    """Every threshold verdict, in the order verdicts.json lists them."""
    return [
        VerdictRow(
            word=t.word,
            test=t.test,
            scope=t.scope,
            stage=t.stage or NONE,
            check=check_text(t),
            transport=transport_text(t),
            medians=medians(t),
            reasons=_reasons(t.reasons),
        )
        for t in archive.verdicts.thresholds
    ]


def check_text(t: ThresholdVerdict) -> str:
    """What a threshold compares: `busbw >= 420 GB/s at 1GiB`, or the transport alone."""
    if t.field == "transport" or not t.comparison:
        return "transport only"
    text = f"{t.field} {t.comparison}"
    if t.field in {"busbw", "algbw"}:
        text += f" at {t.at}" if t.at else " at the best size"
    return text


def transport_text(t: ThresholdVerdict) -> str:
    """Expected and seen transports over a threshold's groups."""
    if t.field == "goodput":
        return NONE  # a training run records no network
    checks = [g.transport for g in t.groups]
    expected = next((c.expected for c in checks if c.expected), None)
    pinned = next((c.pinned for c in checks if c.pinned), None)
    seen = sorted({s for c in checks for s in c.seen})
    if expected is None and not seen and pinned is None:
        return NONE
    parts = [f"expected {expected}"] if expected else []
    parts += [f"pinned {pinned}"] if pinned else []
    parts.append(f"seen {', '.join(seen)}" if seen else "not recorded")
    return " · ".join(parts)


def medians(t: ThresholdVerdict) -> tuple[str, ...]:
    """Per group: the median of the compared figure, and its spread over the rounds.

    Groups that did not pass come first, each part in verdicts.json's order.
    """
    found = []
    for group in sorted(t.groups, key=lambda g: g.word == "pass"):
        figure = next((f for f in group.figures if f.name == t.field), None)
        if figure is None or figure.median is None:
            continue
        unit = f" {figure.unit}" if figure.unit else ""
        text = f"{number(figure.median)}{unit} over {len(figure.rounds)} rounds"
        if figure.spread is not None:
            text += f", spread {percent(figure.spread)}"
        found.append(f"{group.group}: {text}" if group.group else text)
    return tuple(found)


def run_rows(archive: ReadArchive) -> list[RunRow]:
    """Every run verdict, in the order verdicts.json lists them.

    A run's word is the worst of its own (its state) and of the thresholds judged on its
    stage and test; where those make it worse, each that did not pass is named as a
    reason: a run that succeeded but missed a threshold is not shown as passing.
    """
    rows = []
    for r in archive.verdicts.runs:
        judged = [
            t
            for t in archive.verdicts.thresholds
            if (t.stage, t.test) == (r.stage, r.test) and t.word != "pass"
        ]
        word = max([r.word, *(t.word for t in judged)], key=_RANK.__getitem__)
        reasons = _reasons(r.reasons)
        if word != r.word:  # the thresholds decide: name them
            reasons += tuple(
                ReasonText(t.word, f"threshold {t.threshold} ({check_text(t)}): {t.word}")
                for t in judged
            )
        rows.append(RunRow(word, r.stage, r.test, r.source or NONE, r.state, reasons))
    return rows


def node_rows(archive: ReadArchive) -> list[NodeRow]:
    """Excluded nodes (with the Workflow's reason), then failed and unjudged nodes, run by run."""
    rows = []
    for run in archive.summary.runs:
        why = run.exclusion_reason or "no reason given"
        rows += [NodeRow(run.stage, run.test, n, "excluded", why) for n in run.excluded_nodes]
        for status, nodes in (("failed", run.failed_nodes), ("unjudged", run.unjudged_nodes)):
            for node in nodes:
                reason = f"{node.reason}: {node.message}" if node.message else node.reason
                rows.append(NodeRow(run.stage, run.test, node.name, status, reason or NONE))
    return rows


def node_lines(archive: ReadArchive) -> tuple[list[NodeLine], list[NodeLine]]:
    """The nodes to hold back (failed, suspect, excluded, untested), then the cleared ones."""
    lines = [
        NodeLine(n.node, n.status, n.word, "; ".join(n.reasons) or NONE)
        for n in archive.verdicts.nodes
    ]
    return [n for n in lines if n.status != "cleared"], [n for n in lines if n.status == "cleared"]


def evidence_lines(archive: ReadArchive) -> list[str]:
    """The report's first lines: evidence that cannot pass, and why (run, host, plan).

    Then the notes on how evidence was bound where it could not be by name.
    """
    ordered = sorted(archive.verdicts.findings, key=lambda f: f.word == "pass")
    return summarize_rounds(
        (f.kind, f.code, f.stage, f.test, f.group, f.message, f.round) for f in ordered
    )


@dataclass(frozen=True)
class HeldNodes:
    """Nodes to hold back of one status, as names and ranges (`gpu-[0100-0139]`)."""

    status: str
    names: tuple[str, ...]


def node_ranges(names: Iterable[str]) -> tuple[str, ...]:
    """Sorted node names, consecutive numbered ones as one range (`gpu-[0000-1023]`)."""
    listed = list(names)
    return tuple(compress(listed).split(",")) if listed else ()


def hold_back(archive: ReadArchive) -> tuple[str, tuple[HeldNodes, ...]]:
    """The report's first sentence, its names apart: the lead, then the nodes by status.

    Statuses come in the order their first node does in verdicts.json.
    """
    held, cleared = node_lines(archive)
    if not held and not cleared:
        return "No node is named by this run's plan or results.", ()
    if not held:
        return f"All {len(cleared)} nodes cleared: none to hold back.", ()
    statuses = dict.fromkeys(n.status for n in held)
    groups = tuple(
        HeldNodes(status, node_ranges(n.node for n in held if n.status == status))
        for status in statuses
    )
    return f"Hold back {len(held)} of {len(held) + len(cleared)} nodes:", groups


def hold_back_text(archive: ReadArchive) -> str:
    """The report's first sentence: which nodes to hold back, or that every node cleared.

    `Hold back 42 of 1024 nodes: gpu-[0100-0139] (failed), gpu-0512 (suspect), ...`
    """
    lead, groups = hold_back(archive)
    if not groups:
        return lead
    named = ", ".join(f"{name} ({g.status})" for g in groups for name in g.names)
    return f"{lead} {named}."


_COMPONENTS: tuple[tuple[str, Callable[[GoodputMeasurement], float | None]], ...] = (
    ("goodput", lambda g: g.ratio),
    ("training (s)", lambda g: g.components.training),
    ("lost work (s)", lambda g: g.components.lost_work),
    ("resume (s)", lambda g: g.components.resume),
    ("reschedule (s)", lambda g: g.components.reschedule),
    ("checkpoint save (s)", lambda g: g.components.checkpoint_save),
    ("step time (s)", lambda g: g.avg_step_time_sec),
    ("TFLOPS per GPU", lambda g: g.avg_tflops_per_gpu),
    ("interruptions", lambda g: None if g.interruptions is None else float(g.interruptions)),
)


def goodput_tables(archive: ReadArchive) -> list[GoodputTable]:
    """One table per run with training rounds; medians over final rounds, column by column."""
    return [_goodput_table(run) for run in archive.summary.runs if run.goodput]


def _goodput_table(run: RunResult) -> GoodputTable:
    headers = ("group", "round", "finality", *(name for name, _ in _COMPONENTS))
    rows = tuple(
        (
            g.group or NONE,
            str(g.iteration) if g.iteration is not None else NONE,
            g.finality if g.finality == "final" else f"{g.finality} ({g.reason})",
            *(number(read(g)) for _, read in _COMPONENTS),
        )
        for g in run.goodput
    )
    final = [g for g in run.goodput if g.finality == "final"]
    median = (
        "median",
        f"{len(final)} final",
        NONE,
        *(_median(final, read) for _, read in _COMPONENTS),
    )
    return GoodputTable(run.stage, run.test, headers, rows, median)


def _median(
    rounds: Sequence[GoodputMeasurement], read: Callable[[GoodputMeasurement], float | None]
) -> str:
    values = [v for v in (read(g) for g in rounds) if v is not None]
    return number(statistics.median(values)) if values else NONE


def provenance_rows(archive: ReadArchive) -> list[tuple[str, str]]:
    """Where the results come from, as (label, value) pairs."""
    p, s = archive.provenance, archive.summary
    return [
        ("site", p.site.name),
        ("site file", p.site.file or NONE),
        ("site file sha256", p.site.sha256 or NONE),
        ("run id", s.run_id),
        ("collected from", p.collected_from or s.collected_from or NONE),
        ("nvcregen", p.nvcregen or NONE),
        ("NCCL", ", ".join(p.nccl_versions) or "not stated in the logs"),
        ("signature", archive.signature or NONE),
        *([("GPUs (device lists)", ", ".join(p.gpu_models))] if p.gpu_models else []),
        *([("CUDA driver", ", ".join(p.cuda_drivers))] if p.cuda_drivers else []),
    ]
