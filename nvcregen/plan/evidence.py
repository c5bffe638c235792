"""Measured baselines as evidence for the physics model (pure).

A baseline is a measurement, and a measurement above a computed bound means the bound's
inputs were wrong (the declared link rate undercounts the path), not the measurement.
So a baseline does two things here:

- For the exact configuration it measured (model, nodes, GPUs per node, test, scope,
  transport and NICs), its median is the expected figure.
- For every run on the same path (model, network, NICs), it calibrates the ceiling: when
  its best round beats the computed ceiling by a ratio r > 1, every ceiling on that path
  is multiplied by r. A threshold is called impossible only above what has been seen.
"""

from __future__ import annotations

import statistics
from typing import TYPE_CHECKING

from nvcregen.catalog.load import model_key
from nvcregen.catalog.models import Baseline
from nvcregen.plan.bandwidth import ceiling
from nvcregen.plan.run import Run, run_of_baseline

if TYPE_CHECKING:
    from nvcregen.catalog.load import Catalog


def _same_path(a: Run, b: Run) -> bool:
    """Whether two runs cross the same kind of links: model, network and NICs."""
    same_nics = (a.nic_count, a.nic_speed_gbs, a.fabric) == (b.nic_count, b.nic_speed_gbs, b.fabric)
    return (
        model_key(a.hardware.model) == model_key(b.hardware.model)
        and a.network == b.network
        and (a.network == "none" or same_nics)
    )


def matching_baseline(run: Run, catalog: Catalog) -> Baseline | None:
    """The baseline that measured exactly this run's configuration, if the catalog has one."""
    for name in sorted(catalog.baselines):
        baseline = catalog.baselines[name]
        measured = run_of_baseline(baseline, catalog)
        if (
            measured is not None
            and _same_path(run, measured)
            and (run.test.name, run.scope) == (baseline.test, baseline.scope)
            and (run.nodes, run.gpus_per_node) == (baseline.nodes, baseline.gpus_per_node)
        ):
            return baseline
    return None


def median_busbw(baseline: Baseline) -> float:
    """The median bus bandwidth over a baseline's rounds (GB/s)."""
    return float(statistics.median(r.busbw for r in baseline.rounds))


def calibration(run: Run, catalog: Catalog) -> tuple[float, Baseline | None]:
    """How far measurements on this run's path beat its computed ceiling (>= 1), and by whom."""
    best: tuple[float, Baseline | None] = (1.0, None)
    data = catalog.physics
    for name in sorted(catalog.baselines):
        baseline = catalog.baselines[name]
        measured = run_of_baseline(baseline, catalog)
        bound = ceiling(measured, data) if measured is not None else None
        if measured is None or bound is None or not _same_path(run, measured) or bound[1] <= 0:
            continue
        ratio = max(r.busbw for r in baseline.rounds) / bound[1]
        if ratio > best[0]:
            best = (ratio, baseline)
    return best
