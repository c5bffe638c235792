"""Which collective an nccl-tests log measured, from the evidence the log has.

In order: the `# Collective test starting: all_reduce_perf` header of newer nccl-tests,
a `..._perf` binary on a captured command line, the test's source file in a failure
trace (`Test failure all_reduce.cu:90`), and last the log's file name (`allgather-...`),
since old logs print no name at all.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import PurePath

COLLECTIVES = (
    "all_reduce",
    "all_gather",
    "alltoall",
    "reduce_scatter",
    "broadcast",
    "reduce",
    "gather",
    "scatter",
    "sendrecv",
    "hypercube",
)
_ALIASES = {name.replace("_", ""): name for name in COLLECTIVES} | {
    "all2all": "alltoall",
    "alltoallv": "alltoall",
}
_NAMES = "|".join(sorted(COLLECTIVES, key=len, reverse=True))
_BINARY = re.compile(rf"\b(?P<name>{_NAMES})_perf\w*")
_SOURCE = re.compile(rf"\bTest failure (?P<name>{_NAMES})\.cu\b")
_SPELLINGS = "|".join(
    sorted({*COLLECTIVES, *_ALIASES, *(n.replace("_", "-") for n in COLLECTIVES)}, key=len)[::-1]
)
_BARE_MARKER = re.compile(rf"^[^\w\s]*\s*(?P<name>{_SPELLINGS})\s*[^\w\s]*$", re.IGNORECASE)


def marker_collective(line: str) -> str | None:
    """The collective a line introduces: a `..._perf` binary, or a bare `== all_gather ==`.

    Such lines come before a test's banner when a script runs several collectives into
    one file (`echo "=== all_gather_perf ==="`, `+ mpirun ... ./all_gather_perf -b 8`).
    """
    if match := _BINARY.search(line):
        return match["name"]
    if match := _BARE_MARKER.match(line.strip()):
        word = match["name"].lower().replace("-", "_")
        return word if word in COLLECTIVES else _ALIASES.get(word.replace("_", ""))
    return None


def trace_collective(lines: Iterable[str]) -> str | None:
    """The collective a failure trace names (`Test failure all_reduce.cu:90`), if any."""
    return next((m["name"] for line in lines if (m := _SOURCE.search(line))), None)


def collective_from_binary(binary: str) -> str | None:
    """The collective of an nccl-tests binary name such as `all_reduce_perf_mpi`."""
    match = _BINARY.search(binary.rsplit("/", 1)[-1])
    return match["name"] if match else None


def find_collective(lines: Iterable[str], source: str) -> str | None:
    """Find the collective a log measured.

    Args:
        lines: The log's lines.
        source: The log's file name ("" to skip the file-name fallback).

    Returns:
        A name from COLLECTIVES, or None when nothing tells.

    """
    from_trace: str | None = None
    for line in lines:
        if match := _BINARY.search(line):
            return match["name"]
        if from_trace is None and (match := _SOURCE.search(line)):
            from_trace = match["name"]
    return from_trace or _from_file_name(source)


def _from_file_name(source: str) -> str | None:
    if not source:
        return None
    for word in re.split(r"[^A-Za-z0-9_]+", PurePath(source).name.lower()):
        name = _ALIASES.get(word.removesuffix("_perf").replace("_", ""))
        if name is not None:
            return name
    return None
