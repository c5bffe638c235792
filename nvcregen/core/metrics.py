"""The threshold vocabulary: what `busbw`, `algbw` and `goodput` mean in every layer.

A site's threshold names a field; this table says which NVCRE threshold key it compiles
to, which unit it is written in, which metric Prometheus shows it as, and what a catalog
test must measure for the field to apply. Every layer asks here instead of spelling the
names out.
"""

from __future__ import annotations

from dataclasses import dataclass

from nvcregen.core.units import UnitKind


@dataclass(frozen=True)
class Metric:
    """One threshold field and its names across NVCRE, Prometheus and the catalog."""

    field: str  # the Site's threshold field
    nvcre_key: str  # the key of NVCRE's threshold map
    unit_kind: UnitKind  # how the written bound is parsed
    unit: str  # the unit NVCRE and nvcregen report it in
    measurement: str  # what a catalog test must measure (`TestEntry.measurement`)
    prom_metric: str  # NVCRE's metric
    alert: str  # nvcregen's alert when the metric falls below the bound
    what: str  # words for people


METRICS: dict[str, Metric] = {
    "busbw": Metric(
        "busbw",
        "busBandwidthGBps",
        "bandwidth",
        "GB/s",
        "bandwidth",
        "nvcre_nccl_busbw_gbs",
        "NvcreNcclBusBandwidthBelowThreshold",
        "NCCL bus bandwidth",
    ),
    "algbw": Metric(
        "algbw",
        "algBandwidthGBps",
        "bandwidth",
        "GB/s",
        "bandwidth",
        "nvcre_nccl_algbw_gbs",
        "NvcreNcclAlgBandwidthBelowThreshold",
        "NCCL algorithm bandwidth",
    ),
    "goodput": Metric(
        "goodput",
        "goodputRatio",
        "ratio",
        "",
        "goodput",
        "nvcre_goodput_ratio",
        "NvcreGoodputBelowThreshold",
        "Goodput ratio",
    ),
}

THRESHOLD_FIELDS = tuple(METRICS)
BANDWIDTH_FIELDS = tuple(f for f, m in METRICS.items() if m.unit_kind == "bandwidth")
