"""Verdicts: pass, fail or incomplete, per threshold, run and report export (pure).

A site threshold names a test, a scope and optionally a message size (`at`) and a
transport. Each of its comparisons (busbw, algbw, goodput) is judged per stage that
runs the test at that scope, and within a stage per group of nodes (each node alone for
intra-node runs), over the group's rounds:

1. transport gate: when RDMA (IB) is expected and a round ran over Socket (or the
   reverse), the verdict is `fail` with reason `transport`, however fast it was; the
   median is then taken over the rounds that ran over the expected transport only, the
   ones the chart of that transport draws (the others are named, not pooled);
2. a round whose Job failed (`JobFailed`) fails; a provisional round (still
   `Measuring`, `NoDataCollected`, ...) or a missing one makes the verdict
   `incomplete`: a provisional measurement never passes;
3. with every round final, the median of the figure over the rounds is compared.

The worst group decides; `incomplete` ranks between `pass` and `fail`. A run is judged
by the same transport gate on its own (`judge_run`), so a round over Socket where RDMA
was expected fails the run even when no threshold names the test.

Last, the findings about the evidence itself (`results/examine.py`: rounds produced by
hosts, GPUs or ranks the plan does not name, figures above the links' ceiling, sweeps
that collapse or decline, rounds that disagree) join the reasons of their group's
threshold verdicts and of their run's verdict: a finding that fails, fails them.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from itertools import groupby

from nvcregen.core import units
from nvcregen.core.metrics import METRICS, THRESHOLD_FIELDS
from nvcregen.results.figures import Figure, bandwidth_figures, goodput_figures
from nvcregen.results.findings import Finding, decisive, with_reasons
from nvcregen.results.gate import Transport, on_transport, run_transport, threshold_transport
from nvcregen.results.models import (
    BandwidthMeasurement,
    Finality,
    GoodputMeasurement,
    Measurement,
    RunState,
    StatusModel,
)
from nvcregen.results.nodes import GroupWords, NodeVerdict, judge_nodes, refused_nodes
from nvcregen.results.payloads import ReportExportResult, Verification
from nvcregen.results.runs import RunResult, RunSet
from nvcregen.results.words import Reason, Word, worst
from nvcregen.spec.v1alpha1 import Site, Threshold

__all__ = ["Reason", "ThresholdVerdict", "Verdicts", "Word", "judge", "worst"]

OPERATORS: dict[str, Callable[[float, float], bool]] = {  # a threshold's comparison
    ">=": operator.ge,
    ">": operator.gt,
    "<=": operator.le,
    "<": operator.lt,
    "==": operator.eq,
}


class GroupVerdict(StatusModel):
    """One group's verdict over its rounds."""

    group: str = ""
    nodes: tuple[str, ...] = ()
    word: Word
    reasons: tuple[Reason, ...] = ()
    rounds: int = 0
    final_rounds: int = 0
    figures: tuple[Figure, ...] = ()
    transport: Transport = Transport()


class ThresholdVerdict(StatusModel):
    """One comparison of one site threshold, for one stage."""

    threshold: int
    test: str
    scope: str
    stage: str = ""  # none when no stage runs the threshold's test
    field: str
    comparison: str = ""
    bound: float | None = None
    unit: str = ""
    at: str | None = None
    size_bytes: int | None = None
    word: Word
    reasons: tuple[Reason, ...] = ()
    groups: tuple[GroupVerdict, ...] = ()


class RunVerdict(StatusModel):
    """One planned test of one stage, as NVCRE finished it."""

    stage: str
    scope: str
    test: str
    source: str = ""
    state: RunState
    word: Word
    reasons: tuple[Reason, ...] = ()


class ExportVerdict(StatusModel):
    """Whether a ReportExport's saved report verified against its sha256."""

    name: str
    source: str = ""
    verification: Verification
    word: Word
    detail: str = ""


