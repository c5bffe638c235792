"""Findings about one node's GPUs: each with a code, a severity and a hint.

An error fails the node (a link trained at half width, a failed row remap, uncorrectable
errors since the last reset, retired pages past NVIDIA's limits, hardware slowdown, an Xid
that needs a reset, drift from the pool's stated configuration); a warning marks something
to look at that does not by itself make the node unfit (a row remap pending the next reset,
a link generation below its maximum, which GPUs do at idle to save power). A check that
could not be judged (Xid events whose kernel log was refused, NVC825; a value a reader
refused, NVC800) is a warning that leaves the node incomplete, never cleared. Codes are
NVC801-NVC825; the table is in docs/design/0014-node-health.md.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from nvcregen.core.errors import Severity, Span
from nvcregen.kinds.node import codes
from nvcregen.kinds.node.models import Finding, GpuFacts, NodeReport, XidEvent
from nvcregen.kinds.node.retired import retired_past_limit
from nvcregen.kinds.node.values import nonzero
from nvcregen.kinds.node.xid import XIDS

E, W = Severity.ERROR, Severity.WARNING
_DOTTED = re.compile(r"^[0-9]{1,9}(\.[0-9]{1,9}){0,3}$")
UNNAMED = frozenset({"NVIDIA Graphics Device", "Graphics Device"})  # no model to check
HEADROOM_WARN_C = 5  # a GPU this close to its slowdown limit at rest has no margin under load


@dataclass(frozen=True)
class Expectations:
    """What a pool states its nodes run; None where it states nothing."""

    driver: str | None = None
    cuda: str | None = None
    vbios: str | None = None
    gpus_per_node: int | None = None
    pcie_gen: int | None = None
    pcie_width: int | None = None
    mig: bool | None = None  # False: MIG must be off
    products: tuple[str, ...] = ()  # the pool's GPU product labels (GFD's), () unchecked
    source: str = ""  # where they were stated, e.g. "sites/a.yaml pool h200"
    inventory: str = ""  # the site's inventory file, when it names one
    from_inventory: frozenset[str] = frozenset()  # facts taken from it: driver, cuda, gpus
    unlisted: bool = False  # the site names an inventory that does not list the node

    def wants(self, fact: str, value: object) -> str:
        """What was expected of a fact, and from where (the pool, or the node's inventory entry)."""
        if fact in self.from_inventory:
            return f"where the inventory ({self.inventory}) records {value} for this node"
        return f"the pool expects {value}"


class _Collector:
    def __init__(self, node: str, where: dict[str, Span], fallback: Span) -> None:
        self.node = node
        self.where = where
        self.fallback = fallback
        self.found: list[Finding] = []

    def add(
        self,
        code: str,
        severity: Severity,
        message: str,
        hint: str,
        fact: str = "",
        gpu: GpuFacts | None = None,
    ) -> None:
        where = gpu.where if gpu is not None else self.where
        span = where.get(fact, self.fallback)
        prefix = f"GPU {gpu.index} ({gpu.bus_id}): " if gpu is not None else ""
        index = None if gpu is None else gpu.index
        self.found.append(Finding(code, severity, self.node, prefix + message, hint, span, index))


def gpu_findings(out: _Collector, gpu: GpuFacts) -> None:
    """The findings one GPU's own facts give, with no expectation needed."""
    if (
        gpu.pcie_width is not None
        and gpu.pcie_width_max is not None
        and gpu.pcie_width < gpu.pcie_width_max
    ):
        out.add(
            codes.NVC801.code,
            E,
            f"PCIe link at x{gpu.pcie_width} of x{gpu.pcie_width_max}",
            "the link trained narrow: reseat the GPU or its riser, or check the slot; "
            "host-device copies run at a fraction of their speed",
            "pcie_width",
            gpu,
        )
    if (
        gpu.pcie_gen is not None
        and gpu.pcie_gen_max is not None
        and gpu.pcie_gen < gpu.pcie_gen_max
    ):
        out.add(
            codes.NVC802.code,
            W,
            f"PCIe link at generation {gpu.pcie_gen} of {gpu.pcie_gen_max}",
            "GPUs lower their link speed at idle; capture under load (the node-health test "
            "does) before treating it as a fault",
            "pcie_gen",
            gpu,
        )
    if gpu.ecc_current is False or (
        gpu.ecc_pending is not None and gpu.ecc_pending != gpu.ecc_current
    ):
        state = "disabled" if gpu.ecc_current is False else "pending a change at the next reset"
        out.add(
            codes.NVC803.code,
            E,
            f"ECC {state}",
            "enable ECC (`nvidia-smi -e 1`) and reset the GPU; data-centre GPUs must run "
            "with ECC on",
            "ecc_current",
            gpu,
        )
    _ecc(out, gpu)
    _memory(out, gpu)
    _clocks(out, gpu)
    if gpu.mig_current or gpu.mig_pending:
        out.add(
            codes.NVC813.code,
            W,
            "MIG mode is on" if gpu.mig_current else "MIG mode is pending at the next reset",
            "readiness tests use whole GPUs: disable MIG (`nvidia-smi -mig 0`) unless the "
            "pool is meant to be partitioned",
            "mig_current",
            gpu,
        )
    if gpu.slowdown_headroom is not None:
        if gpu.slowdown_headroom <= 0:
            out.add(
                codes.NVC814.code,
                E,
                f"at or past its thermal slowdown limit ({gpu.slowdown_headroom} C of headroom)",
                "check the node's cooling (fans, airflow, coolant) before running anything",
                "slowdown_headroom",
                gpu,
            )
        elif gpu.slowdown_headroom <= HEADROOM_WARN_C:
            out.add(
                codes.NVC814.code,
                W,
                f"{gpu.slowdown_headroom} C below its thermal slowdown limit",
                f"at most {HEADROOM_WARN_C} C of headroom: check the node's cooling",
                "slowdown_headroom",
                gpu,
            )
    if gpu.recovery_action is not None:
        out.add(
            codes.NVC820.code,
            E,
            f"the driver asks for recovery: {gpu.recovery_action}",
            "do what the driver asks (reset the GPU, reboot the node, or drain peer-to-peer "
            "traffic) before testing",
            "recovery_action",
            gpu,
        )


def _ecc(out: _Collector, gpu: GpuFacts) -> None:
    volatile = [
        (kind, n)
        for kind, n in (
            ("DRAM", gpu.dram_unc_volatile),
            ("SRAM", gpu.sram_unc_volatile),
            ("total", gpu.unc_volatile_total),
        )
        if nonzero(n)
    ]
    if volatile:
        counts = ", ".join(f"{kind} {n}" for kind, n in volatile)
        out.add(
            codes.NVC804.code,
            E,
            f"uncorrectable ECC errors since the last reset ({counts})",
            "drain the node and reset the GPU; if errors return, the memory needs repair",
            "dram_unc_volatile" if nonzero(gpu.dram_unc_volatile) else "sram_unc_volatile",
            gpu,
        )
    aggregate = [
        (kind, n)
        for kind, n in (
            ("DRAM", gpu.dram_unc_aggregate),
            ("SRAM", gpu.sram_unc_aggregate),
            ("total", gpu.unc_aggregate_total),
        )
        if nonzero(n)
    ]
    if aggregate and not volatile:
        counts = ", ".join(f"{kind} {n}" for kind, n in aggregate)
        out.add(
            codes.NVC805.code,
            W,
            f"uncorrectable ECC errors over the GPU's life ({counts})",
            "none since the last reset; compare with the row-remap counts and watch for new ones",
            "dram_unc_aggregate" if nonzero(gpu.dram_unc_aggregate) else "sram_unc_aggregate",
            gpu,
        )
    if gpu.sram_threshold_exceeded:
        out.add(
            codes.NVC806.code,
            E,
            "SRAM uncorrectable errors exceed NVIDIA's threshold",
            "the GPU qualifies for replacement (RMA): drain the node",
            "sram_threshold_exceeded",
            gpu,
        )


def _memory(out: _Collector, gpu: GpuFacts) -> None:
    if (retired := retired_past_limit(gpu)) is not None:
        message, fact = retired
        out.add(
            codes.NVC823.code,
            E,
            message,
            "the GPU's memory is worn past NVIDIA's replacement (RMA) guidance: drain the "
            "node, run the field diagnostic and check whether pages still retire (DCGM's "
            "health watch)",
            fact,
            gpu,
        )
    if gpu.retired_pending:
        out.add(
            codes.NVC807.code,
            W,
            "pages are pending retirement",
            "reset the GPU to retire them",
            "retired_pending",
            gpu,
        )
    if gpu.remap_failure:
        out.add(
            codes.NVC808.code,
            E,
            "a row remapping failed",
            "the GPU could not remap a failing memory row: drain the node; the GPU qualifies "
            "for replacement (RMA)",
            "remap_failure",
            gpu,
        )
    if gpu.remap_pending:
        out.add(
            codes.NVC809.code,
            W,
            "a row remapping is pending",
            "reset the GPU (when idle) to activate the remapped rows",
            "remap_pending",
            gpu,
        )
    for bucket, banks in gpu.histogram or ():
        if bucket in ("low", "none") and banks > 0:
            out.add(
                codes.NVC810.code,
                W,
                f"{banks} memory bank(s) with {bucket} spare rows left",
                "further row remaps on those banks may fail; plan a replacement",
                f"histogram_{bucket}",
                gpu,
            )


def _clocks(out: _Collector, gpu: GpuFacts) -> None:
    hardware = [
        name
        for name, on in (
            ("hardware slowdown", gpu.hw_slowdown),
            ("hardware thermal slowdown", gpu.hw_thermal_slowdown),
            ("hardware power brake", gpu.hw_power_brake),
        )
        if on
    ]
    if hardware:
        fact = (
            "hw_slowdown"
            if gpu.hw_slowdown
            else "hw_thermal_slowdown"
            if gpu.hw_thermal_slowdown
            else "hw_power_brake"
        )
        out.add(
            codes.NVC811.code,
            E,
            f"clocks held down: {', '.join(hardware)} active",
            "the GPU is cut to a fraction of its speed by its board (temperature, power "
            "supply or a brake signal): check cooling and power",
            fact,
            gpu,
        )
    if gpu.sw_thermal_slowdown:
        out.add(
            codes.NVC812.code,
            W,
            "software thermal slowdown active",
            "the driver is lowering clocks to cool the GPU: check airflow",
            "sw_thermal_slowdown",
            gpu,
        )


def xid_findings(out: _Collector, events: Sequence[XidEvent]) -> None:
    """One finding per Xid code and GPU, naming how often it happened and its first line."""
    seen: dict[tuple[int, str], list[XidEvent]] = {}
    for event in events:
        seen.setdefault((event.code, event.bus_id), []).append(event)
    for (code, bus), group in seen.items():
        first = group[0]
        times = f" ({len(group)} times)" if len(group) > 1 else ""
        kind = XIDS.get(code)
        if kind is None:
            out.found.append(
                Finding(
                    codes.NVC821.code,
                    W,
                    out.node,
                    f"Xid {code} on {bus}{times}: not in nvcregen's catalogue: {first.detail}",
                    "look the code up in NVIDIA's Xid catalogue",
                    first.span,
                )
            )
            continue
        out.found.append(
            Finding(
                codes.NVC815.code if kind.fails else codes.NVC816.code,
                E if kind.fails else W,
                out.node,
                f"Xid {code} ({kind.name}) on {bus}{times}",
                kind.action,
                first.span,
            )
        )


def expectation_findings(out: _Collector, report: NodeReport, expected: Expectations) -> None:
    """Drift: every fact that differs from what the pool or the node's inventory entry states."""
    source = f" ({expected.source})" if expected.source else ""
    hint = f"bring the node to the pool's configuration{source}, or drain it"
    if expected.from_inventory:
        hint = (
            f"bring the node to the configuration its inventory entry ({expected.inventory}) "
            f"or its pool{source} states, or drain it; if the node was changed on purpose, "
            "write the inventory again (`nvcregen inventory`)"
        )
    if expected.unlisted:
        out.add(
            codes.NVC822.code,
            W,
            f"not in the inventory ({expected.inventory}): its driver, CUDA and GPU count were "
            "checked against the pool's statement alone",
            "add the node to the inventory (`nvcregen inventory`), or check that it belongs "
            "to the site",
            "gpus",
        )
    for fact, stated, actual in (
        ("driver", expected.driver, report.driver),
        ("cuda", expected.cuda, report.cuda),
    ):
        if stated is not None and actual is not None and not same_version(actual, stated):
            want = expected.wants(fact, stated)
            out.add(codes.NVC817.code, E, f"drift: {fact} {actual}, {want}", hint, fact)
    _product_findings(out, report, expected, hint)
    if expected.gpus_per_node is not None and len(report.gpus) != expected.gpus_per_node:
        out.add(
            codes.NVC817.code,
            E,
            f"drift: {len(report.gpus)} GPUs, {expected.wants('gpus', expected.gpus_per_node)}",
            hint,
            "gpus",
        )
    for gpu in report.gpus:
        checks: tuple[tuple[str, object, object], ...] = (
            ("vbios", expected.vbios, gpu.vbios),
            ("pcie_gen_max", expected.pcie_gen, gpu.pcie_gen_max),
            ("pcie_width", expected.pcie_width, gpu.pcie_width),
        )
        for fact, wanted, seen in checks:
            if wanted is not None and seen is not None and seen != wanted:
                label = {
                    "vbios": "VBIOS",
                    "pcie_gen_max": "PCIe generation",
                    "pcie_width": "PCIe width",
                }[fact]
                out.add(
                    codes.NVC817.code,
                    E,
                    f"drift: {label} {seen}, the pool expects {wanted}",
                    hint,
                    fact,
                    gpu,
                )
        if expected.mig is False and (gpu.mig_current or gpu.mig_pending):
            out.add(
                codes.NVC817.code,
                E,
                "drift: MIG on, the pool expects it off",
                hint,
                "mig_current",
                gpu,
            )


def same_version(seen: str, stated: str) -> bool:
    """Whether two dotted versions are one: numerically (`580.159.04` is `580.159.4`), else as text.

    GFD's driver labels keep nvidia-smi's zero-padded revision (`.rev=04`), so an inventory's
    `580.159.04` and nvidia-smi's driver string match as text too; numbers make a hand-edited
    `580.159.4` match as well. `13.0` and `13` differ: a component missing is not a zero.
    """
    if _DOTTED.match(seen) and _DOTTED.match(stated):
        return tuple(int(p) for p in seen.split(".")) == tuple(int(p) for p in stated.split("."))
    return seen == stated


def _product_findings(
    out: _Collector, report: NodeReport, expected: Expectations, hint: str
) -> None:
    """Drift: GPUs of another model than the pool's (NVC817).

    Read as evidence binding reads a log's devices (NVC731): GPU Feature Discovery's label
    is the driver's name with blanks made dashes (`-SHARED` when time-sliced); a device
    the driver does not name is not checked.
    """
    labels = {label.removesuffix("-SHARED") for label in expected.products}
    if not labels:
        return
    other: dict[str, list[int]] = {}
    for gpu in report.gpus:
        name = (gpu.product or "").strip()
        if name and name not in UNNAMED and name.replace(" ", "-") not in labels:
            other.setdefault(name, []).append(gpu.index)
    wanted = ", ".join(sorted(labels))
    for name, gpus in other.items():
        message = f"drift: GPU model {name} ({len(gpus)} GPUs), the pool expects {wanted}"
        out.add(codes.NVC817.code, E, message, hint, "product")


def node_findings(
    report: NodeReport, where: dict[str, Span], expected: Expectations | None
) -> tuple[Finding, ...]:
    """Every finding of one node: its GPUs, its Xid events and its drift."""
    fallback = Span(report.files[0]) if report.files else Span("-")
    out = _Collector(report.node, where, fallback)
    if report.attached_gpus is not None and report.attached_gpus != len(report.gpus):
        out.add(
            codes.NVC819.code,
            E,
            f"{report.attached_gpus} GPUs attached but {len(report.gpus)} reported",
            "a GPU did not answer the driver: check `nvidia-smi -L` and the kernel log",
            "gpus",
        )
    for gpu in report.gpus:
        gpu_findings(out, gpu)
    xid_findings(out, report.xids)
    for check in report.unjudged:
        message = f"node {report.node}: {check.check} not judged: {check.cause}"
        out.found.append(
            Finding(check.code, W, report.node, message, check.hint, check.span, check.gpu, True)
        )
    if expected is not None:
        expectation_findings(out, report, expected)
    return tuple(out.found)


def majority_findings(
    reports: Sequence[NodeReport], expected: Expectations | None
) -> dict[str, list[Finding]]:
    """Nodes that differ from the strict majority of their pool, in facts it leaves unstated."""
    found: dict[str, list[Finding]] = {}
    facts: dict[str, tuple[Callable[[NodeReport], str | None], bool]] = {
        "driver": (lambda r: r.driver, expected is not None and expected.driver is not None),
        "cuda": (lambda r: r.cuda, expected is not None and expected.cuda is not None),
        "GPU count": (
            lambda r: str(len(r.gpus)) if r.gpus else None,
            expected is not None and expected.gpus_per_node is not None,
        ),
        "VBIOS": (_vbios, expected is not None and expected.vbios is not None),
        "product": (_product, False),
    }
    for fact, (read, stated) in facts.items():
        if stated:
            continue
        values = {r.node: v for r in reports if (v := read(r)) is not None}
        if len(values) < 3:
            continue
        value, count = Counter(values.values()).most_common(1)[0]
        if count * 2 <= len(values):
            continue
        for report in reports:
            mine = values.get(report.node)
            if mine is not None and mine != value:
                span = Span(report.files[0]) if report.files else Span("-")
                found.setdefault(report.node, []).append(
                    Finding(
                        codes.NVC818.code,
                        W,
                        report.node,
                        f"{fact} {mine}, while {count} of {len(values)} nodes of the pool run "
                        f"{value}",
                        "state the pool's expected configuration in the site to make this an "
                        "error, or bring the node in line",
                        span,
                    )
                )
    return found


def _vbios(report: NodeReport) -> str | None:
    versions = {gpu.vbios for gpu in report.gpus if gpu.vbios is not None}
    return min(versions) if len(versions) == 1 else None


def _product(report: NodeReport) -> str | None:
    names = {gpu.product for gpu in report.gpus if gpu.product is not None}
    return min(names) if len(names) == 1 else None
