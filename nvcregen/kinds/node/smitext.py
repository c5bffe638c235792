"""Read the text forms of `nvidia-smi`: `-q` (an indented tree) and a `--query-gpu` CSV.

`-q` prints `Label : value` lines whose indentation nests them (`HW Thermal Slowdown` sits
under `HW Slowdown`, which has a value of its own), one `GPU <bus id>` section per GPU.
The CSV (`--format=csv`, with or without `noheader`-less units such as `power.draw [W]`)
carries a subset of the same facts by field name: the totals of uncorrectable errors, not
their DRAM and SRAM parts, and no CUDA version.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass, field

from nvcregen.core.errors import Span
from nvcregen.ingest.models import IngestFormatError
from nvcregen.kinds.node.fields import Path, gpu_facts
from nvcregen.kinds.node.models import GpuFacts, NodeFacts
from nvcregen.kinds.node.values import Refusals, flag, integer, known

BANNER = "==============NVSMI LOG=============="
MAX_GPUS = 64
_GPU_HEADER = re.compile(r"^GPU ([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f])\s*$")
_LINE = re.compile(r"^(?P<indent> *)(?P<label>[^:]*?[^\s:])\s*(?::\s?(?P<value>.*))?$")


@dataclass
class _Node:
    label: str
    value: str | None
    line: int
    column: int
    children: list[_Node] = field(default_factory=list)


class _TextGpu:
    """One `GPU <bus id>` section of `nvidia-smi -q`."""

    def __init__(self, root: _Node, file: str) -> None:
        self._root = root
        self._file = file

    def get(self, path: Path) -> tuple[str | None, Span | None]:
        node = self._root
        for label in path:
            child = next((c for c in node.children if c.label == label), None)
            if child is None:
                return None, None
            node = child
        return node.value, Span(self._file, node.line, node.column)


def parse_node_text(text: str, file: str) -> NodeFacts:
    """The node's facts from `nvidia-smi -q`.

    Raises:
        IngestFormatError: No NVSMI banner or no `GPU <bus id>` section.

    """
    if BANNER not in text:
        raise IngestFormatError("not nvidia-smi -q output: no NVSMI LOG banner")
    top = _Node("", None, 1, 1)
    stack: list[tuple[int, _Node]] = [(-1, top)]
    for number, raw in enumerate(text.splitlines(), start=1):
        match = _LINE.match(raw.rstrip())
        if match is None or raw.strip().startswith("="):
            continue
        indent = len(match["indent"])
        value = match["value"]
        node = _Node(match["label"], None if value is None else value.strip(), number, indent + 1)
        header = _GPU_HEADER.match(raw.rstrip())
        if header is not None:
            node = _Node("GPU", header.group(1), number, 1)
        while stack[-1][0] >= indent:
            stack.pop()
        stack[-1][1].children.append(node)
        stack.append((indent, node))
    sections = [child for child in top.children if child.label == "GPU"]
    if not sections:
        raise IngestFormatError("nvidia-smi -q output without any GPU section")
    if len(sections) > MAX_GPUS:
        raise IngestFormatError(f"{len(sections)} GPU sections: more than {MAX_GPUS}")
    top_values = {child.label: child for child in top.children}
    refusals = Refusals(file)
    gpus: list[GpuFacts] = []
    for index, section in enumerate(sections):
        lookup = _TextGpu(section, file)
        value, span = lookup.get(("Minor Number",))
        minor = refusals.read(integer, value, f"Minor Number of GPU {section.value}", span)
        number = index if minor is None else minor
        gpus.append(gpu_facts(number, section.value or "", lookup, False, refusals))
    where = {
        name: Span(file, found.line, found.column)
        for name, label in (
            ("driver", "Driver Version"),
            ("cuda", "CUDA Version"),
            ("gpus", "Attached GPUs"),
        )
        if (found := top_values.get(label)) is not None
    }
    return NodeFacts(
        file=file,
        form="text",
        driver=_value(top_values.get("Driver Version")),
        cuda=_value(top_values.get("CUDA Version")),
        attached_gpus=refusals.read(
            integer, _value(top_values.get("Attached GPUs")), "Attached GPUs", where.get("gpus")
        ),
        gpus=tuple(sorted(gpus, key=lambda g: g.index)),
        unjudged=tuple(refusals.found),
        where=where,
    )


def _value(node: _Node | None) -> str | None:
    return None if node is None else known(node.value)


# --query-gpu field -> (GpuFacts field, reader); `clocks_throttle_reasons.*` before driver 535
_CSV_FIELDS = {
    "name": ("product", known),
    "vbios_version": ("vbios", known),
    "pcie.link.gen.current": ("pcie_gen", integer),
    "pcie.link.gen.gpucurrent": ("pcie_gen", integer),
    "pcie.link.gen.max": ("pcie_gen_max", integer),
    "pcie.link.gen.gpumax": ("pcie_gen_max", integer),
    "pcie.link.width.current": ("pcie_width", integer),
    "pcie.link.width.max": ("pcie_width_max", integer),
    "ecc.mode.current": ("ecc_current", flag),
    "ecc.mode.pending": ("ecc_pending", flag),
    "ecc.errors.uncorrected.volatile.total": ("unc_volatile_total", integer),
    "ecc.errors.uncorrected.aggregate.total": ("unc_aggregate_total", integer),
    "ecc.errors.uncorrected.volatile.dram": ("dram_unc_volatile", integer),
    "ecc.errors.uncorrected.aggregate.dram": ("dram_unc_aggregate", integer),
    "retired_pages.pending": ("retired_pending", flag),
    "retired_pages.single_bit_ecc.count": ("retired_sbe", integer),
    "retired_pages.double_bit.count": ("retired_dbe", integer),
    "remapped_rows.correctable": ("remapped_correctable", integer),
    "remapped_rows.uncorrectable": ("remapped_uncorrectable", integer),
    "remapped_rows.pending": ("remap_pending", flag),
    "remapped_rows.failure": ("remap_failure", flag),
    "clocks_event_reasons.hw_slowdown": ("hw_slowdown", flag),
    "clocks_event_reasons.hw_thermal_slowdown": ("hw_thermal_slowdown", flag),
    "clocks_event_reasons.hw_power_brake_slowdown": ("hw_power_brake", flag),
    "clocks_event_reasons.sw_thermal_slowdown": ("sw_thermal_slowdown", flag),
    "mig.mode.current": ("mig_current", flag),
    "mig.mode.pending": ("mig_pending", flag),
    "temperature.gpu": ("temperature", integer),
    "temperature.memory": ("memory_temperature", integer),
}
_CSV_HEADER_CELL = re.compile(r"^[a-z][a-z0-9_.]*(?: \[[^\]]+\])?$")


def looks_like_csv(text: str) -> bool:
    """Whether the first line is a `--query-gpu` header naming `index` or `pci.bus_id`."""
    first = text.lstrip().split("\n", 1)[0]
    cells = [cell.strip() for cell in first.split(",")]
    return (
        len(cells) >= 2
        and all(_CSV_HEADER_CELL.match(cell) for cell in cells)
        and bool({"index", "pci.bus_id"} & {_field(cell) for cell in cells})
    )


def parse_node_csv(text: str, file: str) -> NodeFacts:
    """The node's facts from `nvidia-smi --query-gpu=... --format=csv`.

    Raises:
        IngestFormatError: No header, a row whose cell count differs from the header's, no
            rows, or more than `MAX_GPUS` rows.

    """
    if not looks_like_csv(text):
        raise IngestFormatError("not a --query-gpu CSV: no header naming index or pci.bus_id")
    lines = text.splitlines()
    reader = csv.reader(lines, skipinitialspace=True)
    rows = [(reader.line_num, row) for row in reader if any(cell.strip() for cell in row)]
    header = [_field(cell) for cell in rows[0][1]]
    body = rows[1:]
    if not body:
        raise IngestFormatError("a --query-gpu CSV with a header and no GPU rows")
    if len(body) > MAX_GPUS:
        raise IngestFormatError(f"{len(body)} GPU rows: more than {MAX_GPUS}")
    gpus: list[GpuFacts] = []
    drivers: set[str] = set()
    refusals = Refusals(file)
    for position, (number, row) in enumerate(body):
        if len(row) != len(header):
            raise IngestFormatError(f"line {number}: {len(row)} cells under {len(header)} fields")
        cells = dict(zip(header, (cell.strip() for cell in row), strict=True))
        at = _columns(lines[number - 1], len(row))
        span = _at(file, number, at, header, "index")
        index = refusals.read(integer, cells.get("index"), "index", span)
        gpu = position if index is None else index
        values: dict[str, object] = {}
        where: dict[str, Span] = {}
        for name, raw in cells.items():
            if name not in _CSV_FIELDS:
                continue
            target, read = _CSV_FIELDS[name]
            span = _at(file, number, at, header, name)
            value = refusals.read(read, raw, name, span, gpu)
            if value is not None:
                values[target] = value
                where[target] = span
        if (driver := known(cells.get("driver_version"))) is not None:
            drivers.add(driver)
        gpus.append(
            GpuFacts(
                index=gpu,
                bus_id=cells.get("pci.bus_id", ""),
                where=where,
                **values,  # type: ignore[arg-type]
            )
        )
    return NodeFacts(
        file=file,
        form="csv",
        driver=min(drivers) if len(drivers) == 1 else None,
        gpus=tuple(sorted(gpus, key=lambda g: g.index)),
        unjudged=tuple(refusals.found),
        where={"driver": Span(file, body[0][0], 1)} if drivers else {},
    )


def _columns(line: str, cells: int) -> list[int]:
    """The 1-based column of each cell of a CSV line: exact without quotes, else all 1."""
    if '"' in line:
        return [1] * cells
    columns, column = [], 1
    for cell in line.split(","):
        columns.append(column + len(cell) - len(cell.lstrip()))
        column += len(cell) + 1
    return columns if len(columns) == cells else [1] * cells


def _at(file: str, line: int, columns: list[int], header: list[str], name: str) -> Span:
    return Span(file, line, columns[header.index(name)] if name in header else 1)


def _field(cell: str) -> str:
    """`power.draw [W]` -> `power.draw`; `clocks_throttle_reasons.x` -> `clocks_event_reasons.x`."""
    name = cell.strip().split(" [", 1)[0]
    return name.replace("clocks_throttle_reasons.", "clocks_event_reasons.")
