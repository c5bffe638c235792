"""SVG geometry of a bandwidth chart (pure): log2 x axis for sizes, linear y axis from 0.

Only numbers are computed here; `templates/report.html.j2` writes the SVG elements, so
every label passes through the template's HTML escaping. Coordinates are rounded to
two decimals so the same data always gives the same bytes.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from nvcregen.core.units import format_size

SeriesKind = Literal["round", "provisional", "median"]
_NICE_STEPS = (1.0, 2.0, 2.5, 5.0, 10.0)
_MAX_X_TICKS = 10
_Y_TICKS = 5
_X_PAD = 0.5  # octaves of room left and right of the outermost sizes


@dataclass(frozen=True)
class Frame:
    """The chart's size and the margins around its plot area (pixels)."""

    width: int = 760
    height: int = 360
    left: int = 64
    right: int = 20
    top: int = 24
    bottom: int = 48

    @property
    def x0(self) -> int:
        """Left edge of the plot area."""
        return self.left

    @property
    def x1(self) -> int:
        """Right edge of the plot area."""
        return self.width - self.right

    @property
    def y0(self) -> int:
        """Bottom edge of the plot area (the value 0)."""
        return self.height - self.bottom

    @property
    def y1(self) -> int:
        """Top edge of the plot area."""
        return self.top


@dataclass(frozen=True)
class LogScale:
    """Pixel x of a message size: linear in log2(size) between two exponents."""

    lo: float
    hi: float
    px0: float
    px1: float

    def __call__(self, size: int) -> float:
        """The x pixel of `size` bytes (sizes below 1 byte sit at 1 byte)."""
        share = (math.log2(max(size, 1)) - self.lo) / (self.hi - self.lo)
        return round(self.px0 + share * (self.px1 - self.px0), 2)


@dataclass(frozen=True)
class LinearScale:
    """Pixel y of a value: 0 at the bottom edge, `top` at the top edge."""

    top: float
    px0: float
    px1: float

    def __call__(self, value: float) -> float:
        """The y pixel of `value` (SVG y grows downwards)."""
        return round(self.px0 - (value / self.top) * (self.px0 - self.px1), 2)


@dataclass(frozen=True)
class Series:
    """One line to draw: (size, value) points, drawn in order of size."""

    label: str
    points: tuple[tuple[int, float], ...]
    color: str
    kind: SeriesKind
    muted: bool = False  # one of many passing groups: drawn first, thin, without a legend


@dataclass(frozen=True)
class Rule:
    """A threshold: a horizontal line at `value`, marked at its message size `at`."""

    value: float
    at: int | None
    label: str
    word: str


@dataclass(frozen=True)
class Tick:
    """An axis tick: its pixel position and its label."""

    pos: float
    label: str


@dataclass(frozen=True)
class Dot:
    """A point of a median line, with the text a browser shows on hover."""

    x: float
    y: float
    title: str


@dataclass(frozen=True)
class Line:
    """A series placed on the chart (`points` is an SVG polyline `points` value)."""

    label: str
    points: str
    color: str
    kind: SeriesKind
    dots: tuple[Dot, ...] = ()
    muted: bool = False


@dataclass(frozen=True)
class RuleMark:
    """A threshold placed on the chart; `marker_x` is None without a message size."""

    y: float
    x0: float
    x1: float
    marker_x: float | None
    label: str
    word: str


@dataclass(frozen=True)
class Chart:
    """Everything the template needs to draw one chart."""

    frame: Frame
    x_ticks: tuple[Tick, ...]
    y_ticks: tuple[Tick, ...]
    lines: tuple[Line, ...]
    rules: tuple[RuleMark, ...]
    y_label: str
    x_label: str = "message size (log2 scale)"


def x_domain(sizes: Iterable[int]) -> tuple[float, float]:
    """log2 exponents from half an octave below the smallest size to half above the largest."""
    exponents = [math.log2(max(s, 1)) for s in sizes] or [20.0]
    return min(exponents) - _X_PAD, max(exponents) + _X_PAD


def x_ticks(lo: float, hi: float) -> list[int]:
    """Exponents to label: every octave, or every n-th, for at most ten labels."""
    step = max(1, math.ceil((hi - lo) / _MAX_X_TICKS))
    first = math.ceil(math.ceil(lo) / step) * step
    return list(range(first, math.floor(hi) + 1, step))


def nice_axis(largest: float) -> tuple[float, list[float]]:
    """A round top of the y axis at or above `largest`, and about five round ticks."""
    if largest <= 0 or not math.isfinite(largest):
        return 1.0, [0.0, 0.25, 0.5, 0.75, 1.0]
    magnitude = 10 ** math.floor(math.log10(largest / _Y_TICKS))
    step = next(m * magnitude for m in _NICE_STEPS if m * magnitude * _Y_TICKS >= largest)
    count = math.ceil(largest / step - 1e-9)  # 300 / 100 is 3 ticks, not 4
    if round(count * step, 10) < largest:
        count += 1
    return round(count * step, 10), [round(i * step, 10) for i in range(count + 1)]


def value_label(value: float) -> str:
    """A tick or hover value: at most four significant digits."""
    return f"{value:.4g}"


def layout(
    series: Sequence[Series], rules: Sequence[Rule], y_label: str, frame: Frame | None = None
) -> Chart:
    """Place series and thresholds on a chart; the axes cover every point and threshold."""
    frame = frame or Frame()
    sizes = [s for line in series for s, _ in line.points] + [r.at for r in rules if r.at]
    values = [v for line in series for _, v in line.points] + [r.value for r in rules]
    lo, hi = x_domain(sizes)
    top, y_values = nice_axis(max(values, default=0.0) * 1.05)
    sx = LogScale(lo, hi, frame.x0, frame.x1)
    sy = LinearScale(top, frame.y0, frame.y1)
    return Chart(
        frame=frame,
        x_ticks=tuple(Tick(sx(2**e), format_size(2**e)) for e in x_ticks(lo, hi)),
        y_ticks=tuple(Tick(sy(v), value_label(v)) for v in y_values),
        lines=tuple(_line(s, sx, sy) for s in series),
        rules=tuple(_rule(r, sx, sy, frame) for r in rules),
        y_label=y_label,
    )


def _line(series: Series, sx: LogScale, sy: LinearScale) -> Line:
    ordered = sorted(series.points)
    points = " ".join(f"{sx(size)},{sy(value)}" for size, value in ordered)
    dots: tuple[Dot, ...] = ()
    if series.kind == "median" and not series.muted:
        dots = tuple(
            Dot(sx(s), sy(v), f"{series.label}: {value_label(v)} at {format_size(s)}")
            for s, v in ordered
        )
    return Line(series.label, points, series.color, series.kind, dots, series.muted)


def _rule(rule: Rule, sx: LogScale, sy: LinearScale, frame: Frame) -> RuleMark:
    marker = sx(rule.at) if rule.at is not None else None
    return RuleMark(sy(rule.value), frame.x0, frame.x1, marker, rule.label, rule.word)
