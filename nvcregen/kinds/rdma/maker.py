"""The rdma kind's log: each HCA's perftest client between the rails script's markers (pure).

What `templates/rdma-rails.sh.j2` prints on a node, read back by `collect` with
`logs.py`: the begin line naming node, pod and start; for each HCA of the
pool's `nics.hcas` a section holding the client's output as perftest prints it with
`--report_gbits -s SIZE -F` (the form of the public sample in
tests/fixtures/captures/perftest/: its CUDA lines when the buffers are in a GPU, the
header, both GIDs, one row at the test's message size); the script's end line.

A healthy rail's average is midway between its floor (`rdma.floor` of the NIC's line
rate) and the line rate: 390 Gb/s on a 400 Gb/s NIC whose floor is 0.95. A failing
node's first rail runs at a tenth of its floor; the script then prints that it is below
the floor and exits 1, as it would.
"""

from __future__ import annotations

from dataclasses import dataclass

from nvcregen.core import units
from nvcregen.kinds.rdma.kind import KIND as RDMA
from nvcregen.kinds.rdma.params import RdmaParams
from nvcregen.kinds.rdma.reader import MARK
from nvcregen.plan.model import TestUnit
from nvcregen.rehearse.printer import (
    FAILED_RC,
    FAILING_SHARE,
    Maker,
    Output,
    Printer,
    Section,
    bus_ids,
    gpu_name,
    stamp,
)

DASHES = " " + "-" * 87
TITLES = {"ib_write_bw": "RDMA_Write BW Test", "ib_read_bw": "RDMA_Read BW Test"}
CUDA_END = ("deallocating GPU buffer 000078e9f8800000", "destroying current CUDA Ctx")
PEAK = 1.002  # a row's peak over its average
WAITING = ("*" * 36, "* Waiting for client to connect... *", "*" * 36)  # a server's banner


@dataclass(frozen=True)
class Rails:
    """What every rail of a pool is measured with: its HCAs, rates (Gb/s), size, NUMA."""

    hcas: tuple[str, ...]
    line_rate: float
    floor: float
    size: int
    numa: dict[int, int]  # each GPU's NUMA node, where the pool's topology states it

    def gpu(self, rdma: RdmaParams, rail: int, gpus: int) -> tuple[int, str]:
        """A rail's GPU, and its `gpu=... numa=...` as the scripts' rail lines print them."""
        gpu = rail % gpus
        return gpu, f"gpu={gpu if rdma.use_cuda else 'none'} numa={self.numa.get(gpu, -1)}"

    def gbps(self, rail: int, failing: bool) -> float:
        """A rail's average: midway between floor and line rate, a tenth of the floor failing."""
        if failing and rail == 0:
            return self.floor * FAILING_SHARE
        return (self.floor + self.line_rate) / 2


def rails_of(unit: TestUnit, rdma: RdmaParams) -> Rails:
    """The pool's rails as the test measures them."""
    nics = unit.pool.spec.nics
    line_rate = units.parse_bandwidth(nics.speed).gbytes_per_s * 8 if nics else 0.0  # Gb/s
    topology = unit.pool.spec.topology
    numa = {g: n for n, group in enumerate(topology.numa) for g in group} if topology else {}
    return Rails(tuple(nics.hcas) if nics is not None else (), line_rate,
                 rdma.floor * line_rate, units.parse_size(rdma.message_size), numa)  # fmt: skip


@dataclass(frozen=True)
class RailSide:
    """How one script runs the rails: measuring or serving, and what its lines print.

    `measures` is False for a pair's server (a write test's server prints no table);
    `hosts` the last octets of the local and remote GIDs (a loopback's are the same);
    `end` what a rail's end line says after its HCA; `floor` the floor as the script's
    template prints it.
    """

    measures: bool
    failing: bool
    floor: str
    end: str = "rc=0"
    hosts: tuple[int, int] = (1, 1)


def rail_sections(
    unit: TestUnit, rdma: RdmaParams, rails: Rails, side: RailSide
) -> tuple[list[str], int]:
    """Every rail's section of a rails script's log (no begin or end line), its exit code.

    The loopback (`rails_output`) and both sides of the pair form built on it print them.
    A measured rail below the floor (as Jinja rounds it, to 3 places) is said so, and the
    script exits 1, as its template does.
    """
    lines: list[str] = []
    worst = 0
    for rail, hca in enumerate(rails.hcas):
        gpu, shown = rails.gpu(rdma, rail, unit.pool.gpus_per_node)
        gbps = rails.gbps(rail, side.failing) if side.measures else None
        lines.append(f"{MARK} rail begin hca={hca} {shown}")
        lines += perftest_lines(unit, rdma, (hca, rail, gpu), rails.size, gbps, side.hosts)
        lines.append(f"{MARK} rail end hca={hca} {side.end}")
        if gbps is not None and gbps < round(rails.floor, 3):
            below = f"below {side.floor} Gb/s"
            lines.append(f"nvcregen: {hca} {gbps:.2f} Gb/s at {rails.size} B, {below}")
            worst = FAILED_RC
    return lines, worst


