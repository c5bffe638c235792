"""The nccl kind's log: nccl-tests over a run's hosts at the physics model's figures (pure).

Every size of the test's sweep at `plan.physics.busbw_at` (the expected bus bandwidth,
latency floor included), each table a little different from every other (a repeated
table reads as a copy, issue #31); NCCL's network lines where the run crosses nodes. A
failing run prints a tenth of every figure.
"""

from __future__ import annotations

import zlib

from nvcregen.kinds.nccl import printer as ncclprint
from nvcregen.kinds.nccl.kind import KIND as NCCL
from nvcregen.plan.model import TestUnit
from nvcregen.plan.physics import busbw_at, measured_sizes
from nvcregen.rehearse.printer import FAILING_SHARE, Maker, Output, Printer, Section, gpu_name
from nvcregen.results.runs import expected_transport

JITTER = 0.001  # a row's step below the expected figure: 0.1% of it
PRINTED = 0.01  # GB/s: the smallest step nccl-tests prints (a smaller one would repeat a table)
ROUND_ROWS = 2  # the largest sizes, whose steps count the round
VARIED = 1.0  # GB/s: smaller figures are printed as the model has them
NCCL_DEBUG = {
    "IB": (
        "{host}:1274:1274 [0] NCCL INFO NCCL version 2.27.3+cuda12.9",
        "{host}:1274:1290 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [RO]; OOB eth0:10.0.0.1<0>",
        "{host}:1274:1290 [0] NCCL INFO Using network IB",
    ),
    "Socket": (
        "{host}:1274:1274 [0] NCCL INFO NCCL version 2.27.3+cuda12.9",
        "{host}:1274:1290 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>",
        "{host}:1274:1290 [0] NCCL INFO Using network Socket",
    ),
}


def nccl_output(printer: Printer, unit: TestUnit, at: Section) -> Output:
    """nccl-tests over the pack's nodes (one node: its ranks on the pod's host), NCCL's network.

    Every size of the test's sweep at the physics model's figure for it (`busbw_at`: the
    expected bus bandwidth, latency floor included), less a few steps of 0.1% (at least
    the 0.01 GB/s nccl-tests prints): the two largest sizes' steps count the round, so
    rounds 1 to 16 never print the same table; every other size of 1 GB/s or more steps
    by a hash of the pod, test and nodes, so two pods' tables differ too. A failing run
    prints a tenth of each figure. Sizes that move no bytes (an all-gather's smallest,
    printed as 0) are left out.
    """
    collective = str(NCCL.block(unit.test).test_type)
    share = FAILING_SHARE if at.failing else 1.0
    nodes = at.pack.nodes
    hosts = [at.pack.pod] if len(nodes) == 1 else list(nodes)
    per_host = unit.pool.gpus_per_node
    ranks = per_host * len(hosts)
    sizes = [s for s in measured_sizes(unit, printer.catalog) if s]  # no empty rows
    crc = zlib.crc32(f"{at.pack.pod}/{unit.stage.name}/{unit.test.name}/{nodes}".encode())
    turn = at.pack.round - 1
    rows = []
    for i, size in enumerate(sizes):
        value = (busbw_at(unit, printer.catalog, size) or 0.0) * share
        from_top = len(sizes) - 1 - i
        if from_top < ROUND_ROWS:
            steps = turn // 4**from_top % 4
        else:
            steps = (crc >> 2 * (i % 16)) & 3 if value >= VARIED else 0
        value -= steps * max(value * JITTER, PRINTED)
        rows.append(
            ncclprint.Row(
                size,
                ncclprint.time_for(size, value, collective, ranks),
                ncclprint.time_for(size, value * 0.998, collective, ranks),
            )
        )
    head = [
        ncclprint.banner(min(sizes), max(sizes)),
        *ncclprint.gpus(hosts, per_host, gpu_name(unit)),
    ]
    network = expected_transport(unit) if len(nodes) > 1 else None
    debug = [line.format(host=hosts[0]) for line in NCCL_DEBUG.get(network or "", ())]
    table = ncclprint.table(collective, ranks, rows)
    return Output("\n".join([*head, *debug, *table]) + "\n", 0, at.seconds)


MAKER: Maker = nccl_output  # what `rehearse/makers/registry.py` finds by the kind's name
