"""SVG geometry: log2 x positions, linear y from 0, thresholds at their value and size."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nvcregen.report.plot import (
    Frame,
    LinearScale,
    LogScale,
    Rule,
    Series,
    layout,
    nice_axis,
    x_domain,
    x_ticks,
)

MIB, GIB = 1 << 20, 1 << 30


def xy(points: str) -> list[tuple[float, float]]:
    pairs = [p.split(",") for p in points.split()]
    return [(float(x), float(y)) for x, y in pairs]


def series(points: tuple[tuple[int, float], ...], kind: str = "round") -> Series:
    return Series("s", points, "#000000", kind)  # type: ignore[arg-type]


def test_points_are_monotone_in_x_for_increasing_sizes_whatever_the_input_order() -> None:
    sizes = [8 * MIB, MIB, GIB, 64 * MIB, 2 * MIB]
    chart = layout([series(tuple((s, 1.0) for s in sizes))], [], "GB/s")
    xs = [x for x, _ in xy(chart.lines[0].points)]
    assert xs == sorted(xs)
    assert len(set(xs)) == len(xs)


def test_x_is_linear_in_log2_of_the_size() -> None:
    chart = layout([series(((MIB, 1.0), (2 * MIB, 1.0), (4 * MIB, 1.0), (GIB, 1.0)))], [], "")
    xs = [x for x, _ in xy(chart.lines[0].points)]
    octave = xs[1] - xs[0]
    assert octave > 0
    assert xs[2] - xs[1] == pytest.approx(octave, abs=0.02)
    assert xs[3] - xs[0] == pytest.approx(10 * octave, abs=0.05)  # 1 MiB -> 1 GiB: 10 octaves
    frame = chart.frame
    assert frame.x0 < xs[0] and xs[-1] < frame.x1  # half an octave of room on each side


def test_y_is_zero_at_the_bottom_and_grows_upwards() -> None:
    chart = layout([series(((MIB, 0.0), (2 * MIB, 100.0), (4 * MIB, 400.0)))], [], "")
    ys = [y for _, y in xy(chart.lines[0].points)]
    assert ys[0] == chart.frame.y0
    assert ys[0] > ys[1] > ys[2] >= chart.frame.y1
    top = float(chart.y_ticks[-1].label)
    scale = (chart.frame.y0 - chart.frame.y1) / top
    assert ys[1] == pytest.approx(chart.frame.y0 - 100 * scale, abs=0.01)


def test_a_threshold_is_drawn_at_its_value_and_marked_at_its_size() -> None:
    data = series(((MIB, 40.0), (64 * MIB, 300.0), (GIB, 420.0)))
    chart = layout([data], [Rule(360.0, GIB, "busbw >= 360 GB/s at 1GiB", "pass")], "")
    rule = chart.rules[0]
    top = float(chart.y_ticks[-1].label)
    frame = chart.frame
    assert rule.y == pytest.approx(frame.y0 - 360 / top * (frame.y0 - frame.y1), abs=0.01)
    points = xy(chart.lines[0].points)
    assert rule.marker_x == points[-1][0]  # the 1 GiB point
    assert points[-1][1] < rule.y < points[1][1]  # 420 above the line, 300 below it
    assert (rule.x0, rule.x1) == (frame.x0, frame.x1)


def test_the_axes_include_a_threshold_above_the_data_and_a_size_not_measured() -> None:
    chart = layout([series(((MIB, 10.0), (2 * MIB, 20.0)))], [Rule(500.0, GIB, "", "fail")], "")
    assert float(chart.y_ticks[-1].label) >= 500
    assert chart.frame.y1 <= chart.rules[0].y < chart.frame.y0
    marker = chart.rules[0].marker_x
    assert marker is not None and chart.frame.x0 < marker < chart.frame.x1


def test_a_threshold_without_a_size_has_no_marker() -> None:
    chart = layout([series(((MIB, 10.0),))], [Rule(5.0, None, "best size", "pass")], "")
    assert chart.rules[0].marker_x is None


def test_only_median_lines_carry_hover_dots() -> None:
    chart = layout(
        [series(((MIB, 1.0), (GIB, 2.0))), series(((MIB, 1.5), (GIB, 2.5)), "median")], [], ""
    )
    assert chart.lines[0].dots == ()
    assert [d.title for d in chart.lines[1].dots] == ["s: 1.5 at 1MiB", "s: 2.5 at 1GiB"]


def test_x_ticks_are_labelled_with_sizes() -> None:
    chart = layout([series(((MIB, 1.0), (4 * MIB, 1.0)))], [], "")
    assert [t.label for t in chart.x_ticks] == ["1MiB", "2MiB", "4MiB"]


def test_a_single_size_still_gets_a_visible_axis() -> None:
    lo, hi = x_domain([GIB])
    assert hi - lo == 1
    assert x_ticks(lo, hi) == [30]


@given(st.lists(st.integers(min_value=1, max_value=1 << 40), min_size=1, max_size=30))
def test_x_ticks_stay_in_the_domain_and_are_at_most_ten(sizes: list[int]) -> None:
    lo, hi = x_domain(sizes)
    ticks = x_ticks(lo, hi)
    assert 1 <= len(ticks) <= 10
    assert all(lo <= t <= hi for t in ticks)
    assert lo <= math.log2(min(sizes)) and math.log2(max(sizes)) <= hi


@given(st.floats(min_value=1e-3, max_value=1e6, allow_nan=False))
def test_nice_axis_covers_the_largest_value_with_even_round_ticks(largest: float) -> None:
    top, ticks = nice_axis(largest)
    assert top >= largest
    assert ticks[0] == 0 and ticks[-1] == top
    assert 2 <= len(ticks) <= 7
    steps = {round(b - a, 9) for a, b in itertools.pairwise(ticks)}
    assert len(steps) == 1
    step = steps.pop()
    mantissa = step / 10 ** math.floor(math.log10(step))
    assert any(math.isclose(mantissa, m) for m in (1, 2, 2.5, 5, 10))


def test_scales_round_to_two_decimals() -> None:
    assert LogScale(0, 3, 0, 100)(2) == 33.33
    assert LinearScale(3, 300, 0)(1) == 200.0
    assert Frame().x1 == Frame().width - Frame().right
