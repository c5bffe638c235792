"""Which network transport a run used, from its NCCL_DEBUG=INFO (or TRACE) lines.

Only what NCCL says it *used* counts:

- `Using network IB` / `Using network Socket` (and `Assigned NET plugin Socket to comm`
  of NCCL 2.2x), and every connection's `via NET/IB/1/GDRDMA` or `via NET/Socket/0`;
- only when a log shows neither, a transport that initialised (`Initialized NET plugin
  Socket`, or a device list such as `NET/IB : Using [0]mlx5_0:1/RoCE`), unless the same
  log says that transport then failed.

Probes are not use: `NET/IB : No device found.`, `Failed to initialize NET plugin IB`,
`Failed to open libibverbs.so` and the empty `NET/IB : Using [RO]; OOB ...` that NCCL
prints before giving IB up all appear on Socket-only runs. RoCE runs through NCCL's IB
transport, so it is reported as `IB` (as NVCRE does). Without NCCL_DEBUG lines nothing
is known and the list stays empty, as it does for a run that only used NVLink, P2P or
shared memory. So does a log whose communicators are all single-node (`nNodes 1` on every
`comm ... nRanks N nNodes M` line) with no connection `via NET/...`: NCCL 2.2x still picks
a network at init (`Using network Socket` on one GPU), but it carried nothing.

A run that failed or crashed never got as far as carrying data, so for it the init lines
are all there is: it keeps the transport they name (`Using network Socket` on one node,
`NET/IB : Using [0]mlx5_0:1/RoCE`, or the AWS Libfabric plugin's `NET/OFI` lines, which
NCCL later names `Using network AWS Libfabric`), so a failure can still be told apart
from a fallback to TCP.

Whether or not data crossed it, the network NCCL selected is reported (`networks`: the
names above, `AWS Libfabric` for the aws-ofi-nccl plugin's `NET/OFI` lines), and so is each
plugin that failed to come up, with the host whose line says so (`host:pid:tid [dev] NCCL
INFO Failed to initialize NET plugin IB`): an IB plugin failing on a node is a fact about
that node (its RDMA device or driver), even where the run needed no network.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass

from nvcregen.ingest.limits import bounded_int, matched

# A network's name: a few words, each bounded, so no match runs on along a long line.
_NAME = r"[A-Za-z][\w-]{0,63}(?: [A-Za-z][\w-]{0,63}){0,7}"
_INFO = "NCCL INFO"  # patterns below are searched only after its first occurrence
_USED = (
    re.compile(rf"\bUsing network (?P<name>{_NAME})\s*$"),
    re.compile(rf"\bAssigned NET plugin (?P<name>{_NAME}) to comm"),
)
_VIA_NET = re.compile(rf"\bvia NET/(?P<name>{_NAME})(?P<rest>\S*)")
_READY = (
    re.compile(rf"\bInitialized NET plugin (?P<name>{_NAME})\s*$"),
    re.compile(r"\bNET/(?P<name>IB|Socket)\s*: Using \[\d"),  # a real device list
)
_OFI = re.compile(r"\bNET/OFI (?:Initializing|Using|Selected [Pp]rovider)\b")
OFI_NAME = "AWS Libfabric"  # the network name aws-ofi-nccl gives NCCL
_NODES = re.compile(r"\bnRanks\s+\d+\s+nNodes\s+(?P<nodes>\d+)\b")
_FAILED = re.compile(rf"\bFailed to initialize NET plugin (?P<name>{_NAME})\s*$")
_HOST = re.compile(r"(?:^|\s)(?P<host>[A-Za-z0-9][\w.-]{0,252}):\d+:\d+ \[\d+\] NCCL INFO\b")
_NOT_TRANSPORTS = frozenset({"Plugin"})


@dataclass(frozen=True)
class TransportInfo:
    """Transports seen in a log and whether GPUDirect RDMA was used."""

    transports: tuple[str, ...]
    gdrdma: bool
    networks: tuple[str, ...] = ()  # what NCCL selected, whether or not data crossed it
    failed_plugins: tuple[tuple[str, str], ...] = ()  # (host or "", plugin), in order seen


def detect_transports(lines: Iterable[str], *, finished: bool = True) -> TransportInfo:
    """The network transports NCCL used, as its NCCL_DEBUG lines say.

    Args:
        lines: Log lines (launcher prefixes may or may not be stripped).
        finished: False for a run that failed or crashed: the transport its init lines
            name is kept even where no connection was made.

    Returns:
        Sorted unique transport names (`IB`, `Socket`, or a plugin's network name) and
        whether any connection line carries the `GDRDMA` flag; the networks NCCL selected
        (the same names, also for single-node communicators) and the plugins that failed
        to initialize, each with the host its line names.

    """
    used: set[str] = set()
    ready: set[str] = set()
    failed: set[str] = set()
    failures: dict[tuple[str, str], None] = {}
    gdrdma = False
    nodes: set[int] = set()
    connected = False
    for whole in lines:
        line = matched(whole)
        info = line.find(_INFO)
        after = info + len(_INFO)
        if info >= 0 and (counted := _last(_NODES, line, after)) is not None:
            nodes.add(bounded_int(counted["nodes"], "a node count"))
        if "NET" not in line and "network" not in line:
            continue
        if info >= 0:
            used.update(m["name"] for pattern in _USED if (m := pattern.search(line, after)))
            ready.update(m["name"] for pattern in _READY if (m := pattern.search(line, after)))
        if (via := _VIA_NET.search(line)) is not None and via["name"] not in _NOT_TRANSPORTS:
            used.add(via["name"])
            connected = True
            gdrdma = gdrdma or "/GDRDMA" in via["rest"]
        if info >= 0 and _OFI.search(line):
            ready.add(OFI_NAME)
        if (fail := _FAILED.search(line)) is not None:
            failed.add(fail["name"])
            host = _HOST.search(line, 0, info + len(_INFO)) if info >= 0 else None
            failures.setdefault(("" if host is None else host["host"], fail["name"]))
    networks = tuple(sorted(used or (ready - failed)))
    if finished and not connected and nodes == {1}:
        # single-node communicators: no network carried data, though NCCL selected one
        return TransportInfo((), gdrdma, networks, tuple(failures))
    return TransportInfo(networks, gdrdma, networks, tuple(failures))


def _last(pattern: re.Pattern[str], line: str, start: int) -> re.Match[str] | None:
    """The last match in a line from `start` (as a greedy `.*` before the pattern finds)."""
    last = deque(pattern.finditer(line, start), maxlen=1)
    return last[0] if last else None
