"""The physics model's public API: bandwidths, durations, timeouts and GPU-hours (pure).

Every function takes a planned test (`TestUnit`) or its `Run`, and the catalog.
Bandwidths are bus bandwidths in GB/s, as nccl-tests prints them; durations are seconds
of one job (one node group, one round), from its start to its end, image pulls excluded.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from nvcregen.catalog.physics_data import PathKind
from nvcregen.core import units
from nvcregen.kindapi.registry import kind_of
from nvcregen.plan import bandwidth, evidence, sweep
from nvcregen.plan.run import Run, run_of

if TYPE_CHECKING:
    from nvcregen.catalog.load import Catalog
    from nvcregen.kindapi.protocol import Sweep
    from nvcregen.plan.model import TestUnit

MINUTE_MS = 60_000
_SECOND_MS = 1000


def _run(unit: TestUnit | Run) -> Run:
    return unit if isinstance(unit, Run) else run_of(unit)


def line_rate_bound(unit: TestUnit | Run, catalog: Catalog) -> float | None:
    """The most bus bandwidth the declared links allow (GB/s); None when nothing is moved."""
    found = bandwidth.ceiling(_run(unit), catalog.physics)
    return found[1] if found else None


def ceiling_busbw(unit: TestUnit | Run, catalog: Catalog) -> float | None:
    """The line-rate bound, lifted where measurements on the same path beat it (GB/s)."""
    run = _run(unit)
    bound = line_rate_bound(run, catalog)
    return None if bound is None else bound * evidence.calibration(run, catalog)[0]


def modelled_busbw(unit: TestUnit | Run, catalog: Catalog) -> float | None:
    """Typical bound x expected efficiency of the limiting link (GB/s)."""
    found = bandwidth.binding(_run(unit), catalog.physics)
    return found[1] if found else None


def expected_busbw(unit: TestUnit | Run, catalog: Catalog) -> float | None:
    """The bus bandwidth to expect at the largest sizes (GB/s).

    The median of a baseline that measured exactly this configuration when there is
    one, else the modelled figure; None for tests that measure no bandwidth.
    """
    run = _run(unit)
    baseline = evidence.matching_baseline(run, catalog)
    return evidence.median_busbw(baseline) if baseline else modelled_busbw(run, catalog)


def timing_busbw(unit: TestUnit | Run, catalog: Catalog) -> float | None:
    """The bus bandwidth durations assume: the lower of modelled and measured (GB/s)."""
    run = _run(unit)
    modelled = modelled_busbw(run, catalog)
    baseline = evidence.matching_baseline(run, catalog)
    if modelled is None or baseline is None:
        return modelled
    return min(modelled, evidence.median_busbw(baseline))


def latency_s(run: Run, catalog: Catalog) -> float:
    """The floor of one collective call (s): its link's, times the tree depth across nodes."""
    data = catalog.physics
    if run.scope == "inter-node" and run.nodes > 1:
        path = bandwidth.network_rates(run, data)[0]
        depth = max(1, math.ceil(math.log2(run.nodes)))
    else:
        path, depth = bandwidth.gpu_link(run, data)[0], 1
    return data.latency_us.of(path) * depth / 1e6


def call_seconds(run: Run, catalog: Catalog, size: int) -> float:
    """One collective call on `size` bytes: the latency floor plus the bytes at algbw."""
    latency, algbw = _call_model(run, catalog)
    return latency + size / (algbw * 1e9)


def _call_model(run: Run, catalog: Catalog) -> tuple[float, float]:
    """(latency floor in s, algbw in GB/s) of every call of a run."""
    collective = run.collective
    busbw = timing_busbw(run, catalog)
    assert collective is not None
    assert busbw is not None
    factor = bandwidth.bus_factor(collective, run.ranks)
    algbw = busbw / factor if factor > 0 and busbw > 0 else _local_gbs(run, catalog)
    return latency_s(run, catalog), algbw


def _local_gbs(run: Run, catalog: Catalog) -> float:
    """Stand-in algbw for one rank, which moves nothing over a link: its own link's rate."""
    return bandwidth.gpu_link(run, catalog.physics)[1]


def busbw_at(unit: TestUnit | Run, catalog: Catalog, size: int) -> float | None:
    """Expected bus bandwidth at one message size, latency floor included (GB/s)."""
    run = _run(unit)
    expected = expected_busbw(run, catalog)
    collective = run.collective
    if expected is None or collective is None:
        return None
    factor = bandwidth.bus_factor(collective, run.ranks)
    if factor <= 0 or expected <= 0:
        return 0.0
    seconds = latency_s(run, catalog) + size * factor / (expected * 1e9)
    return size / seconds / 1e9 * factor