class Verdicts(StatusModel):
    """Every verdict of a collection, and the overall one.

    `problems` are what could not be read and belongs to no run (a measurement refused
    as evidence that no judged run holds): each one is counted as incomplete, so the
    counts always agree with the overall word.
    """

    word: Word
    thresholds: tuple[ThresholdVerdict, ...] = ()
    runs: tuple[RunVerdict, ...] = ()
    exports: tuple[ExportVerdict, ...] = ()
    nodes: tuple[NodeVerdict, ...] = ()
    findings: tuple[Finding, ...] = ()
    problems: tuple[str, ...] = ()

    def counts(self) -> dict[str, int]:
        """How many verdicts of each word (each problem an incomplete one)."""
        words = [v.word for v in self.thresholds] + [v.word for v in self.runs]
        words += [v.word for v in self.exports]
        words += [Word.INCOMPLETE for _ in self.problems]
        return {str(w): words.count(w) for w in Word}


def judge(site: Site, runs: RunSet, findings: Sequence[Finding] = ()) -> Verdicts:
    """Judge a site's runs against its thresholds, and each run and export by itself.

    `findings` about the evidence (`results/examine.py`) that do not pass join the
    reasons of their run's verdicts: unbound or implausible evidence never passes.
    """
    findings = (*findings, *refused_nodes(site, runs))  # NVC750: names outside the plan
    thresholds = [
        _with_findings(verdict, findings)
        for index, threshold in enumerate(site.spec.thresholds)
        for verdict in judge_threshold(
            index, threshold, _on_pool(site, threshold, runs.runs), site.spec.readiness.rounds
        )
    ]
    run_verdicts = [_run_with_findings(judge_run(run), findings) for run in runs.runs]
    exports = [judge_export(export) for export in runs.exports]
    words = [v.word for v in thresholds] + [v.word for v in run_verdicts]
    words += [v.word for v in exports]
    words += [Word.INCOMPLETE for _ in runs.problems]
    rounds = site.spec.readiness.rounds
    return Verdicts(
        word=worst(words),
        thresholds=tuple(thresholds),
        runs=tuple(run_verdicts),
        exports=tuple(exports),
        nodes=judge_nodes(site, runs, group_words(thresholds), rounds, findings),
        findings=tuple(findings),
        problems=tuple(runs.problems),
    )


def _with_findings(verdict: ThresholdVerdict, findings: Sequence[Finding]) -> ThresholdVerdict:
    """A threshold verdict with the findings about its run's groups among its reasons."""
    about = [f for f in decisive(findings) if f.holds(verdict.stage, verdict.test)]
    if not about or not verdict.stage:
        return verdict
    groups = []
    for g in verdict.groups:
        mine = [f for f in about if f.holds(verdict.stage, verdict.test, g.group) and f.group_wide]
        word, reasons = with_reasons(g.word, g.reasons, mine)
        groups.append(g.model_copy(update={"word": word, "reasons": reasons}))
    word = worst([verdict.word, *(g.word for g in groups), *(f.word for f in about)])
    named = {g.group for g in groups}
    loose = [f.reason() for f in about if not f.group_wide or (f.group and f.group not in named)]
    reasons = (*_summary_reasons(groups), *loose)
    return verdict.model_copy(update={"word": word, "groups": tuple(groups), "reasons": reasons})


def _run_with_findings(verdict: RunVerdict, findings: Sequence[Finding]) -> RunVerdict:
    about = [f for f in findings if f.holds(verdict.stage, verdict.test)]
    word, reasons = with_reasons(verdict.word, verdict.reasons, about)
    return verdict.model_copy(update={"word": word, "reasons": reasons})


def _on_pool(site: Site, threshold: Threshold, runs: Sequence[RunResult]) -> list[RunResult]:
    """The runs a threshold holds: all, or those of stages on the pool it names."""
    if threshold.pool is None:
        return list(runs)
    first = site.spec.node_pools[0].name
    stages = {s.name for s in site.spec.readiness.stages if (s.pool or first) == threshold.pool}
    return [r for r in runs if r.stage in stages]


