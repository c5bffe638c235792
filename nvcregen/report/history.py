"""History of a site: the median bus bandwidth of each run, run over run (pure but reading).

For each test, scope, transport and message size, every verified run of a site folder
gives one point: the median bus bandwidth over its final rounds (all groups) at that
size, as bandwidth.csv records them. Runs are ordered by when their measurements
finished (`folder.py`). Beside the points: the site's threshold for that test, scope and
size, and the catalog's measured baselines of the same test, scope, transport and size.

A run is a regression when it falls below the previous runs by more than their spread:
its median is lower than the median of the previous runs' medians by more than the
range (max - min) of every final round those runs measured. One earlier run is enough;
the first run is never one.

Sizes shown: those the site's thresholds name for the test and scope, and the largest
size every run measured; `at` replaces them.
"""

from __future__ import annotations

import dataclasses
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from nvcregen.catalog.load import load_catalog
from nvcregen.core import units
from nvcregen.report.archive import Archive, BandwidthRow

Key = tuple[str, str, str, int]  # test, scope, transport, size


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
    """A line to read the points against: the site's threshold or a catalog baseline."""

    label: str
    value: float


@dataclass(frozen=True)
class Series:
    """One test, scope, transport and size across the runs."""

    test: str
    scope: str
    transport: str
    size_bytes: int
    points: tuple[Point, ...]
    references: tuple[Reference, ...]

    @property
    def title(self) -> str:
        """`nccl-all-reduce inter-node over IB at 1GiB`."""
        over = f"over {self.transport}" if self.transport else "transport not recorded"
        return f"{self.test} {self.scope} {over} at {units.format_size(self.size_bytes)}"


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


def history(archives: Sequence[tuple[Archive, str | None]], at: Sequence[int] = ()) -> History:
    """The history of a site's runs.

    Args:
        archives: Each verified run's archive and when its measurements finished, oldest
            first.
        at: Only these sizes (bytes); empty for the thresholds' sizes and the largest.

    """
    per_run = [_medians(a.bandwidth) for a, _ in archives]
    keys = sorted({k for found in per_run for k in found})
    wanted = _sizes(archives, keys, at)
    baselines = _baselines()
    series = []
    for key in keys:
        if key[3] not in wanted.get(key[:3], set()):
            continue
        points = [
            Point(a.summary.run_id, when, *found[key])
            for (a, when), found in zip(archives, per_run, strict=True)
            if key in found
        ]
        refs = _thresholds(archives, key) + list(baselines.get(key, []))
        series.append(Series(*key, tuple(flag_regressions(points)), tuple(refs)))
    site = archives[-1][0].summary.site if archives else ""
    return History(site, tuple((a.summary.run_id, w) for a, w in archives), tuple(series))


def _medians(rows: Sequence[BandwidthRow]) -> dict[Key, tuple[float, tuple[float, ...]]]:
    """Per key: the median busbw over the run's final rounds, and those rounds' values."""
    found: dict[Key, list[float]] = {}
    for row in rows:
        if row.finality == "final":
            key = (row.test, row.scope, ", ".join(row.transports), row.size_bytes)
            found.setdefault(key, []).append(row.busbw)
    return {k: (statistics.median(v), tuple(v)) for k, v in found.items()}


def flag_regressions(points: Sequence[Point]) -> list[Point]:
    """Flag each point that falls below the previous ones by more than their spread."""
    flagged: list[Point] = []
    for n, point in enumerate(points):
        before = points[:n]
        if not before:
            flagged.append(point)
            continue
        reference = statistics.median(p.median for p in before)
        values = [v for p in before for v in p.rounds]
        spread = max(values) - min(values)
        drop = reference - point.median
        if drop > spread:
            why = (
                f"{drop:.4g} GB/s below the previous runs' median {reference:.4g} GB/s,"
                f" more than their spread of {spread:.4g} GB/s"
            )
            flagged.append(dataclasses.replace(point, regression=True, why=why))
        else:
            flagged.append(point)
    return flagged


def _sizes(
    archives: Sequence[tuple[Archive, str | None]], keys: Sequence[Key], at: Sequence[int]
) -> dict[tuple[str, str, str], set[int]]:
    wanted: dict[tuple[str, str, str], set[int]] = {}
    for test, scope, transport, _ in keys:
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


def _thresholds(archives: Sequence[tuple[Archive, str | None]], key: Key) -> list[Reference]:
    """The newest run's busbw thresholds for this test, scope and size."""
    test, scope, _, size = key
    if not archives:
        return []
    newest = archives[-1][0]
    return [
        Reference(f"site threshold {t.comparison}", t.bound)
        for t in newest.verdicts.thresholds
        if (t.test, t.scope, t.field, t.size_bytes) == (test, scope, "busbw", size)
        and t.bound is not None
    ]


def _baselines() -> dict[Key, list[Reference]]:
    """The catalog's measured baselines, by test, scope, transport and size."""
    found: dict[Key, list[Reference]] = {}
    for baseline in load_catalog().baselines.values():
        key = (baseline.test, baseline.scope, baseline.transport, units.parse_size(baseline.at))
        value = statistics.median(r.busbw for r in baseline.rounds)
        label = f"catalog {baseline.name} ({baseline.model}, {baseline.nodes} node(s))"
        found.setdefault(key, []).append(Reference(label, value))
    return found
