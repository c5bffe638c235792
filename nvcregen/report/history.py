"""History of a site: the median bus bandwidth of each run, run over run (pure but reading).

Like is compared with like: for each node group (its exact set of nodes, as summary.json
names the nodes of each measurement; the group's name where it names none), test,
scope, transport and message size, every verified run of a site folder that measured it
gives one point: the median bus bandwidth over that group's final rounds at that size,
as bandwidth.csv records them. Pooling groups would let one pair's fall hide behind the
others. Runs are ordered as `folder.py` orders them. Beside the points: the site's
threshold for that test, scope and size, and the catalog's measured baselines of the same
test, scope, transport and size.

A point is a regression when it falls below the group's previous runs by more than
their spread (its median is lower than the median of the previous runs' medians by more
than the range, max - min, of every final round those runs measured), or when it misses
the site's threshold that the group's previous run met. One earlier run is enough; the
first run is never one.

Sizes shown: those the site's thresholds name for the test and scope, and the largest
size every run measured; `at` replaces them.
"""

from __future__ import annotations

import dataclasses
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from nvcregen.catalog.load import load_catalog
from nvcregen.core import units
from nvcregen.report.archive import ReadArchive
from nvcregen.results.verdicts import OPERATORS

# test, scope, transport, the group's nodes (sorted), its name when they are unknown, size
Key = tuple[str, str, str, tuple[str, ...], str, int]


@dataclass(frozen=True)
class Point:
    """One run's figure for one series."""

    run_id: str
    finished_at: str | None
    median: float
    rounds: tuple[float, ...]
    regression: bool = False
    why: str = ""


@dataclass(frozen=True)
class Reference:
    """A line to read the points against: the site's threshold or a catalog baseline.

    `op` is the threshold's operator (`>=`, ...); a baseline has none.
    """

    label: str
    value: float
    op: str = ""

    def met_by(self, median: float) -> bool | None:
        """Whether a median meets this threshold; None for a baseline."""
        meets = OPERATORS.get(self.op)
        return None if meets is None else meets(median, self.value)


@dataclass(frozen=True)
class Series:
    """One test, scope, transport and size across the runs."""

    test: str
    scope: str
    transport: str
    nodes: tuple[str, ...]  # the group's exact node set, sorted; () when not recorded
    group: str  # the group's name, when its nodes are not recorded
    size_bytes: int
    points: tuple[Point, ...]
    references: tuple[Reference, ...]

    @property
    def who(self) -> str:
        """`nodes node-a, node-b`, or the group when its nodes are not recorded."""
        if self.nodes:
            return f"nodes {', '.join(self.nodes)}"
        return f"group {self.group or '(unnamed)'} (its nodes not recorded)"

    @property
    def title(self) -> str:
        """`nccl-all-reduce inter-node over IB at 1GiB, nodes node-a, node-b`."""
        over = f"over {self.transport}" if self.transport else "transport not recorded"
        size = units.format_size(self.size_bytes)
        return f"{self.test} {self.scope} {over} at {size}, {self.who}"


@dataclass(frozen=True)
class History:
    """Every series of a site's runs, oldest run first."""

    site: str
    runs: tuple[tuple[str, str | None], ...]  # run id, when its measurements finished
    series: tuple[Series, ...]

    @property
    def regressions(self) -> list[tuple[Series, Point]]:
        """Every flagged point, with its series."""
        return [(s, p) for s in self.series for p in s.points if p.regression]

    def node_names(self) -> list[str]:
        """Every node a series names, sorted."""
        return sorted({n for s in self.series for n in s.nodes})

    def renamed(self, rename: Callable[[str], str]) -> History:
        """The history with every node and group name passed through `rename`."""
        series = tuple(
            dataclasses.replace(
                s, nodes=tuple(rename(n) for n in s.nodes), group=rename(s.group) if s.group else ""
            )
            for s in self.series
        )
        return dataclasses.replace(self, series=series)


def history(archives: Sequence[tuple[ReadArchive, str | None]], at: Sequence[int] = ()) -> History:
    """The history of a site's runs.

    Args:
        archives: Each verified run's archive and when its measurements finished, oldest
            first.
        at: Only these sizes (bytes); empty for the thresholds' sizes and the largest.

    """
    per_run = [_medians(a) for a, _ in archives]
    keys = sorted({k for found in per_run for k in found})
    wanted = _sizes(archives, keys, at)
    baselines = _baselines()
    series = []
    for key in keys:
        test, scope, transport, nodes, group, size = key
        if size not in wanted.get((test, scope, transport), set()):
            continue
        points = [
            Point(a.summary.run_id, when, *found[key])
            for (a, when), found in zip(archives, per_run, strict=True)
            if key in found
        ]
        thresholds = _thresholds(archives, key)
        refs = thresholds + list(baselines.get((test, scope, transport, size), []))
        flagged = tuple(flag_regressions(points, thresholds))
        series.append(Series(test, scope, transport, nodes, group, size, flagged, tuple(refs)))
    site = archives[-1][0].summary.site if archives else ""
    return History(site, tuple((a.summary.run_id, w) for a, w in archives), tuple(series))


