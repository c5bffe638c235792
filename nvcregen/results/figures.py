"""Figures over rounds: each figure's median taken on its own, and its spread (pure).

A figure is one number per round (bus bandwidth at 1 GiB, goodput, ...). Its median is
the median of that number over the rounds, never a value derived from the medians of
other figures: the median time is not size / median algbw. Spread is (max - min) /
median, the relative range the field report quotes ("about 21% of the median").
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence

from nvcregen.results.models import BandwidthMeasurement, GoodputMeasurement, StatusModel


class Figure(StatusModel):
    """One figure over the final rounds of one group."""

    name: str
    unit: str = ""
    rounds: tuple[float, ...] = ()
    median: float | None = None
    spread: float | None = None


def median_of(values: Sequence[float]) -> float | None:
    """The median, or None without values."""
    return statistics.median(values) if values else None


def spread_of(values: Sequence[float]) -> float | None:
    """(max - min) / median; None without values or when the median is 0."""
    middle = median_of(values)
    if not values or not middle:
        return None
    return (max(values) - min(values)) / middle


def figure(name: str, unit: str, values: Sequence[float]) -> Figure:
    """A figure from its per-round values."""
    return Figure(
        name=name,
        unit=unit,
        rounds=tuple(values),
        median=median_of(values),
        spread=spread_of(values),
    )


def bandwidth_figures(
    rounds: Sequence[BandwidthMeasurement], size_bytes: int | None
) -> tuple[Figure, ...]:
    """Bus and algorithm bandwidth (GB/s) over the rounds, at one size or the best one.

    Without a size each round contributes its maximum over all sizes, figure by figure,
    which is what NVCRE compares (nvcre-api §5.4). Rounds lacking the size are left out.
    """
    if size_bytes is None:
        busbw = [max((r.bus_bw for r in m.rows), default=None) for m in rounds]
        algbw = [max((r.alg_bw for r in m.rows), default=None) for m in rounds]
    else:
        rows = [m.at(size_bytes) for m in rounds]
        busbw = [r.bus_bw if r else None for r in rows]
        algbw = [r.alg_bw if r else None for r in rows]
    return (
        figure("busbw", "GB/s", [v for v in busbw if v is not None]),
        figure("algbw", "GB/s", [v for v in algbw if v is not None]),
    )


_GOODPUT: tuple[tuple[str, str, Callable[[GoodputMeasurement], float | None]], ...] = (
    ("goodput", "", lambda m: m.ratio),
    ("training_time", "s", lambda m: m.components.training),
    ("lost_work_time", "s", lambda m: m.components.lost_work),
    ("resume_time", "s", lambda m: m.components.resume),
    ("reschedule_time", "s", lambda m: m.components.reschedule),
    ("checkpoint_save_time", "s", lambda m: m.components.checkpoint_save),
    ("avg_step_time", "s", lambda m: m.avg_step_time_sec),
    ("avg_tflops_per_gpu", "TFLOPS", lambda m: m.avg_tflops_per_gpu),
)


def goodput_figures(rounds: Sequence[GoodputMeasurement]) -> tuple[Figure, ...]:
    """Goodput and each of its components over the rounds, each with its own median."""
    figures = []
    for name, unit, read in _GOODPUT:
        values = [v for v in (read(m) for m in rounds) if v is not None]
        if values or name == "goodput":
            figures.append(figure(name, unit, values))
    return tuple(figures)
