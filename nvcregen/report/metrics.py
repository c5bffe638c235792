"""An archive's results as OpenMetrics text, for `promtool tsdb create-blocks-from openmetrics`.

The seed exported its saved NCCL results as metrics of their own, apart from the
controller's `nvcre_*` gauges (which vanish when a run ends); these are nvcregen's:

- `nvcregen_nccl_busbw_gbs`, `nvcregen_nccl_algbw_gbs`: one sample per final round,
  group and message size, at the time that round's measurement completed;
- `nvcregen_nccl_busbw_median_gbs`: per group and size, the median over the final
  rounds (the figure verdicts compare), at the time the last of them completed.

Labels: `cluster` (as the monitoring layer's rules carry it), `site`, `stage`, `test`,
`scope`, `transport`, `size` (bytes), `group`, `run` (the archive's run id), `time_from`,
and `round` on the per-round families.

A sample needs a time to be backfilled. Each round's is, in this order:

- `objects`: its measurement's completion time, from the objects read (NVCRE's
  BandwidthMeasurement, or in trainer mode the TrainJob's `completionTime`);
- `logs`: the last `kubectl logs --timestamps` time of its log (trainer mode);
- `collection`: the archive's collection time: the signed Statement's `collectedAt`, else
  when SHA256SUMS was written. Logs saved without timestamps and without their objects
  give nothing else; the label says so, so such samples are not read as measured then.

`time_from` says which, per series; a median's is the worst of its rounds' (collection
over logs over objects). Samples are sorted, so the same archive always gives the same
bytes.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime

from nvcregen.ingest.lines import last_timestamp
from nvcregen.report.archive import ReadArchive
from nvcregen.results.archive import run_files
from nvcregen.results.archivemodel import BandwidthCsvRow
from nvcregen.results.archiveread import ArchiveFileTooLargeError, read_capped

_CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029]")
FAMILIES = (
    ("nvcregen_nccl_busbw_gbs", "NCCL bus bandwidth of one round at one message size, GB/s"),
    ("nvcregen_nccl_algbw_gbs", "NCCL algorithm bandwidth of one round at one message size, GB/s"),
    ("nvcregen_nccl_busbw_median_gbs", "Median bus bandwidth of a group over its final rounds"),
)  # fmt: skip
Labels = tuple[tuple[str, str], ...]
SOURCES = ("objects", "logs", "collection")  # best first


@dataclass(frozen=True)
class Sample:
    """One sample: its family, labels, value and time (seconds since the epoch)."""

    family: str
    labels: Labels
    value: float
    time: float


@dataclass(frozen=True)
class Export:
    """The OpenMetrics text, its samples, and how many rounds took each time source."""

    text: str
    samples: tuple[Sample, ...]
    sources: Mapping[str, int]  # bandwidth.csv rows (round x size) per time source
    collected_at: str | None = None  # the collection time used, when one was


def seconds(stamp: str) -> float:
    """An RFC 3339 UTC time (`2026-10-14T13:01:00Z`) as seconds since the epoch."""
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


def export_metrics(archive: ReadArchive, cluster: str, collected_at: str | None) -> Export:
    """Every final round of an archive as samples, and their OpenMetrics text.

    Args:
        archive: The verified run.
        cluster: The `cluster` label.
        collected_at: The archive's collection time (RFC 3339 UTC), for rounds neither
            the objects nor the logs date; None when it is unknown too.

    """
    times = _round_times(archive)
    samples: list[Sample] = []
    sources = dict.fromkeys(SOURCES, 0)
    groups: dict[Labels, list[tuple[float, float, str]]] = {}
    for row in archive.bandwidth:
        if row.finality != "final":
            continue
        when, source = times.get((row.measurement, row.round or 0), (collected_at, "collection"))
        if when is None:
            continue
        sources[source] += 1
        base = _labels(archive, cluster, row)
        at = seconds(when)
        per_round = (*base, ("round", str(row.round or "")), ("time_from", source))
        samples.append(Sample("nvcregen_nccl_busbw_gbs", _sorted(per_round), row.busbw, at))
        samples.append(Sample("nvcregen_nccl_algbw_gbs", _sorted(per_round), row.algbw, at))
        groups.setdefault(_sorted(base), []).append((row.busbw, at, source))
    for labels, found in groups.items():
        median = statistics.median(v for v, _, _ in found)
        worst = max((s for _, _, s in found), key=SOURCES.index)
        samples.append(
            Sample(
                "nvcregen_nccl_busbw_median_gbs",
                _sorted((*labels, ("time_from", worst))),
                median,
                max(t for _, t, _ in found),
            )
        )
    ordered = tuple(sorted(samples, key=lambda s: (s.family, s.labels, s.time)))
    used = collected_at if sources["collection"] else None
    return Export(render(ordered), ordered, sources, used)


def _round_times(archive: ReadArchive) -> dict[tuple[str, int], tuple[str, str]]:
    """Each round's completion time and where it comes from, by measurement and round.

    A trainer-mode round's time is its log's last timestamp when the log has one (that
    is what collect took), else its object's.
    """
    stamped = _stamped_logs(archive)
    found: dict[tuple[str, int], tuple[str, str]] = {}
    for run in archive.summary.runs:
        for m in run.bandwidth:
            if m.completion_time and m.ref.name:
                key = (m.ref.name, m.iteration or 0)
                found[key] = (m.completion_time, "logs" if key in stamped else "objects")
    return found


def _stamped_logs(archive: ReadArchive) -> set[tuple[str, int]]:
    """(run, round) of every archived log whose lines carry `kubectl --timestamps` times."""
    present = {path for path, kind in run_files(archive.path).items() if kind == "file"}
    stamped = set()
    for log in archive.summary.logs:
        if log.path not in present:  # summary.json is input: only the archive's own files
            continue
        try:
            raw = read_capped(archive.path / log.path)
        except ArchiveFileTooLargeError:  # verification refuses it first (NVC759)
            continue
        text = raw.decode("utf-8", errors="replace")
        if last_timestamp(text) is not None:
            stamped.add((log.run, log.round))
    return stamped


def time_line(found: Export) -> str:
    """Which times the samples carry, for the printed summary."""
    words = {
        "objects": "the objects' completion times",
        "logs": "their logs' timestamps",
        "collection": f"the archive's collection time {found.collected_at}"
        " (neither objects nor logs date them: not when they were measured)",
    }
    used = [f"{n} rows at {words[s]}" for s, n in found.sources.items() if n]
    return "times: " + "; ".join(used)


def _labels(archive: ReadArchive, cluster: str, row: BandwidthCsvRow) -> Labels:
    return (
        ("cluster", cluster),
        ("site", archive.summary.site),
        ("stage", row.stage),
        ("test", row.test),
        ("scope", row.scope),
        ("transport", ",".join(row.transports)),
        ("size", str(row.size_bytes)),
        ("group", row.group),
        ("run", archive.summary.run_id),
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
