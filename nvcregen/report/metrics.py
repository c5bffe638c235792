"""Archives' results as OpenMetrics text, for `promtool tsdb create-blocks-from openmetrics`.

The seed exported its saved NCCL results as metrics of their own, apart from the
controller's `nvcre_*` gauges (which vanish when a run ends); these are nvcregen's:

- `nvcregen_nccl_busbw_gbs`, `nvcregen_nccl_algbw_gbs`: one sample per final round,
  group and message size, at the time that round's measurement was made;
- `nvcregen_nccl_busbw_median_gbs`: per group and size, the median over the final
  rounds (the figure verdicts compare), at the time the last of them was made.

Labels: `cluster` (as the monitoring layer's rules carry it), `site`, `stage`, `test`,
`scope`, `transport`, `size` (bytes), `group`, `nodes` (the group's nodes, comma-joined:
one node for a test inside a node), `run` (the archive's run id), `period` (a period of
`readiness.periodic`: its scheduled minutes since the epoch, as `collect --period` takes
it; only on a period's samples), `time_from`, and `round` on the per-round families.

One export may hold several runs of one site, the periods of a node side by side: each
run's samples at their own times, so a node's series of a period and of the next are two
samples at two times, never one. Refused, nothing written (`ReportError`):

- runs of more than one site (NVC782);
- one run given twice (NVC756), or one period in two runs (NVC785: collected twice);
- two samples of one series at one time (NVC784: a bandwidth.csv holding a row twice):
  promtool keeps one of them without a word, as it drops a sample out of time order.

A sample needs a time to be backfilled. Each row's is (`measuredtimes.py`), in order:

- `logs` or `section`: a packed run's row (a period's are) its own section's time: the
  last `kubectl logs --timestamps` time inside it, else the start its begin line prints;
- `objects`: its measurement's completion time, from the objects read (NVCRE's
  BandwidthMeasurement, or in trainer mode the TrainJob's `completionTime`);
- `logs`: the last `kubectl logs --timestamps` time of its log (trainer mode);
- `collection`: the archive's collection time: the signed Statement's `collectedAt`, else
  when SHA256SUMS was written. Logs saved without timestamps and without their objects
  give nothing else; the label says so, so such samples are not read as measured then.

`time_from` says which, per series; a median's is the worst of its rounds' (collection
over section over logs over objects). Samples are sorted by family, labels and time, so
every series' samples are in time order and the same archives give the same bytes.
"""

from __future__ import annotations

import itertools
import re
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from nvcregen.core import codes
from nvcregen.report.archive import ReadArchive
from nvcregen.report.folder import ReportError
from nvcregen.report.measuredtimes import measured, row_key
from nvcregen.report.measuredtimes import seconds as _seconds
from nvcregen.results.archivemodel import BandwidthCsvRow
from nvcregen.results.logplace import period_of

_CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029]")
FAMILIES = (
    ("nvcregen_nccl_busbw_gbs", "NCCL bus bandwidth of one round at one message size, GB/s"),
    ("nvcregen_nccl_algbw_gbs", "NCCL algorithm bandwidth of one round at one message size, GB/s"),
    ("nvcregen_nccl_busbw_median_gbs", "Median bus bandwidth of a group over its final rounds"),
)  # fmt: skip
Labels = tuple[tuple[str, str], ...]
SOURCES = ("objects", "logs", "section", "collection")  # best first
OTHER_SITE = codes.NVC782.code
SAME_RUN = codes.NVC756.code
TWO_SAMPLES = codes.NVC784.code
SAME_PERIOD = codes.NVC785.code


@dataclass(frozen=True)
class Sample:
    """One sample: its family, labels, value and time (seconds since the epoch)."""

    family: str
    labels: Labels
    value: float
    time: float


@dataclass(frozen=True)
class Run:
    """One verified run to export, its `cluster` label, and its collection time.

    `collected_at` (RFC 3339 UTC) dates the rows nothing else dates; None when unknown.
    """

    archive: ReadArchive
    cluster: str
    collected_at: str | None


