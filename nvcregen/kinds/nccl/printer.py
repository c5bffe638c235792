"""Print nccl-tests output exactly as nccl-tests 2.13-2.17 does (the `%` formats of common.cu).

Checked against the real OCI capture in tests/fixtures/real-logs/ (its table is printed
back byte for byte by `tests/unit/ingest/test_ingest_written.py`): a banner, the device
list (`#  Rank  0 Group  0 Pid   1274 on HOST device  0 [0x0f] NAME`), the three header
lines, rows of `%12li  %12li  %8s  %6s  %6i` then per half `%7s  %6.2f  %6.2f  %5s` with
times printed `%7.2f` below 100 us, `%7.1f` below 10000 us and `%7.0f` above, and the
summary whose average is the mean of every row's unrounded bus bandwidth, printed `%g`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

HEADER = (
    "#                                                              out-of-place"
    "                       in-place          ",
    "#       size         count      type   redop    root     time   algbw   busbw #wrong"
    "     time   algbw   busbw #wrong",
    "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)"
    "            (us)  (GB/s)  (GB/s)       ",
)
FACTORS = {
    "all_reduce": lambda n: 2 * (n - 1) / n,
    "all_gather": lambda n: (n - 1) / n,
    "reduce_scatter": lambda n: (n - 1) / n,
    "alltoall": lambda n: (n - 1) / n,
}
Half = tuple[float, float, float, str]  # time (us), algbw, busbw, #wrong
WORD = {"int8": 1, "uint8": 1, "int32": 4, "uint32": 4, "int64": 8, "uint64": 8, "half": 2,
        "float": 4, "double": 8, "bfloat16": 2}  # fmt: skip


@dataclass(frozen=True)
class Row:
    """One size of one data type: out-of-place and in-place times in microseconds."""

    size: int
    time_oop: float
    time_ip: float
    dtype: str = "float"


def time_text(us: float) -> str:
    """A time as nccl-tests prints it."""
    if us >= 10000:
        return f"{us:7.0f}"
    return f"{us:7.1f}" if us >= 100 else f"{us:7.2f}"


def gpus(hosts: Sequence[str], per_host: int, name: str = "NVIDIA H20-3e") -> list[str]:
    """The `# Using devices` block: one process per GPU, ranks host by host."""
    lines = ["#", "# Using devices"]
    for h, host in enumerate(hosts):
        for d in range(per_host):
            rank, pid = h * per_host + d, 1274 + 1041 * h + d
            lines.append(
                f"#  Rank {rank:2d} Group  0 Pid {pid:6d} on {host:>10s} device {d:2d}"
                f" [0x{0x0F + 0x1E * d:02x}] {name}"
            )
    return lines


def banner(min_bytes: int, max_bytes: int) -> str:
    """The first line of a run of one process per GPU."""
    return (
        f"# nThread 1 nGpus 1 minBytes {min_bytes} maxBytes {max_bytes} step: 2(factor)"
        " warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0"
    )


def line(size: int, count: int, dtype: str, redop: str, halves: Sequence[Half]) -> str:
    """One row as `printf` lays it out."""
    text = f"{size:12d}  {count:12d}  {dtype:>8s}  {redop:>6s}  {-1:6d}"
    for time, algbw, busbw, wrong in halves:
        text += f"  {time_text(time)}  {algbw:6.2f}  {busbw:6.2f}  {wrong:>5s}"
    return text


def table(collective: str, nranks: int, rows: Sequence[Row]) -> list[str]:
    """The header, the rows and the summary of one collective over `nranks` ranks."""
    factor = FACTORS[collective](nranks)
    redop, wrong_ip = ("sum", "0") if collective == "all_reduce" else ("none", "0")
    if collective == "alltoall":
        wrong_ip = "N/A"
    lines, busbw = ["#", *HEADER], []
    for row in rows:
        count = row.size // WORD[row.dtype] // (1 if collective == "all_reduce" else nranks)
        halves = []
        for time, wrong in ((row.time_oop, "0"), (row.time_ip, wrong_ip)):
            algbw = row.size / 1e3 / time
            busbw.append(algbw * factor)
            halves.append((time, algbw, algbw * factor, wrong))
        lines.append(line(row.size, count, row.dtype, redop, halves))
    avg = math.fsum(busbw) / len(busbw)
    return [*lines, "# Out of bounds values : 0 OK", f"# Avg bus bandwidth    : {avg:g} ", "#"]


def run(collective: str, hosts: Sequence[str], per_host: int, rows: Sequence[Row]) -> list[str]:
    """A whole run: banner, devices and table."""
    sizes = [row.size for row in rows]
    head = [banner(min(sizes), max(sizes)), *gpus(hosts, per_host)]
    return [*head, *table(collective, len(hosts) * per_host, rows)]


def time_for(size: int, busbw: float, collective: str, nranks: int) -> float:
    """The time (us) at which `size` bytes give `busbw` GB/s, rounded as printed."""
    algbw = busbw / FACTORS[collective](nranks)
    us = size / 1e3 / algbw
    return float(time_text(us))