def group_words(thresholds: Sequence[ThresholdVerdict]) -> GroupWords:
    """Per stage, test and group: the reasons its threshold verdicts did not pass."""
    found: GroupWords = {}
    for t in thresholds:
        for g in t.groups:
            bad = [(r.word, r.message) for r in g.reasons if r.word is not Word.PASS]
            found.setdefault((t.stage, t.test, g.group), []).extend(bad)
    return found


def judge_threshold(
    index: int, threshold: Threshold, runs: Sequence[RunResult], rounds: int
) -> list[ThresholdVerdict]:
    """Verdicts of one threshold: per comparison it makes, per stage that runs its test."""
    matching = [r for r in runs if r.test == threshold.test and r.scope == threshold.scope]
    fields = [f for f in THRESHOLD_FIELDS if getattr(threshold, f) is not None] or ["transport"]
    size = units.parse_size(threshold.at) if threshold.at else None
    verdicts = []
    for field in fields:
        base = _base(index, threshold, field, size)
        if not matching:
            reason = _reason(
                "not-planned", Word.INCOMPLETE, "no stage runs this test at this scope"
            )
            verdicts.append(ThresholdVerdict(**base, stage="", word=reason.word, reasons=(reason,)))
        for run in matching:
            if _judged_by_its_logs(field, run):
                verdicts.append(_by_its_logs(base, run))
                continue
            groups = _judge_groups(threshold, field, size, run, rounds)
            verdicts.append(
                ThresholdVerdict(
                    **base,
                    stage=run.stage,
                    word=worst([g.word for g in groups]),
                    reasons=_summary_reasons(groups),
                    groups=groups,
                )
            )
    return verdicts


def _judged_by_its_logs(field: str, run: RunResult) -> bool:
    """Whether a bound-free threshold holds a run nvcregen judges node by node.

    A test of no network that measures nothing (nvbandwidth, DCGM, node health) has each
    node judged from its own log: the threshold holds the run's outcome, not a bandwidth
    measurement it never has.
    """
    return (
        field == "transport"
        and run.expected_transport is None
        and not run.bandwidth
        and not run.goodput
        and bool(run.failed_nodes or run.succeeded_nodes)
    )


def _by_its_logs(base: dict[str, object], run: RunResult) -> ThresholdVerdict:
    """The run's outcome as the threshold's verdict, with no group of its own.

    Each node is failed or cleared by its own log (the run's verdict), not by the threshold.
    """
    word = {RunState.SUCCEEDED: Word.PASS, RunState.FAILED: Word.FAIL}.get(
        run.state, Word.INCOMPLETE
    )
    failed = ", ".join(n.name for n in run.failed_nodes)
    why = f"judged node by node from its logs: {len(run.succeeded_nodes)} passed"
    why += f", failed: {failed}" if failed else ""
    reason = _reason("judged-by-logs", word, why)
    return ThresholdVerdict(**base, stage=run.stage, word=word, reasons=(reason,))


def _summary_reasons(groups: Sequence[GroupVerdict]) -> tuple[Reason, ...]:
    """The reasons that decided: every non-pass one, else the passes (one per group)."""
    named = len(groups) > 1
    reasons = [
        r.model_copy(update={"message": f"{g.group}: {r.message}"}) if named else r
        for g in groups
        for r in g.reasons
    ]
    decisive = [r for r in reasons if r.word is not Word.PASS]
    return tuple(decisive or reasons)


def _base(index: int, threshold: Threshold, field: str, size: int | None) -> dict[str, object]:
    base: dict[str, object] = {
        "threshold": index,
        "test": threshold.test,
        "scope": threshold.scope,
        "field": field,
        "at": threshold.at,
        "size_bytes": size,
    }
    if field in METRICS:
        kind = METRICS[field].unit_kind
        comparison = units.parse_comparison(getattr(threshold, field), unit_kind=kind)
        base |= {"comparison": comparison.written, "bound": comparison.value}
        base["unit"] = comparison.unit
    return base


