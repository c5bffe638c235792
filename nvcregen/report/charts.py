"""Charts of an archive (pure): bandwidth against message size per test, stage and transport.

One chart per (stage, test, recorded transport) of bandwidth.csv, in the order the
archive lists them. Each group of nodes gets a color: one thin line per round (dashed
when the round is not final) and a thick median line, the median taken size by size
over the final rounds only, as the verdicts are. Bus bandwidth is always drawn; an
algorithm-bandwidth chart is added where a threshold compares algbw. Thresholds of the
same test and stage are drawn as horizontal lines at their bound (GB/s), marked at
their message size, on the charts of the transport they expect only: an RDMA bound drawn
over a TCP fallback's rounds would scale them flat against the axis, so that chart says
in its caption which threshold it leaves out and why.

A chart of more groups than PALETTE has colours (a fleet: one group per node or pair)
draws the groups that passed as one muted grey median each, under everything, without
legend entries; the groups that failed or hold a failed or suspect node keep their own
colours, rounds and legend entries (the first len(PALETTE); any further ones share one
colour and one entry), and the caption says how many groups are drawn and how.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from nvcregen.report.archive import ReadArchive
from nvcregen.report.plot import Chart, Rule, Series, SeriesKind, layout, value_label
from nvcregen.results.archivemodel import BandwidthCsvRow
from nvcregen.results.runs import RunResult
from nvcregen.results.verdicts import ThresholdVerdict

PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#332288")
MUTED = "#c4cbd3"  # passing groups, when there are more groups than colours
MORE = "#6e2c00"  # flagged groups past the palette's colours
_HELD = {"failed", "suspect"}
METRICS = {"busbw": "bus bandwidth", "algbw": "algorithm bandwidth"}
ChartKey = tuple[str, str, str, tuple[str, ...]]  # stage, scope, test, transports


@dataclass(frozen=True)
class LegendEntry:
    """A legend line: what a color and a line style stand for."""

    label: str
    color: str
    kind: SeriesKind


@dataclass(frozen=True)
class ChartView:
    """One chart with its headings and legend."""

    anchor: str
    test: str
    stage: str
    scope: str
    metric: str
    transport: str
    chart: Chart
    legend: tuple[LegendEntry, ...]
    note: str = ""
    groups: str = ""  # with many groups: how many are drawn, and how


def charts(archive: ReadArchive) -> list[ChartView]:
    """Every chart of an archive, in the order its bandwidth rows come."""
    keyed: dict[ChartKey, list[BandwidthCsvRow]] = {}
    for row in archive.bandwidth:
        keyed.setdefault((row.stage, row.scope, row.test, row.transports), []).append(row)
    views: list[ChartView] = []
    for key, rows in keyed.items():
        stage, _, test, _ = key
        rules = [t for t in archive.verdicts.thresholds if t.test == test and t.stage == stage]
        metrics = ["busbw"] + (["algbw"] if any(t.field == "algbw" for t in rules) else [])
        run = next((r for r in archive.summary.runs if (r.stage, r.test) == (stage, test)), None)
        flagged = flagged_groups(archive, stage, test)
        views += [
            _view(key, rows, rules, metric, run, len(views) + i, flagged)
            for i, metric in enumerate(metrics)
        ]
    return views


def flagged_groups(archive: ReadArchive, stage: str, test: str) -> frozenset[str]:
    """The groups of a stage's test that did not pass a threshold or hold a held-back node."""
    found = {
        g.group
        for t in archive.verdicts.thresholds
        if (t.stage, t.test) == (stage, test)
        for g in t.groups
        if g.word != "pass"
    }
    found |= {
        r.group
        for n in archive.verdicts.nodes
        if n.status in _HELD
        for r in n.runs
        if (r.stage, r.test) == (stage, test) and r.word != "pass"
    }
    return frozenset(found)


def _view(
    key: ChartKey,
    rows: Sequence[BandwidthCsvRow],
    thresholds: Sequence[ThresholdVerdict],
    metric: str,
    run: RunResult | None,
    number: int,
    flagged: frozenset[str] = frozenset(),
) -> ChartView:
    stage, scope, test, transports = key
    series = bandwidth_series(rows, metric, flagged)
    mine = [t for t in thresholds if t.field == metric]
    drawn = [t for t in mine if applies(t, transports)]
    rules = threshold_rules(drawn)
    left = [t for t in mine if t not in drawn and t.bound is not None]
    note = "; ".join(
        f"{t.field} {t.comparison} not drawn: it expects {expected_of(t)}, these rounds ran"
        f" over {', '.join(transports)}"
        for t in left
    )
    return ChartView(
        anchor=f"chart-{number + 1}",
        test=test,
        stage=stage,
        scope=scope,
        metric=METRICS[metric],
        transport=transport_text(transports, run),
        chart=layout(series, rules, f"{METRICS[metric]} (GB/s)"),
        legend=legend(series),
        note=note,
        groups=groups_text(rows, flagged),
    )


def groups_text(rows: Sequence[BandwidthCsvRow], flagged: frozenset[str]) -> str:
    """With more groups than colours: how many groups the chart draws, and how."""
    groups = list(dict.fromkeys(r.group for r in rows))
    if len(groups) <= len(PALETTE):
        return ""
    bad = sum(g in flagged for g in groups)
    return (
        f"{len(groups)} groups drawn: {bad} that failed or hold a failed or suspect node in "
        f"colour, with their rounds; {len(groups) - bad} that passed in grey, their medians "
        "only, without legend entries"
    )