def _medians(archive: ReadArchive) -> dict[Key, tuple[float, tuple[float, ...]]]:
    """Per key: a group's median busbw over its final rounds, and those rounds' values.

    A row's nodes are those summary.json gives the measurement it was read from (its
    object and group: a packed run's Job holds a measurement of each of its nodes).
    """
    nodes = {
        (run.stage, run.test, m.ref.name, m.group): tuple(sorted(set(m.nodes)))
        for run in archive.summary.runs
        for m in run.bandwidth
        if m.ref.name and m.nodes
    }
    found: dict[Key, list[float]] = {}
    for row in archive.bandwidth:
        if row.finality == "final":
            members = nodes.get((row.stage, row.test, row.measurement, row.group), ())
            group = "" if members else row.group
            transport = ", ".join(row.transports)
            key = (row.test, row.scope, transport, members, group, row.size_bytes)
            found.setdefault(key, []).append(row.busbw)
    return {k: (statistics.median(v), tuple(v)) for k, v in found.items()}


def flag_regressions(points: Sequence[Point], thresholds: Sequence[Reference] = ()) -> list[Point]:
    """Flag each point that falls too far below the points before it.

    Too far: below the previous points' median by more than the spread of their rounds,
    or missing a threshold (`thresholds`) that the point just before it met.
    """
    flagged: list[Point] = []
    for n, point in enumerate(points):
        before = points[:n]
        if not before:
            flagged.append(point)
            continue
        reasons = []
        reference = statistics.median(p.median for p in before)
        values = [v for p in before for v in p.rounds]
        spread = max(values) - min(values)
        drop = reference - point.median
        if drop > spread:
            reasons.append(
                f"{drop:.4g} GB/s below the previous runs' median {reference:.4g} GB/s,"
                f" more than their spread of {spread:.4g} GB/s"
            )
        previous = before[-1]
        reasons += [
            f"{point.median:.4g} GB/s misses the {t.label} ({t.value:.4g} GB/s) that"
            f" {previous.run_id} met with {previous.median:.4g} GB/s"
            for t in thresholds
            if t.met_by(previous.median) and not t.met_by(point.median)
        ]
        if reasons:
            flagged.append(dataclasses.replace(point, regression=True, why="; ".join(reasons)))
        else:
            flagged.append(point)
    return flagged


def _sizes(
    archives: Sequence[tuple[ReadArchive, str | None]], keys: Sequence[Key], at: Sequence[int]
) -> dict[tuple[str, str, str], set[int]]:
    wanted: dict[tuple[str, str, str], set[int]] = {}
    for test, scope, transport, *_ in keys:
        sizes = set(at)
        if not at:
            sizes |= {
                t.size_bytes
                for a, _ in archives
                for t in a.verdicts.thresholds
                if (t.test, t.scope) == (test, scope) and t.size_bytes is not None
            }
            per_run = [
                {r.size_bytes for r in a.bandwidth if (r.test, r.scope) == (test, scope)}
                for a, _ in archives
            ]
            common = set.intersection(*[s for s in per_run if s]) if any(per_run) else set()
            sizes |= {max(common)} if common else set()
        wanted[(test, scope, transport)] = sizes
    return wanted


def _thresholds(archives: Sequence[tuple[ReadArchive, str | None]], key: Key) -> list[Reference]:
    """The newest run's busbw thresholds for this test, scope and size."""
    test, scope, _, _, _, size = key
    if not archives:
        return []
    newest = archives[-1][0]
    return [
        Reference(f"site threshold {t.comparison}", t.bound, t.comparison.split(" ", 1)[0])
        for t in newest.verdicts.thresholds
        if (t.test, t.scope, t.field, t.size_bytes) == (test, scope, "busbw", size)
        and t.bound is not None
    ]


def _baselines() -> dict[tuple[str, str, str, int], list[Reference]]:
    """The catalog's measured baselines, by test, scope, transport and size."""
    found: dict[tuple[str, str, str, int], list[Reference]] = {}
    for baseline in load_catalog().baselines.values():
        key = (baseline.test, baseline.scope, baseline.transport, units.parse_size(baseline.at))
        value = statistics.median(r.busbw for r in baseline.rounds)
        label = f"catalog {baseline.name} ({baseline.model}, {baseline.nodes} node(s))"
        found.setdefault(key, []).append(Reference(label, value))
    return found