def _judge_groups(
    threshold: Threshold, field: str, size: int | None, run: RunResult, rounds: int
) -> tuple[GroupVerdict, ...]:
    measurements: Sequence[Measurement] = run.goodput if field == "goodput" else run.bandwidth
    unmeasured = _unmeasured(run, measurements)
    if not measurements and not unmeasured:
        word = Word.FAIL if run.state is RunState.FAILED else Word.INCOMPLETE
        why = f"no measurement ({run.state}{': ' + run.reason if run.reason else ''})"
        return (GroupVerdict(group="", word=word, reasons=(_reason("no-measurement", word, why),)),)
    ordered = sorted(measurements, key=lambda m: m.group)
    judged = [
        _judge_group(threshold, field, size, run, list(members), rounds)
        for _, members in groupby(ordered, key=lambda m: m.group)
    ]
    return tuple(sorted([*judged, *unmeasured], key=lambda g: g.group))


def _unmeasured(run: RunResult, measurements: Sequence[Measurement]) -> list[GroupVerdict]:
    """Groups the Workflow names, or rounds were refused in, with no valid measurement.

    Incomplete, unless the run itself failed: a failed run's groups fail, as its threshold
    does when it names no group (found by review).
    """
    held = {m.group for m in measurements}
    failed = run.state is RunState.FAILED
    nodes = {g.name: g.nodes for g in run.groups}
    for r in run.refused:
        nodes.setdefault(r.group, r.nodes)
    found = []
    for name in sorted(set(nodes) - held):
        refused = sum(r.group == name for r in run.refused)
        why = f"no valid measurement of this group ({refused} refused as evidence)"
        word = Word.FAIL if failed else Word.INCOMPLETE
        if failed:
            why = f"the run failed ({run.reason or 'no reason given'}); {why}"
        reason = _reason("no-measurement", word, why)
        found.append(
            GroupVerdict(
                group=name,
                nodes=nodes[name],
                word=word,
                reasons=(reason,),
                rounds=refused,
            )
        )
    return found


def _judge_group(
    threshold: Threshold,
    field: str,
    size: int | None,
    run: RunResult,
    members: list[Measurement],
    rounds: int,
) -> GroupVerdict:
    transport, reasons = threshold_transport(threshold, run, members)
    reasons += _finality(members, rounds)
    final = [m for m in members if m.finality is Finality.FINAL]
    on = on_transport(final, transport.expected)
    figures = _figures(field, size, on)
    decided = any(r.word is not Word.PASS for r in reasons if r.code != "transport")
    if field in METRICS and on and not decided:
        reasons.append(_compare(threshold, field, size, on, figures, len(final) - len(on)))
    return GroupVerdict(
        group=members[0].group,
        nodes=members[0].nodes,
        word=worst([r.word for r in reasons]),
        reasons=tuple(reasons),
        rounds=len(members),
        final_rounds=len(final),
        figures=figures,
        transport=transport,
    )


def _figures(field: str, size: int | None, final: Sequence[Measurement]) -> tuple[Figure, ...]:
    if field == "goodput":
        return goodput_figures([m for m in final if isinstance(m, GoodputMeasurement)])
    return bandwidth_figures([m for m in final if isinstance(m, BandwidthMeasurement)], size)


def _finality(members: Sequence[Measurement], rounds: int) -> list[Reason]:
    reasons = []
    for m in members:
        where = f"round {m.iteration} ({m.ref.name})"
        if m.finality is Finality.NOT_EVALUATED:
            reasons.append(_reason("job-failed", Word.FAIL, f"{where}: not evaluated, {m.reason}"))
        elif m.finality is Finality.PROVISIONAL:
            reasons.append(
                _reason("provisional", Word.INCOMPLETE, f"{where}: provisional, {m.reason}")
            )
    final = sum(m.finality is Finality.FINAL for m in members)
    if final < rounds and not any(r.word is Word.FAIL for r in reasons):
        reasons.append(_reason("rounds", Word.INCOMPLETE, f"{final} of {rounds} rounds final"))
    return reasons