@dataclass(frozen=True)
class Export:
    """The OpenMetrics text, its samples, and how many rows took each time source."""

    text: str
    samples: tuple[Sample, ...]
    sources: Mapping[str, int]  # bandwidth.csv rows (round x size) per time source
    collected_at: tuple[str, ...] = ()  # the collection times used, when any was


def seconds(stamp: str) -> float:
    """An RFC 3339 UTC time (`2026-10-14T13:01:00Z`) as seconds since the epoch.

    Raises:
        ValueError: It is no such time.

    """
    found = _seconds(stamp)
    if found is None:
        raise ValueError(f"not an RFC 3339 time: {stamp!r}")
    return found


def export_metrics(archive: ReadArchive, cluster: str, collected_at: str | None) -> Export:
    """Every final round of one archive as samples, and their OpenMetrics text.

    Args:
        archive: The verified run.
        cluster: The `cluster` label.
        collected_at: The archive's collection time (RFC 3339 UTC), for rounds neither
            the objects nor the logs date; None when it is unknown too.

    Raises:
        ReportError: Two samples of one series at one time (NVC784).

    """
    return export_runs([Run(archive, cluster, collected_at)])


def export_runs(runs: Sequence[Run]) -> Export:
    """Every final round of every run (of one site) as samples, and their text.

    Raises:
        ReportError: Runs of two sites (NVC782), one run twice (NVC756), one period in
            two runs (NVC785), or two samples of one series at one time (NVC784).

    """
    _one_site(runs)
    samples: list[Sample] = []
    sources = dict.fromkeys(SOURCES, 0)
    used: set[str] = set()
    for run in runs:
        found, counted = _run_samples(run)
        samples += found
        for source, n in counted.items():
            sources[source] += n
        if counted["collection"] and run.collected_at:
            used.add(run.collected_at)
    ordered = tuple(sorted(samples, key=lambda s: (s.family, s.labels, s.time)))
    _each_time_once(ordered)
    return Export(render(ordered), ordered, sources, tuple(sorted(used)))


def _run_samples(run: Run) -> tuple[list[Sample], dict[str, int]]:
    """One run's samples, and how many rows took each time source."""
    archive = run.archive
    times = measured(archive)
    samples: list[Sample] = []
    sources = dict.fromkeys(SOURCES, 0)
    groups: dict[Labels, list[tuple[float, float, str]]] = {}
    for row in archive.bandwidth:
        if row.finality != "final":
            continue
        found = times.get(row_key(row))
        nodes = found.nodes if found is not None else ()
        when, source = (found.when, found.source) if found and found.when else (None, "")
        if when is None:
            when, source = run.collected_at, "collection"
        at = _seconds(when) if when is not None else None
        if at is None:
            continue
        sources[source] += 1
        base = _labels(archive, run.cluster, row, nodes)
        per_round = (*base, ("round", str(row.round or "")), ("time_from", source))
        samples.append(Sample("nvcregen_nccl_busbw_gbs", _sorted(per_round), row.busbw, at))
        samples.append(Sample("nvcregen_nccl_algbw_gbs", _sorted(per_round), row.algbw, at))
        groups.setdefault(_sorted(base), []).append((row.busbw, at, source))
    for labels, rounds in groups.items():
        median = statistics.median(v for v, _, _ in rounds)
        worst = max((s for _, _, s in rounds), key=SOURCES.index)
        samples.append(
            Sample(
                "nvcregen_nccl_busbw_median_gbs",
                _sorted((*labels, ("time_from", worst))),
                median,
                max(t for _, t, _ in rounds),
            )
        )
    return samples, sources


