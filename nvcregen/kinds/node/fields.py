"""Where each GPU fact sits in the XML (`nvidia-smi -q -x`) and the text (`-q`) forms.

One table serves both forms: a fact has the XML element path and the text label path
that hold it, and older names where drivers renamed them (`clocks_throttle_reasons`
became `clocks_event_reasons` in driver 535). A form is read through a `Lookup`, which
answers a path with the printed value and the span of its line.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, TypeVar

from nvcregen.core.errors import Span
from nvcregen.kinds.node.models import GpuFacts
from nvcregen.kinds.node.values import Refusals, flag, integer, known

Path = tuple[str, ...]
T = TypeVar("T")


class Lookup(Protocol):
    """One GPU's section of one output form."""

    def get(self, path: Path) -> tuple[str | None, Span | None]:
        """The value printed at `path` (None if absent) and the span of its line."""
        ...


_XML_EVENTS = ("clocks_event_reasons", "clocks_throttle_reasons")
_TEXT_EVENTS = ("Clocks Event Reasons", "Clocks Throttle Reasons")


def _events(xml_leaf: str, text_leaf: tuple[str, ...]) -> tuple[list[Path], list[Path]]:
    xml: list[Path] = [(section, section[:-1] + "_" + xml_leaf) for section in _XML_EVENTS]
    return xml, [(section, *text_leaf) for section in _TEXT_EVENTS]


# fact -> (XML paths, text paths, reader); the first path that holds a value wins
_LINK = ("pci", "pci_gpu_link_info")
_TEXT_LINK = ("PCI", "GPU Link Info")
_REMAP = "remapped_rows"
FIELDS: dict[str, tuple[list[Path], list[Path], Callable[[str | None], object]]] = {
    "product": ([("product_name",)], [("Product Name",)], known),
    "vbios": ([("vbios_version",)], [("VBIOS Version",)], known),
    "pcie_gen": (
        [(*_LINK, "pcie_gen", "current_link_gen")],
        [(*_TEXT_LINK, "PCIe Generation", "Current")],
        integer,
    ),
    "pcie_gen_max": (
        [(*_LINK, "pcie_gen", "max_link_gen")],
        [(*_TEXT_LINK, "PCIe Generation", "Max")],
        integer,
    ),
    "pcie_width": (
        [(*_LINK, "link_widths", "current_link_width")],
        [(*_TEXT_LINK, "Link Width", "Current")],
        integer,
    ),
    "pcie_width_max": (
        [(*_LINK, "link_widths", "max_link_width")],
        [(*_TEXT_LINK, "Link Width", "Max")],
        integer,
    ),
    "ecc_current": ([("ecc_mode", "current_ecc")], [("ECC Mode", "Current")], flag),
    "ecc_pending": ([("ecc_mode", "pending_ecc")], [("ECC Mode", "Pending")], flag),
    "dram_unc_volatile": (
        [("ecc_errors", "volatile", "dram_uncorrectable")],
        [("ECC Errors", "Volatile", "DRAM Uncorrectable")],
        integer,
    ),
    "dram_unc_aggregate": (
        [("ecc_errors", "aggregate", "dram_uncorrectable")],
        [("ECC Errors", "Aggregate", "DRAM Uncorrectable")],
        integer,
    ),
    "sram_threshold_exceeded": (
        [("ecc_errors", "aggregate", "sram_threshold_exceeded")],
        [("ECC Errors", "Aggregate", "SRAM Threshold Exceeded")],
        flag,
    ),
    "retired_sbe": (
        [("retired_pages", "multiple_single_bit_retirement", "retired_count")],
        [("Retired Pages", "Single Bit ECC")],
        integer,
    ),
    "retired_dbe": (
        [("retired_pages", "double_bit_retirement", "retired_count")],
        [("Retired Pages", "Double Bit ECC")],
        integer,
    ),
    "retired_pending": (
        [("retired_pages", "pending_blacklist"), ("retired_pages", "pending_retirement")],
        [("Retired Pages", "Pending Page Blacklist"), ("Retired Pages", "Pending")],
        flag,
    ),
    "remapped_correctable": (
        [(_REMAP, "remapped_row_corr")],
        [("Remapped Rows", "Correctable Error")],
        integer,
    ),
    "remapped_uncorrectable": (
        [(_REMAP, "remapped_row_unc")],
        [("Remapped Rows", "Uncorrectable Error")],
        integer,
    ),
    "remap_pending": (
        [(_REMAP, "remapped_row_pending")],
        [("Remapped Rows", "Pending")],
        flag,
    ),
    "remap_failure": (
        [(_REMAP, "remapped_row_failure")],
        [("Remapped Rows", "Remapping Failure Occurred")],
        flag,
    ),
    "hw_slowdown": (*_events("hw_slowdown", ("HW Slowdown",)), flag),
    "hw_thermal_slowdown": (
        *_events("hw_thermal_slowdown", ("HW Slowdown", "HW Thermal Slowdown")),
        flag,
    ),
    "hw_power_brake": (
        *_events("hw_power_brake_slowdown", ("HW Slowdown", "HW Power Brake Slowdown")),
        flag,
    ),
    "sw_thermal_slowdown": (*_events("sw_thermal_slowdown", ("SW Thermal Slowdown",)), flag),
    "mig_current": ([("mig_mode", "current_mig")], [("MIG Mode", "Current")], flag),
    "mig_pending": ([("mig_mode", "pending_mig")], [("MIG Mode", "Pending")], flag),
    "temperature": ([("temperature", "gpu_temp")], [("Temperature", "GPU Current Temp")], integer),
    "memory_temperature": (
        [("temperature", "memory_temp")],
        [("Temperature", "Memory Current Temp")],
        integer,
    ),
    "recovery_action": ([("gpu_recovery_action",)], [("GPU Recovery Action",)], known),
}
# summed from several counters: SRAM uncorrectable is parity + SEC-DED since driver 550
_SRAM_XML = ("sram_uncorrectable_parity", "sram_uncorrectable_secded", "sram_uncorrectable")
_SRAM_TEXT = ("SRAM Uncorrectable Parity", "SRAM Uncorrectable SEC-DED", "SRAM Uncorrectable")
_HISTOGRAM = ("max", "high", "partial", "low", "none")


