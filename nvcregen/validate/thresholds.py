"""Bandwidth thresholds and their `at:` sizes against the physics model (NVC351-353).

A threshold is checked for every planned test held to it (same test and scope, and its
pool when it names one); one problem per field is reported, at the threshold's line: the
first error, else the first warning.
Only lower bounds (`>=`, `>`, `==`) are checked against what the links carry.
"""

from __future__ import annotations

import re

from nvcregen.catalog.load import Catalog
from nvcregen.core import codes, units
from nvcregen.core.errors import Diagnostic, Severity
from nvcregen.kindapi.protocol import Sweep
from nvcregen.kindapi.registry import kind_of
from nvcregen.plan import bandwidth, evidence, physics, sweep
from nvcregen.plan.model import TestUnit
from nvcregen.plan.run import run_of
from nvcregen.spec.positions import Document
from nvcregen.spec.v1alpha1 import Threshold

SLIP_RATIO = 5  # a bound under expected / SLIP_RATIO looks like a unit slip
_LOWER_BOUNDS = (">=", ">", "==")
_WRITTEN = re.compile(r"^(?P<op>\S+) (?P<num>[0-9.]+) ?(?P<unit>.*)$")
_FIELDS = ("busbw", "algbw")


def threshold_problems(
    catalog: Catalog, doc: Document, index: int, threshold: Threshold, held: list[TestUnit]
) -> list[Diagnostic]:
    """NVC351-353 for one threshold and the planned tests held to it."""
    found: list[Diagnostic] = []
    size = units.parse_size(threshold.at) if threshold.at else None
    for field in _FIELDS:
        text = getattr(threshold, field)
        if text is None:
            continue
        comparison = units.parse_comparison(text, unit_kind="bandwidth")
        if comparison.op not in _LOWER_BOUNDS:
            continue
        where = f"/spec/thresholds/{index}/{field}"
        problems = [
            p
            for u in held
            if (p := _bound_problem(catalog, doc, where, field, comparison, u, size))
        ]
        found += sorted(problems, key=lambda d: not d.is_error)[:1]  # an error before a warning
    if size is not None:
        where = f"/spec/thresholds/{index}/at"
        found += [d for u in held if (d := _size_problem(catalog, doc, where, u, size))][:1]
    return found


def _per_field(unit: TestUnit, field: str, busbw: float) -> float:
    """A bus bandwidth as `field` measures it: itself, or the algorithm bandwidth."""
    collective = run_of(unit).collective
    if field == "busbw" or collective is None:
        return busbw
    factor = bandwidth.bus_factor(collective, unit.nodes_per_job * unit.pool.gpus_per_node)
    return busbw / factor if factor > 0 else 0.0


def _bound_problem(
    catalog: Catalog,
    doc: Document,
    where: str,
    field: str,
    comparison: units.Comparison,
    unit: TestUnit,
    size: int | None,
) -> Diagnostic | None:
    ceiling = physics.ceiling_busbw(unit, catalog)
    expected = (
        physics.busbw_at(unit, catalog, size) if size else physics.expected_busbw(unit, catalog)
    )
    if ceiling is None or expected is None:
        return None
    limit, typical = _per_field(unit, field, ceiling), _per_field(unit, field, expected)
    if comparison.value > limit + 1e-9:
        message, hint = _too_high(catalog, unit, field, comparison, limit)
        return Diagnostic(doc.span(where), Severity.ERROR, codes.NVC351.code, message, where, hint)
    if comparison.value * SLIP_RATIO < typical:
        message, hint = _too_low(unit, field, comparison, typical, size)
        return Diagnostic(
            doc.span(where), Severity.WARNING, codes.NVC352.code, message, where, hint
        )
    return None


def _shape(unit: TestUnit) -> str:
    nodes = unit.nodes_per_job
    return f"{nodes} node{'s' if nodes > 1 else ''} x {unit.pool.gpus_per_node} GPUs"


