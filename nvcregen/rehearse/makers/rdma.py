"""The rdma kind's log: each HCA's perftest client between the rails script's markers (pure).

What `compile/templates/rdma-rails.sh.j2` prints on a node, read back by `collect` with
`results/rdmarails.py`: the begin line naming node, pod and start; for each HCA of the
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

from nvcregen.core import units
from nvcregen.kinds.rdma.params import RdmaParams
from nvcregen.kinds.registry import kind_of
from nvcregen.plan.model import TestUnit
from nvcregen.rehearse.printer import (
    FAILED_RC,
    FAILING_SHARE,
    Output,
    Printer,
    Section,
    bus_ids,
    gpu_name,
    stamp,
)

MARK = "@@nvcregen-rdma"
DASHES = " " + "-" * 87
TITLES = {"ib_write_bw": "RDMA_Write BW Test", "ib_read_bw": "RDMA_Read BW Test"}
CUDA_END = ("deallocating GPU buffer 000078e9f8800000", "destroying current CUDA Ctx")
PEAK = 1.002  # a row's peak over its average


def rails_output(printer: Printer, unit: TestUnit, at: Section) -> Output:
    """The rails script on one node: its begin line, a section per HCA, its end line."""
    rdma: RdmaParams = kind_of(unit.test).block(unit.test)
    nics = unit.pool.spec.nics
    hcas = list(nics.hcas) if nics is not None else []
    line_rate = units.parse_bandwidth(nics.speed).gbytes_per_s * 8 if nics else 0.0  # Gb/s
    floor = rdma.floor * line_rate
    size = units.parse_size(rdma.message_size)
    gpus = unit.pool.gpus_per_node
    numa = {g: n for n, group in enumerate(unit.pool.spec.topology.numa) for g in group} if (
        unit.pool.spec.topology is not None
    ) else {}  # fmt: skip
    lines = [f"{MARK} begin node={at.pack.nodes[0]} pod={at.pack.pod} start={stamp(at.start)}"]
    worst = 0
    for rail, hca in enumerate(hcas):
        gpu = rail % gpus
        gbps = floor * FAILING_SHARE if at.failing and rail == 0 else (floor + line_rate) / 2
        lines.append(f"{MARK} rail begin hca={hca} gpu={gpu if rdma.use_cuda else 'none'}"
                     f" numa={numa.get(gpu, -1)}")  # fmt: skip
        lines += _client(unit, rdma, hca, rail, gpu, size, gbps)
        lines.append(f"{MARK} rail end hca={hca} rc=0 server_rc=0")
        if gbps < round(floor, 3):
            lines.append(f"nvcregen: {hca} {gbps:.2f} Gb/s at {size} B, below {floor:g} Gb/s")
            worst = FAILED_RC
    lines.append(f"{MARK} end rc={worst}")
    return Output("\n".join(lines) + "\n", worst, at.seconds, exit_line=False)


def _client(
    unit: TestUnit, rdma: RdmaParams, hca: str, rail: int, gpu: int, size: int, gbps: float
) -> list[str]:
    """One rail's client output, as perftest prints it."""
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
    if rdma.duration:
        seconds = units.parse_duration(rdma.duration) / 1000
        iterations = max(1, round(gbps * 1e9 / 8 / size * seconds))
    gid = f"00:00:00:00:00:00:00:00:00:00:255:255:10:00:{rail:02d}:01"
    peak, rate = gbps * PEAK, gbps * 1e3 / 8 / size  # Mpps: million messages a second
    return [
        *cuda,
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
        f" GID: {gid}",
        f" remote address: LID 0000 QPN 0x{0x2A4 + rail:04x} PSN 0xf27096 RKey 0x020f00"
        " VAddr 0x007acbe5000000",
        f" GID: {gid}",
        DASHES,
        " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]",
        f" {size:<7d}    {iterations:<7d}        {peak:<7.2f}            {gbps:<7.2f}"
        f"              {rate:<7.6f}",
        DASHES,
        *(CUDA_END if rdma.use_cuda else ()),
    ]
