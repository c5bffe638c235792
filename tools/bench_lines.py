"""Long hostile lines through the log readers: time must grow linearly with the line.

One line of megabytes reaches `ingest` and `collect` from any pod log. Each shape below
repeats a fragment one of the readers' patterns starts on (`NCCL INFO`, a network
name, a node count, a launcher message, an unclosed JSON object, a `dcgmi diag`
command) to 1, 2 and 4 MB; the time at 4 MB over the time at 1 MB is about 4 when the
cost is linear and about 16 when it is quadratic (issue #20: 46-87 s for one 1 MB line
of `NCCL INFO` fragments, 179 s at 4 MB). A shape whose 4 MB line takes under 50 ms
passes too: at that scale, the page faults of copying fresh 4 MB strings outweigh the
parsing, and a quadratic reader would take seconds.
"""

from __future__ import annotations

import contextlib
import functools
import time
from collections.abc import Callable

from nvcregen.ingest.dcgmdiag import parse_dcgm
from nvcregen.ingest.models import IngestFormatError
from nvcregen.kinds.nccl.reader import parse_nccl

MB = 1 << 20
SIZES = (1, 2, 4)
LINEAR_GOAL = 8.0  # 4 MB against 1 MB: 4 when linear (plus copying 4 MB strings), 16 when quadratic
FAST = 0.05  # seconds: below this at 4 MB, fresh memory for the copies weighs more than parsing
_TABLE = "#  size count type redop root time algbw busbw #wrong time algbw busbw #wrong\n"
SHAPES: dict[str, tuple[str, str, str]] = {  # name: (reader, fragment, text after the line)
    "NCCL INFO fragments": ("nccl", "node-a:1:2 [0] NCCL INFO ", _TABLE),
    "Using network names": ("nccl", "NCCL INFO Using network IB ", _TABLE),
    "node counts": ("nccl", "NCCL INFO comm 0x1 rank 0 nRanks 2 nNodes 2 ", _TABLE),
    "NCCL WARN blanks": ("nccl", "NCCL WARN x" + " " * 30, _TABLE),
    "launcher messages": (
        "nccl",
        "mpirun noticed that process rank 1 with PID 2 on node a exited on signal 9 (",
        _TABLE,
    ),
    "unclosed JSON objects": ("dcgm", '"DCGM Diagnostic": {"name": "a", ', ""),
    "dcgmi diag commands": ("dcgm", "dcgmi diag -x ", "+---+---+\n| Diagnostic | Result |\n"),
}


def hostile(fragment: str, size: int, after: str) -> str:
    """One line of `fragment` repeated to `size` characters, then `after`."""
    return (fragment * (size // len(fragment) + 1))[:size] + "\n" + after


def read(reader: str, text: str) -> None:
    """Run one reader; a refusal (an IngestFormatError) is an answer too."""
    parse: Callable[[str, str], object] = parse_nccl if reader == "nccl" else parse_dcgm
    with contextlib.suppress(IngestFormatError):
        parse(text, "hostile.log")


def timed(action: Callable[[], object]) -> float:
    """Best of five wall times, in seconds (the least disturbed on a shared machine)."""
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        action()
        best = min(best, time.perf_counter() - start)
    return best


def measure_lines() -> list[tuple[str, list[float]]]:
    """Seconds per shape at each of SIZES megabytes."""
    found = []
    for name, (reader, fragment, after) in SHAPES.items():
        texts = [hostile(fragment, size * MB, after) for size in SIZES]
        found.append((name, [timed(functools.partial(read, reader, text)) for text in texts]))
    return found


def main() -> None:
    """Print each shape's times and its 4 MB / 1 MB ratio."""
    sizes = "  ".join(f"{s} MB".rjust(8) for s in SIZES)
    print(f"{'one long line':28} {sizes}  {'4/1':>6}  goal")
    for name, seconds in measure_lines():
        ratio = seconds[-1] / max(seconds[0], 1e-6)
        fast = seconds[-1] < FAST and ratio > LINEAR_GOAL
        verdict = (
            "ok"
            if ratio <= LINEAR_GOAL
            else f"ok (under {FAST * 1000:.0f} ms)"
            if fast
            else "MISSED"
        )
        shown = "  ".join(f"{s:7.3f}s" for s in seconds)
        print(f"{name:28} {shown}  {ratio:5.2f}x  <= {LINEAR_GOAL:g}x {verdict}")


if __name__ == "__main__":
    main()