def expected_duration(unit: TestUnit | Run, catalog: Catalog) -> float:
    """Expected seconds of one job of a test, start-up included."""
    run = _run(unit)
    fixed = kind_of(run.test).fixed_time(run.test, catalog.physics.startup.dcgm)
    return _sweep_seconds(run, catalog) if fixed is None else fixed.seconds


def _swept(run: Run) -> Sweep:
    """The sweep of a run its kind gives no fixed time: the sweep model times it."""
    found = run.sweep
    if found is None:
        kind = kind_of(run.test).name
        raise ValueError(f"test {run.test.name}: the {kind} kind gives neither a time nor a sweep")
    return found


def _sweep_seconds(run: Run, catalog: Catalog) -> float:
    swept = _swept(run)
    defaults = catalog.physics.nccl_tests
    high = largest_size(run, catalog)
    sizes = sweep.sizes(swept, high) or (high,)
    latency, algbw = _call_model(run, catalog)

    def call(size: int) -> float:
        return latency + size / (algbw * 1e9)

    startup = units.parse_duration(catalog.physics.startup.nccl) / 1000
    calls = sweep.calls_per_size(swept, defaults)
    warmup = defaults.warmup_iterations * (call(high) + call(sizes[0]))
    return startup + warmup + swept.cycles * calls * sum(call(s) for s in sizes)


def largest_size(unit: TestUnit | Run, catalog: Catalog) -> int:
    """The largest message nccl-tests runs on this hardware (memory may lower maxBytes)."""
    run = _run(unit)
    return sweep.max_bytes(_swept(run), run.hardware.memory_gb, catalog.physics.nccl_tests)


def measured_sizes(unit: TestUnit | Run, catalog: Catalog) -> tuple[int, ...]:
    """The sizes nccl-tests prints rows for: the sweep, as each collective rounds it."""
    run = _run(unit)
    swept, collective = run.sweep, run.collective
    if swept is None or collective is None:
        return ()
    element = catalog.physics.nccl_tests.element_bytes
    found = sweep.sizes(swept, largest_size(run, catalog))
    return tuple(sweep.printed_size(s, collective, run.ranks, element) for s in found)


def expected_ms(unit: TestUnit | Run, catalog: Catalog) -> int:
    """The expected duration in milliseconds, rounded up to a whole second."""
    return math.ceil(expected_duration(unit, catalog)) * _SECOND_MS


def timeout_ms(expected: int, factor: float) -> int:
    """`expected` ms times the safety factor, rounded up to whole minutes."""
    scaled = math.ceil(round(expected * factor, 6))
    return -(-scaled // MINUTE_MS) * MINUTE_MS


def gpu_hours(unit: TestUnit | Run, catalog: Catalog) -> float:
    """GPU-hours one job of the test holds for its expected duration."""
    run = _run(unit)
    return run.ranks * expected_duration(run, catalog) / 3600


def explain(unit: TestUnit | Run, catalog: Catalog) -> str:
    """How the expected duration was derived, in one line."""
    run = _run(unit)
    fixed = kind_of(run.test).fixed_time(run.test, catalog.physics.startup.dcgm)
    return _explain_sweep(run, catalog) if fixed is None else fixed.explanation


def _explain_sweep(run: Run, catalog: Catalog) -> str:
    swept, collective = _swept(run), run.collective
    assert collective is not None
    data = catalog.physics
    calls = sweep.calls_per_size(swept, data.nccl_tests)
    limit = bandwidth.binding(run, data)
    busbw = timing_busbw(run, catalog) or 0.0
    how = f"{collective} over {run.ranks} ranks"
    if limit is not None:
        efficiency = data.efficiency.of(limit[0].path).of(collective)
        how += f", limited by {limit[0].text} at efficiency {efficiency:g}"
    return (
        f"{data.startup.nccl} start-up + {swept.cycles} cycles x "
        f"{sweep.describe(swept, largest_size(run, catalog))} "
        f"x {calls} calls at {busbw:.1f} GB/s busbw ({how}) + warm-up and "
        f"{data.latency_us.of(_latency_path(run, catalog)):g} us per call"
    )


def _latency_path(run: Run, catalog: Catalog) -> PathKind:
    if run.scope == "inter-node" and run.nodes > 1:
        return bandwidth.network_rates(run, catalog.physics)[0]
    return bandwidth.gpu_link(run, catalog.physics)[0]