def _too_high(
    catalog: Catalog, unit: TestUnit, field: str, comparison: units.Comparison, limit: float
) -> tuple[str, str]:
    run = run_of(unit)
    cut = bandwidth.ceiling(run, catalog.physics)
    links = cut[0].text if cut else "its links"
    message = (
        f"{field} {comparison.written} is more than {unit.test.name} can reach on pool "
        f"{unit.pool.spec.name} ({_shape(unit)}): {links} allows at most "
        f"{limit:.4g} GB/s {field}"
    )
    ratio, baseline = evidence.calibration(run, catalog)
    hint = (
        "lower the bound, or check the pool's NICs (count and speed)"
        if cut is not None and cut[0].path in ("rdma", "socket")
        else "lower the bound: every byte a GPU sends or receives crosses its own link, "
        "NIC traffic included"
    )
    if baseline is not None:
        hint = (
            f"the line-rate bound is raised x{ratio:.3g} by baseline {baseline.name}, which "
            f"measured more than it; {hint}"
        )
    if "b" in comparison.written.split()[-1].split("/")[0]:
        hint += f"; {comparison.written} is bits: {units.format_gbs(comparison.value)} GB/s"
    return message, hint


def _too_low(
    unit: TestUnit, field: str, comparison: units.Comparison, typical: float, size: int | None
) -> tuple[str, str]:
    at = f" at {units.format_size(size)}" if size else ""
    message = (
        f"{field} {comparison.written} is under a fifth of the {typical:.4g} GB/s expected"
        f"{at} for {unit.test.name} on pool {unit.pool.spec.name}: a unit slip?"
    )
    match = _WRITTEN.match(comparison.written)
    if match and match["unit"] != "GB/s":
        hint = (
            f"did you mean {match['op']} {match['num']} GB/s? {match['num']} {match['unit']} "
            f"is {units.format_gbs(comparison.value)} GB/s"
        )
    else:
        hint = "a bound this low passes a broken or misrouted link; check the number"
    return message, hint


def _size_problem(
    catalog: Catalog, doc: Document, where: str, unit: TestUnit, size: int
) -> Diagnostic | None:
    swept = kind_of(unit.test).sweep(unit.test)
    if swept is None or size in physics.measured_sizes(unit, catalog):
        return None
    largest = physics.largest_size(unit, catalog)
    runs = sweep.sizes(swept, largest)
    shown, name = units.format_size(size), unit.test.name
    if runs and size > runs[-1]:
        message = f"at: {shown} is beyond the largest size {name} runs ({_sizes(runs[-1:])})"
        hint = (
            _memory_note(unit, swept, largest) or "pick a size the sweep runs, up to its maxBytes"
        )
    elif runs and size < runs[0]:
        message = f"at: {shown} is below the smallest size {name} runs ({_sizes(runs[:1])})"
        hint = f"the sweep starts at minBytes {swept.min_bytes}"
    elif size in runs:
        ranks = unit.nodes_per_job * unit.pool.gpus_per_node
        message = (
            f"at: {shown} is never printed by {name} with {ranks} ranks: nccl-tests rounds "
            f"it down to a multiple of the ranks"
        )
        hint = f"pick a size divisible by {ranks} x 4 bytes, or collect by the printed size"
    else:
        near = sorted(runs, key=lambda s: abs(s - size))[:2]
        message = (
            f"at: {shown} is not a size {name} runs ({swept.min_bytes} x {swept.step_factor}^k "
            f"up to {units.format_size(runs[-1]) if runs else swept.max_bytes})"
        )
        hint = f"nearest sizes it runs: {_sizes(sorted(near))}"
    return Diagnostic(doc.span(where), Severity.ERROR, codes.NVC353.code, message, where, hint)


def _sizes(sizes: list[int] | tuple[int, ...]) -> str:
    return ", ".join(units.format_size(s) for s in sizes)


def _memory_note(unit: TestUnit, swept: Sweep, largest: int) -> str:
    if largest >= units.parse_size(swept.max_bytes):
        return ""
    hardware = unit.pool.hardware
    return (
        f"nccl-tests lowers maxBytes {swept.max_bytes} to {largest / 2**30:.1f} GiB on "
        f"{hardware.model} ({hardware.memory_gb} GB: send, receive and check buffers)"
    )