def expected_of(threshold: ThresholdVerdict) -> str | None:
    """The transport a threshold's groups expected (the threshold's or the plan's)."""
    return next((g.transport.expected for g in threshold.groups if g.transport.expected), None)


def applies(threshold: ThresholdVerdict, transports: Sequence[str]) -> bool:
    """Whether a threshold belongs on the chart of rounds over `transports`."""
    expected = expected_of(threshold)
    return expected is None or not transports or set(transports) <= {expected}


def bandwidth_series(
    rows: Sequence[BandwidthCsvRow], metric: str, flagged: frozenset[str] = frozenset()
) -> list[Series]:
    """Per group: a line per round, then the median line over its final rounds.

    With more groups than PALETTE has colours, a group not `flagged` is its median alone,
    muted, and listed first (drawn under the others); see the module's note.
    """
    groups = list(dict.fromkeys(r.group for r in rows))
    by_group: dict[str, list[BandwidthCsvRow]] = {}
    for row in rows:
        by_group.setdefault(row.group, []).append(row)
    if len(groups) > len(PALETTE):
        quiet = [g for g in groups if g not in flagged]
        loud = [g for g in groups if g in flagged]
        muted = [_muted(g, by_group[g], metric) for g in quiet]
        named, more = loud[: len(PALETTE)], loud[len(PALETTE) :]
        shared = _group_series(more, [MORE] * len(more), by_group, metric)
        own = _group_series(named, PALETTE[: len(named)], by_group, metric)
        return [s for s in muted if s] + shared + own  # each drawn over the one before
    colors = [PALETTE[i % len(PALETTE)] for i in range(len(groups))]
    return _group_series(groups, colors, by_group, metric)


def _muted(group: str, rows: Sequence[BandwidthCsvRow], metric: str) -> Series | None:
    median = median_points([r for r in rows if r.finality == "final"], metric)
    label = f"{group or 'all nodes'} median"
    return Series(label, median, MUTED, "median", muted=True) if median else None


def _group_series(
    groups: Sequence[str],
    colors: Sequence[str],
    by_group: dict[str, list[BandwidthCsvRow]],
    metric: str,
) -> list[Series]:
    series = []
    for group, color in zip(groups, colors, strict=True):
        mine = by_group[group]
        rounds = dict.fromkeys((r.round, r.measurement) for r in mine)
        for number, measurement in rounds:
            points = [r for r in mine if (r.round, r.measurement) == (number, measurement)]
            final = all(r.finality == "final" for r in points)
            label = f"{group or 'all nodes'} round {number if number is not None else '?'}"
            if not final:
                label += f" ({points[0].finality}: {points[0].reason})"
            kind: SeriesKind = "round" if final else "provisional"
            series.append(Series(label, _points(points, metric), color, kind))
        median = median_points([r for r in mine if r.finality == "final"], metric)
        if median:
            series.append(Series(f"{group or 'all nodes'} median", median, color, "median"))
    return series


def median_points(rows: Sequence[BandwidthCsvRow], metric: str) -> tuple[tuple[int, float], ...]:
    """Size by size, the median of one figure over the rounds that measured that size."""
    by_size: dict[int, list[float]] = {}
    for row in rows:
        by_size.setdefault(row.size_bytes, []).append(_value(row, metric))
    return tuple((size, statistics.median(v)) for size, v in sorted(by_size.items()))


def _points(rows: Sequence[BandwidthCsvRow], metric: str) -> tuple[tuple[int, float], ...]:
    return tuple(sorted((r.size_bytes, _value(r, metric)) for r in rows))


def _value(row: BandwidthCsvRow, metric: str) -> float:
    return row.algbw if metric == "algbw" else row.busbw


def threshold_rules(thresholds: Sequence[ThresholdVerdict]) -> list[Rule]:
    """Thresholds with a bound, as rules labelled with the comparison as the site wrote it."""
    rules = []
    for t in thresholds:
        if t.bound is None:
            continue
        label = f"{t.field} {t.comparison}"
        if t.unit and t.unit not in t.comparison:
            label += f" (= {value_label(t.bound)} {t.unit})"
        label += f" at {t.at}" if t.at else " (best size)"
        rules.append(Rule(t.bound, t.size_bytes, f"{label}: {t.word}", t.word))
    return rules


def transport_text(recorded: Sequence[str], run: RunResult | None) -> str:
    """What the rounds ran over, and what the site expected."""
    text = f"over {', '.join(recorded)}" if recorded else "transport not recorded"
    if run is not None and run.expected_transport:
        text += f"; expected {run.expected_transport}"
    if run is not None and run.pinned_transport:
        text += f"; NCCL_NET pinned to {run.pinned_transport}"
    return text


def legend(series: Sequence[Series]) -> tuple[LegendEntry, ...]:
    """The medians by group, then one entry per line style for the rounds.

    Muted groups have none; flagged groups past the palette share one entry.
    """
    medians = [s for s in series if s.kind == "median" and not s.muted]
    entries = [LegendEntry(s.label, s.color, "median") for s in medians if s.color != MORE]
    more = sum(s.color == MORE for s in medians)
    if more:
        entries.append(LegendEntry(f"{more} more failing or suspect groups", MORE, "median"))
    grey = "#777777"
    if any(s.kind == "round" for s in series):
        entries.append(LegendEntry("one round (final)", grey, "round"))
    if any(s.kind == "provisional" for s in series):
        entries.append(LegendEntry("one round (not final)", grey, "provisional"))
    return tuple(entries)