def _compare(
    threshold: Threshold,
    field: str,
    size: int | None,
    final: Sequence[Measurement],
    figures: Sequence[Figure],
    left_out: int = 0,
) -> Reason:
    name = field
    found = next((f for f in figures if f.name == name), None)
    if found is None or len(found.rounds) < len(final) or found.median is None:
        where = f"at {units.format_size(size)}" if size is not None else "in the results"
        missing = len(final) - (len(found.rounds) if found else 0)
        return _reason(
            "size-not-measured", Word.INCOMPLETE, f"{missing} final round(s) have no {name} {where}"
        )
    comparison = units.parse_comparison(
        getattr(threshold, field), unit_kind=METRICS[field].unit_kind
    )
    unit = f" {comparison.unit}" if comparison.unit else ""
    shown = f"{found.median:.6g}{unit}"
    bound = f"{comparison.op} {comparison.value:g}{unit}"
    written = f" (written {comparison.written})" if comparison.written != bound else ""
    text = f"median {name} {shown} over {len(found.rounds)} rounds, needs {bound}{written}"
    if left_out:
        text += f" ({left_out} round(s) over another transport left out)"
    if OPERATORS[comparison.op](found.median, comparison.value):
        return _reason("met", Word.PASS, text)
    return _reason("threshold", Word.FAIL, text)


def judge_run(run: RunResult) -> RunVerdict:
    """A run's verdict from NVCRE's own outcome, excluded and failed nodes included."""
    reasons = run_transport(run)
    outcome = f"{run.reason}: {run.message}" if run.message else run.reason
    if run.state is RunState.FAILED:
        reasons.append(_reason("failed", Word.FAIL, outcome or "NVCRE marked it failed"))
    elif run.state is not RunState.SUCCEEDED:
        code = "not-found" if run.reason == "NotFound" else str(run.state)
        reasons.append(_reason(code, Word.INCOMPLETE, outcome or str(run.state)))
    for node in run.failed_nodes:
        text = f"{node.name}: {node.reason}" + (f" ({node.message})" if node.message else "")
        reasons.append(_reason("failed-node", Word.FAIL, text))
    for node in run.unjudged_nodes:
        text = f"{node.name}: {node.reason}" + (f" ({node.message})" if node.message else "")
        reasons.append(_reason("unjudged-node", Word.INCOMPLETE, text))
    if run.excluded_nodes:
        why = run.exclusion_reason or "no reason given"
        text = f"{', '.join(run.excluded_nodes)} not tested: {why}"
        reasons.append(_reason("excluded-nodes", Word.INCOMPLETE, text))
    reasons += [_reason("unreadable", Word.INCOMPLETE, p) for p in run.problems]
    return RunVerdict(
        stage=run.stage,
        scope=run.scope,
        test=run.test,
        source=run.source.name if run.source else "",
        state=run.state,
        word=worst([r.word for r in reasons]),
        reasons=tuple(reasons),
    )


def judge_export(export: ReportExportResult) -> ExportVerdict:
    """A ReportExport passes when its snapshot matches its sha256 and size."""
    word = {
        Verification.VERIFIED: Word.PASS,
        Verification.MISMATCH: Word.FAIL,
    }.get(export.verification, Word.INCOMPLETE)
    return ExportVerdict(
        name=export.ref.name,
        source=export.source,
        verification=export.verification,
        word=word,
        detail=export.detail,
    )


def _reason(code: str, word: Word, message: str) -> Reason:
    return Reason(code=code, word=word, message=message)
