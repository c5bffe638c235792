"""An archive's results as OpenMetrics text, for `promtool tsdb create-blocks-from openmetrics`.

The seed exported its saved NCCL results as metrics of their own, apart from the
controller's `nvcre_*` gauges (which vanish when a run ends); these are nvcregen's:

- `nvcregen_nccl_busbw_gbs`, `nvcregen_nccl_algbw_gbs`: one sample per final round,
  group and message size, at the time that round's measurement completed;
- `nvcregen_nccl_busbw_median_gbs`: per group and size, the median over the final
  rounds (the figure verdicts compare), at the time the last of them completed.

Labels: `cluster` (as the monitoring layer's rules carry it), `site`, `stage`, `test`,
`scope`, `transport`, `size` (bytes), `group`, `run` (the archive's run id), and `round`
on the per-round families. A round with no completion time takes the run's
`finished_at`; one with neither is left out (a sample needs a time to be backfilled).
Samples are sorted, so the same archive always gives the same bytes.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from nvcregen.report.archive import Archive, BandwidthRow

_CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029]")
FAMILIES = (
    ("nvcregen_nccl_busbw_gbs", "NCCL bus bandwidth of one round at one message size, GB/s"),
    ("nvcregen_nccl_algbw_gbs", "NCCL algorithm bandwidth of one round at one message size, GB/s"),
    ("nvcregen_nccl_busbw_median_gbs", "Median bus bandwidth of a group over its final rounds"),
)  # fmt: skip
Labels = tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Sample:
    """One sample: its family, labels, value and time (seconds since the epoch)."""

    family: str
    labels: Labels
    value: float
    time: float


@dataclass(frozen=True)
class Export:
    """The OpenMetrics text and the rounds left out for want of a time."""

    text: str
    samples: tuple[Sample, ...]
    left_out: tuple[str, ...]


def seconds(stamp: str) -> float:
    """An RFC 3339 UTC time (`2026-10-14T13:01:00Z`) as seconds since the epoch."""
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


def export_metrics(archive: Archive, cluster: str) -> Export:
    """Every final round of an archive as samples, and their OpenMetrics text."""
    times = _round_times(archive)
    samples: list[Sample] = []
    left_out: list[str] = []
    groups: dict[Labels, list[tuple[float, float]]] = {}
    for row in archive.bandwidth:
        if row.finality != "final":
            continue
        when = times.get(row.measurement) or archive.summary.finished_at
        if when is None:
            left_out.append(f"{row.measurement} at {row.size_bytes} bytes: no completion time")
            continue
        base = _labels(archive, cluster, row)
        at = seconds(when)
        per_round = (*base, ("round", str(row.round or "")))
        samples.append(Sample("nvcregen_nccl_busbw_gbs", _sorted(per_round), row.busbw, at))
        samples.append(Sample("nvcregen_nccl_algbw_gbs", _sorted(per_round), row.algbw, at))
        groups.setdefault(_sorted(base), []).append((row.busbw, at))
    for labels, found in groups.items():
        median = statistics.median(v for v, _ in found)
        samples.append(
            Sample("nvcregen_nccl_busbw_median_gbs", labels, median, max(t for _, t in found))
        )
    ordered = tuple(sorted(samples, key=lambda s: (s.family, s.labels, s.time)))
    return Export(render(ordered), ordered, tuple(dict.fromkeys(left_out)))


def _round_times(archive: Archive) -> dict[str, str]:
    """Each measurement's completion time, by the name bandwidth.csv gives it."""
    return {
        m.ref.name: m.completion_time
        for run in archive.summary.runs
        for m in run.bandwidth
        if m.completion_time and m.ref.name
    }


def _labels(archive: Archive, cluster: str, row: BandwidthRow) -> Labels:
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
