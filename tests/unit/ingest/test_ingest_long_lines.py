"""Long lines cost the log readers linear time (issue #20: 46-87 s for one 1 MB line).

Each hostile shape of `tools/bench_lines.py` is read at 256 KiB well within a second
(the quadratic patterns took seconds there); lines are matched up to MAX_LINE
characters, and what a line says within that bound is still read.
"""

from __future__ import annotations

import time

import pytest
from timebounds import HANG

from nvcregen.ingest.limits import MAX_LINE, matched
from nvcregen.ingest.transport import detect_transports
from tools.bench_lines import SHAPES, hostile, read


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_a_long_hostile_line_is_read_quickly(shape: str) -> None:
    reader, fragment, after = SHAPES[shape]
    text = hostile(fragment, 256 * 1024, after)
    start = time.perf_counter()
    read(reader, text)
    assert time.perf_counter() - start < HANG  # a hang guard; speed is in make bench


def test_lines_are_matched_up_to_the_bound_exactly() -> None:
    assert matched("x" * MAX_LINE) == "x" * MAX_LINE
    assert matched("x" * (MAX_LINE + 1)) == "x" * MAX_LINE
    assert matched("a " + "x" * MAX_LINE) == "a"  # cut at the last blank: no half word


def test_a_transport_within_the_bound_is_still_found() -> None:
    tail = " NCCL INFO Using network IB"
    line = "node-a:1:2 [0]" + " " * (MAX_LINE - len(tail) - 14) + tail
    assert len(line) == MAX_LINE
    assert detect_transports([line]).transports == ("IB",)
    beyond = "x" * (MAX_LINE - len(tail) + 1) + tail  # one character past the bound
    assert detect_transports([beyond]).transports == ()


def test_the_last_node_count_of_a_line_counts() -> None:
    line = "NCCL INFO comm 0x1 rank 0 nRanks 2 nNodes 2 comm 0x2 rank 0 nRanks 1 nNodes 1"
    assert detect_transports([line, "NCCL INFO Using network Socket"]).transports == ()