def gpu_facts(index: int, bus_id: str, lookup: Lookup, xml: bool, refusals: Refusals) -> GpuFacts:
    """Every fact of `FIELDS` (and the summed and derived ones) from one GPU's section.

    A value refused (a number too long) leaves its fact unknown and is kept in `refusals`.
    """
    values: dict[str, object] = {}
    where: dict[str, Span] = {}
    read_gpu = _Reader(refusals, index)
    for name, (xml_paths, text_paths, read) in FIELDS.items():
        for path in xml_paths if xml else text_paths:
            raw, span = lookup.get(path)
            value = read_gpu(read, raw, name, span)
            if value is not None:
                values[name] = value
                if span is not None:
                    where[name] = span
                break
    for kind in ("volatile", "aggregate"):
        section = ("ecc_errors", kind) if xml else ("ECC Errors", kind.capitalize())
        total, span = _sum(lookup, section, _SRAM_XML if xml else _SRAM_TEXT, read_gpu)
        if total is not None:
            values[f"sram_unc_{kind}"] = total
            if span is not None:
                where[f"sram_unc_{kind}"] = span
    histogram = _histogram(lookup, xml, where, read_gpu)
    if histogram is not None:
        values["histogram"] = histogram
    headroom = _headroom(lookup, xml, where, read_gpu)
    if headroom is not None:
        values["slowdown_headroom"] = headroom
    return GpuFacts(index=index, bus_id=bus_id, where=where, **values)  # type: ignore[arg-type]


class _Reader:
    """One GPU's values read through `Refusals`, each refusal naming the GPU and the fact."""

    def __init__(self, refusals: Refusals, gpu: int) -> None:
        self.refusals = refusals
        self.gpu = gpu

    def __call__(
        self, read: Callable[[str | None], T], raw: str | None, fact: str, span: Span | None
    ) -> T | None:
        return self.refusals.read(read, raw, fact, span, self.gpu)


def _sum(
    lookup: Lookup, section: Path, leaves: tuple[str, ...], read: _Reader
) -> tuple[int | None, Span | None]:
    total: int | None = None
    first: Span | None = None
    for leaf in leaves:
        raw, span = lookup.get((*section, leaf))
        value = read(integer, raw, "/".join((*section, leaf)), span)
        if value is not None:
            total = (total or 0) + value
            first = first or span
    return total, first


def _histogram(
    lookup: Lookup, xml: bool, where: dict[str, Span], read: _Reader
) -> tuple[tuple[str, int], ...] | None:
    rows: list[tuple[str, int]] = []
    for bucket in _HISTOGRAM:
        if xml:
            path: Path = (_REMAP, "row_remapper_histogram", f"row_remapper_histogram_{bucket}")
        else:
            path = ("Remapped Rows", "Bank Remap Availability Histogram", bucket.capitalize())
        raw, span = lookup.get(path)
        value = read(integer, raw, f"histogram_{bucket}", span)
        if value is not None:
            rows.append((bucket, value))
            if span is not None:
                where[f"histogram_{bucket}"] = span
    return tuple(rows) or None


def _headroom(lookup: Lookup, xml: bool, where: dict[str, Span], read: _Reader) -> int | None:
    """Degrees below the slowdown limit: from the T.Limit margin, or from absolute limits.

    Drivers since 535 print the temperature as a margin to T.Limit and the slowdown
    limit relative to it (`GPU T.Limit Temp: 50 C`, `GPU Slowdown T.Limit Temp: -2 C`:
    52 C of headroom); older ones print absolute degrees (`GPU Slowdown Temp: 87 C`).
    """
    if xml:
        margin_path: Path = ("temperature", "gpu_temp_tlimit")
        slow_path: Path = ("temperature", "gpu_temp_slow_tlimit_threshold")
        absolute: Path = ("temperature", "gpu_temp_slow_threshold")
        current: Path = ("temperature", "gpu_temp")
    else:
        margin_path = ("Temperature", "GPU T.Limit Temp")
        slow_path = ("Temperature", "GPU Slowdown T.Limit Temp")
        absolute = ("Temperature", "GPU Slowdown Temp")
        current = ("Temperature", "GPU Current Temp")
    for first, second in ((margin_path, slow_path), (absolute, current)):
        raw_first, span = lookup.get(first)
        raw_second, span_second = lookup.get(second)
        high = read(integer, raw_first, "/".join(first), span)
        low = read(integer, raw_second, "/".join(second), span_second)
        if high is not None and low is not None:
            if span is not None:
                where["slowdown_headroom"] = span
            return high - low
    return None
