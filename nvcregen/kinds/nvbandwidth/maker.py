"""The nvbandwidth kind's log: the script's begin line and nvbandwidth v0.8's text (pure).

What `templates/nvbandwidth.sh.j2` prints on a node, in the form of the real
capture (tests/fixtures/captures/nvbandwidth/v0.8-h100-sxm.txt), read back by `collect`
with `logs.py`: every testcase the test asks for, in its order, a matrix of
the node's GPUs (a row of GPUs for a host testcase; every ordered pair, `N/A` on the
diagonal, for a device-to-device one) and its SUM.

Figures are the model's bounds as collect judges them (`ingest.model_bounds`:
the catalog's floor, the PCIe and NVLink ceilings of the physics model): a one-way copy
midway between its floor and its ceiling (H100's host copies 55.5 GB/s between 48 and
63, the capture's 55.3; its NVLink reads 392.5 between 335 and 450), 15% over a floor
with no ceiling, 85% of a ceiling with no floor. A testcase held to no floor (a
bidirectional copy, measured under the other direction's load) prints 85% of its
direction's figure, a latency testcase a microsecond. A failing node's GPU 0 copies at a
tenth of the floor, to and from the host and from every peer.
"""

from __future__ import annotations

from nvcregen.kinds.node.logs import node_expectations
from nvcregen.kinds.nvbandwidth.files import model_bounds
from nvcregen.kinds.nvbandwidth.kind import KIND as NVBANDWIDTH
from nvcregen.kinds.nvbandwidth.params import NvbandwidthFloor, NvbandwidthParams
from nvcregen.kinds.nvbandwidth.physics import Ceilings, Direction, ceilings, direction, floor_of
from nvcregen.kinds.nvbandwidth.reader import MARK
from nvcregen.plan.bandwidth import pcie_rate
from nvcregen.plan.model import TestUnit
from nvcregen.rehearse.printer import (
    FAILING_SHARE,
    Maker,
    Output,
    Printer,
    Section,
    bus_ids,
    gpu_name,
    stamp,
)

VERSION = "v0.8"
DRIVER = "580.159.04"
CUDA = 13000  # CUDA 13.0, as nvbandwidth prints it
OVER_FLOOR = 1.15  # a figure with no ceiling above it: 15% over its floor
OF_CEILING = 0.85  # a figure with no floor below it, or under the other direction's load
LATENCY_NS = 1000.0


def nvbandwidth_output(printer: Printer, unit: TestUnit, at: Section) -> Output:
    """The nvbandwidth script on one node: its begin line, nvbandwidth's text, its exit line."""
    params: NvbandwidthParams = NVBANDWIDTH.block(unit.test)
    node = at.pack.nodes[0]
    gpus = unit.pool.gpus_per_node
    expected = node_expectations(unit, node)
    cuda = CUDA
    if expected.cuda and all(p.isdigit() for p in expected.cuda.split(".")[:2]):
        major, _, minor = expected.cuda.partition(".")
        cuda = int(major) * 1000 + int(minor.split(".")[0] or 0) * 10
    name = gpu_name(unit)
    lines = [
        f"{MARK} begin node={node} pod={at.pack.pod} start={stamp(at.start)}",
        f"nvbandwidth Version: {VERSION}",
        f"Built from Git version: {VERSION}",
        "",
        f"CUDA Runtime Version: {cuda}",
        f"CUDA Driver Version: {cuda}",
        f"Driver Version: {expected.driver or DRIVER}",
        "",
        node,
        *(f"Device {i}: {name} ({bus})" for i, bus in enumerate(bus_ids(gpus))),
        "",
    ]
    figures = _Figures(unit, params, printer, at.failing)
    for testcase in params.testcases:
        lines += _testcase(testcase, gpus, figures)
    lines.append(f"nvcregen: nvbandwidth exit=0 seconds={at.seconds}")
    return Output("\n".join(lines) + "\n", 0, at.seconds, exit_line=False)


class _Figures:
    """The figure of each testcase and cell: the bounds collect judges by, as the module says."""

    def __init__(
        self, unit: TestUnit, params: NvbandwidthParams, printer: Printer, failing: bool
    ) -> None:
        hardware = unit.pool.hardware
        bounds = model_bounds(hardware.model, params)
        self.floor: NvbandwidthFloor | None = bounds.floor if bounds else None
        self.limits: Ceilings = (
            bounds.ceilings
            if bounds
            else ceilings(
                hardware.pcie_gen,
                pcie_rate(printer.catalog.physics, hardware.pcie_gen),
                hardware.nvlink_bandwidth,
            )
        )
        self.failing = failing

    def passing(self, way: Direction) -> float:
        """A healthy GPU's one-way copy: between its floor and its ceiling."""
        low = floor_of(self.floor, way) if self.floor else None
        high = self.limits.of(way)
        if low is not None and high is not None:
            return (low + high) / 2
        if low is not None:
            return low * OVER_FLOOR
        if high is not None:
            return high * OF_CEILING
        return self.passing("hostToDevice") if way == "deviceToDevice" else 0.0

    def cell(self, testcase: str, gpu: int) -> float:
        """One cell of a testcase; `gpu` the GPU it measures (a pair's reading one)."""
        way = direction(testcase)
        if way is None:
            if "latency" in testcase:
                return LATENCY_NS
            pair = testcase.startswith("device_to_device")
            return self.passing("deviceToDevice" if pair else "hostToDevice") * OF_CEILING
        if self.failing and gpu == 0:
            low = floor_of(self.floor, way) if self.floor else None
            return (low if low is not None else self.passing(way)) * FAILING_SHARE
        return self.passing(way)


def _testcase(testcase: str, gpus: int, figures: _Figures) -> list[str]:
    """One testcase as nvbandwidth prints it: its name, what it measures, matrix, SUM."""
    engine = "SM" if testcase.endswith("_sm") else "CE"
    unit = "(ns)" if "latency" in testcase else "bandwidth (GB/s)"
    arrow = "<->" if "bidirectional" in testcase or "latency" in testcase else "->"
    if testcase.startswith(("device_to_host", "all_to_host")) or "_read" in testcase:
        arrow = "<->" if arrow == "<->" else "<-"
    pair = testcase.startswith("device_to_device")
    source = "GPU" if pair else "CPU"
    what = "memory latency" if "latency" in testcase else "memcpy"
    header = "  " + "".join(f"{c:>10}" for c in range(gpus))
    rows: list[str] = []
    total = 0.0
    for row in range(gpus if pair else 1):
        cells = []
        for column in range(gpus):
            if pair and row == column:
                cells.append(f"{'N/A':>10}")
                continue
            value = figures.cell(testcase, row if pair else column)
            total += round(value, 2)
            cells.append(f"{value:>10.2f}")
        rows.append(f"{row:>2}" + "".join(cells))
    return [
        f"Running {testcase}.",
        f"{what} {engine} {source}(row) {arrow} GPU(column) {unit}",
        header,
        *rows,
        "",
        f"SUM {testcase} {total:.2f}",
        "",
    ]


MAKER: Maker = nvbandwidth_output  # what `rehearse/makers/registry.py` finds by the kind's name