def rails_output(printer: Printer, unit: TestUnit, at: Section) -> Output:
    """The rails script on one node: its begin line, a section per HCA, its end line."""
    rdma: RdmaParams = RDMA.block(unit.test)
    rails = rails_of(unit, rdma)
    side = RailSide(True, at.failing, f"{rails.floor:g}", "rc=0 server_rc=0")
    sections, worst = rail_sections(unit, rdma, rails, side)
    begin = f"{MARK} begin node={at.pack.nodes[0]} pod={at.pack.pod} start={stamp(at.start)}"
    lines = [begin, *sections, f"{MARK} end rc={worst}"]
    return Output("\n".join(lines) + "\n", worst, at.seconds, exit_line=False)


def perftest_lines(
    unit: TestUnit,
    rdma: RdmaParams,
    on: tuple[str, int, int],
    size: int,
    gbps: float | None,
    hosts: tuple[int, int] = (1, 1),
) -> list[str]:
    """One rail's perftest output: a client's at `gbps`, or its server's (`gbps` None).

    `on` is the rail's HCA, index and GPU; `hosts` the last octets of the local and the
    remote GID's IPv4 address (a loopback's are the same). A server of a write test
    prints the banner it waits under, the header and both addresses, and no table: the
    client measures.
    """
    hca, rail, gpu = on
    nics = unit.pool.spec.nics
    link = "IB" if nics is not None and nics.fabric == "ib" else "Ethernet"
    cuda: list[str] = []
    if rdma.use_cuda:
        bus = bus_ids(unit.pool.gpus_per_node)[gpu].split(":", 1)[1]
        cuda = [
            "Perftest doesn't supports CUDA tests with inline messages: inline size set to 0",
            "initializing CUDA",
            "Listing all CUDA devices in system:",
            f"CUDA device {gpu}: PCIe address is {bus}",
            "",
            f"Picking device No. {gpu}",
            f"[pid = {29 + rail}, dev = {gpu}] device name = [{gpu_name(unit)}]",
            "creating CUDA Ctx",
            "making it the current CUDA Ctx",
        ]
    iterations = rdma.iterations
    if rdma.duration and gbps is not None:
        seconds = units.parse_duration(rdma.duration) / 1000
        iterations = max(1, round(gbps * 1e9 / 8 / size * seconds))
    gids = [f"00:00:00:00:00:00:00:00:00:00:255:255:10:00:{rail:02d}:{h:02d}" for h in hosts]
    head = [
        *cuda,
        *(WAITING if gbps is None else ()),
        DASHES,
        f"                    {TITLES[rdma.tool]}",
        f" Dual-port       : OFF          Device         : {hca}",
        f" Number of qps   : {rdma.queue_pairs:<14d} Transport type : IB",
        " Connection type : RC           Using SRQ      : OFF",
        " PCIe relax order: ON           Lock-free      : OFF",
        " ibv_wr* API     : ON           Using DDP      : OFF",
        " TX depth        : 128",
        " CQ Moderation   : 100",
        " CQE Poll Batch  : 16",
        " Mtu             : 4096[B]",
        f" Link type       : {link}",
        " GID index       : 3",
        " Max inline data : 0[B]",
        " rdma_cm QPs     : OFF",
        f" Data ex. method : {link}",
        DASHES,
        f" local address: LID 0000 QPN 0x{0x29E + rail:04x} PSN 0x73226b RKey 0x021400"
        " VAddr 0x0078e9f9000000",
        f" GID: {gids[0]}",
        f" remote address: LID 0000 QPN 0x{0x2A4 + rail:04x} PSN 0xf27096 RKey 0x020f00"
        " VAddr 0x007acbe5000000",
        f" GID: {gids[1]}",
        DASHES,
    ]
    if gbps is None:
        return [*head, *(CUDA_END if rdma.use_cuda else ())]
    peak, rate = gbps * PEAK, gbps * 1e3 / 8 / size  # Mpps: million messages a second
    return [
        *head,
        " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]",
        f" {size:<7d}    {iterations:<7d}        {peak:<7.2f}            {gbps:<7.2f}"
        f"              {rate:<7.6f}",
        DASHES,
        *(CUDA_END if rdma.use_cuda else ()),
    ]


MAKER: Maker = rails_output  # what `rehearse/makers/registry.py` finds by the kind's name