def _one_site(runs: Sequence[Run]) -> None:
    """Refuse runs of two sites, one run twice, or one period in two runs."""
    first: dict[str, Run] = {}
    periods: dict[str, Run] = {}
    for run in runs:
        summary = run.archive.summary
        site = first.setdefault("site", run)
        if summary.site != site.archive.summary.site:
            raise ReportError(
                f"error[{OTHER_SITE}]: {run.archive.path} is a run of site"
                f" {summary.site!r}, {site.archive.path} of {site.archive.summary.site!r}:"
                " one export holds the runs of one site; nothing written (hint: give the"
                " runs of one site folder)"
            )
        same = first.setdefault(f"run:{summary.run_id}", run)
        if same is not run:
            raise ReportError(
                f"error[{SAME_RUN}]: {same.archive.path} and {run.archive.path} hold the same"
                f" run {summary.run_id}: each sample would be written twice; nothing written"
                " (hint: give it once)"
            )
        own = {period_of(r.measurement) for r in run.archive.bandwidth} - {""}
        for period in sorted(own):
            other = periods.setdefault(period, run)
            if other is not run:
                raise ReportError(
                    f"error[{SAME_PERIOD}]: period {period} is in both {other.archive.path}"
                    f" and {run.archive.path} (collected twice): a node's series would hold"
                    " it twice; nothing written (hint: give one of them)"
                )


def _each_time_once(ordered: Sequence[Sample]) -> None:
    """Refuse two samples of one series at one time (promtool keeps one, silently)."""
    for before, after in itertools.pairwise(ordered):
        if (before.family, before.labels, before.time) == (after.family, after.labels, after.time):
            labels = ",".join(f'{k}="{_escape(v)}"' for k, v in after.labels)
            raise ReportError(
                f"error[{TWO_SAMPLES}]: two samples of {after.family}{{{labels}}} at"
                f" {after.time:.3f} ({before.value!r} and {after.value!r}): its run's"
                " bandwidth.csv holds one measurement twice, and promtool would keep one of"
                " them without a word; nothing written (hint: collect the run again)"
            )


def time_line(found: Export) -> str:
    """Which times the samples carry, for the printed summary."""
    several = len(found.collected_at) > 1
    archives = "the archives' collection times" if several else "the archive's collection time"
    words = {
        "objects": "the objects' completion times",
        "logs": "their logs' timestamps",
        "section": "their packed sections' start times (the sections carry no timestamps)",
        "collection": f"{archives} {', '.join(found.collected_at)}"
        " (neither objects nor logs date them: not when they were measured)",
    }
    used = [f"{n} rows at {words[s]}" for s, n in found.sources.items() if n]
    return "times: " + "; ".join(used)


def _labels(
    archive: ReadArchive, cluster: str, row: BandwidthCsvRow, nodes: Sequence[str]
) -> Labels:
    period = period_of(row.measurement)
    return (
        ("cluster", cluster),
        ("site", archive.summary.site),
        ("stage", row.stage),
        ("test", row.test),
        ("scope", row.scope),
        ("transport", ",".join(row.transports)),
        ("size", str(row.size_bytes)),
        ("group", row.group),
        ("nodes", ",".join(nodes)),
        ("run", archive.summary.run_id),
        *((("period", period),) if period else ()),
    )


def _sorted(labels: Iterable[tuple[str, str]]) -> Labels:
    return tuple(sorted(labels))


def render(samples: Iterable[Sample]) -> str:
    """OpenMetrics text: each family's HELP and TYPE, its samples, then `# EOF`."""
    by_family: dict[str, list[Sample]] = {name: [] for name, _ in FAMILIES}
    for sample in samples:
        by_family[sample.family].append(sample)
    lines = []
    for name, help_text in FAMILIES:
        if not by_family[name]:
            continue
        lines += [f"# HELP {name} {help_text}.", f"# TYPE {name} gauge"]
        for s in by_family[name]:
            labels = ",".join(f'{k}="{_escape(v)}"' for k, v in s.labels)
            lines.append(f"{name}{{{labels}}} {s.value!r} {s.time:.3f}")
    return "\n".join([*lines, "# EOF"]) + "\n"


def _escape(value: str) -> str:
    """A label value as OpenMetrics escapes it, other control characters as U+FFFD.

    A terminal's escape sequences from an untrusted archive become a character promtool
    reads and a terminal does not obey.
    """
    escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return _CONTROL.sub("\ufffd", escaped)
