"""Which network transport a run used, from its NCCL_DEBUG=INFO (or TRACE) lines.

NCCL names the network it picked in `Using network IB` / `Using network Socket`, in its
`NET/IB : Using [0]mlx5_0:1/RoCE ...` and `NET/Socket : Using ...` device lines, and on
every connection (`via NET/IB/1/GDRDMA`). RoCE runs through NCCL's IB transport, so it
is reported as `IB` (as NVCRE does). Without NCCL_DEBUG lines nothing is known and the
list stays empty, as it does for a run that only used NVLink, P2P or shared memory.

Two kinds of init line name a network that carried nothing, and are not counted:

- a plugin that failed to come up (`NET/IB : No device found.`, `Failed to initialize
  NET plugin IB`; NCCL 2.28 then still prints `NET/IB : Using [RO]; OOB ...`);
- the network every communicator picks at init (NCCL 2.2x prints `Using network Socket`
  on a one-GPU run) when the log shows only single-node communicators (`nNodes 1` on
  every `comm ... nRanks N nNodes M` line) and no connection `via NET/...`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

_USING_NETWORK = re.compile(r"NCCL INFO.*?\bUsing network\s+(?P<name>\S.*?)\s*$")
_NET_DEVICE = re.compile(r"\bNET/(?P<name>IB|Socket)\b")
_VIA_NET = re.compile(r"\bvia NET/(?P<name>[A-Za-z][^/\s]*(?: [A-Za-z][^/\s]*)*)(?P<rest>\S*)")
_NO_DEVICE = re.compile(r"\bNET/(?P<name>[A-Za-z][^\s/:]*)\s*:\s*No device found")
_PLUGIN_FAILED = re.compile(r"\bFailed to initialize NET plugin\s+(?P<name>\S+)")
_NODES = re.compile(r"NCCL INFO.*\bnRanks\s+\d+\s+nNodes\s+(?P<nodes>\d+)\b")
_NOT_TRANSPORTS = frozenset({"Plugin"})


@dataclass(frozen=True)
class TransportInfo:
    """Transports seen in a log and whether GPUDirect RDMA was used."""

    transports: tuple[str, ...]
    gdrdma: bool


@dataclass
class _Seen:
    """Network evidence collected line by line."""

    picked: set[str] = field(default_factory=set)  # `Using network X`
    devices: set[str] = field(default_factory=set)  # `NET/IB : Using ...` and the like
    connections: set[str] = field(default_factory=set)  # `via NET/X/...`
    failed: set[str] = field(default_factory=set)  # plugins that did not come up
    nodes: set[int] = field(default_factory=set)  # nNodes of each communicator
    gdrdma: bool = False

    def read(self, line: str) -> None:
        if (match := _NODES.search(line)) is not None:
            self.nodes.add(int(match["nodes"]))
        if "NET" not in line and "Using network" not in line:
            return
        if (match := _NO_DEVICE.search(line) or _PLUGIN_FAILED.search(line)) is not None:
            self.failed.add(match["name"])
            return
        if (match := _USING_NETWORK.search(line)) is not None:
            self.picked.add(match["name"])
        self.devices.update(m["name"] for m in _NET_DEVICE.finditer(line))
        if (via := _VIA_NET.search(line)) is not None:
            if via["name"] not in _NOT_TRANSPORTS:
                self.connections.add(via["name"])
            self.gdrdma = self.gdrdma or "/GDRDMA" in via["rest"]

    def used(self) -> set[str]:
        if not self.connections and self.nodes == {1}:
            return set()  # single-node communicators only: the picked network carried nothing
        return self.connections | self.picked | (self.devices - self.failed)


def detect_transports(lines: Iterable[str]) -> TransportInfo:
    """Collect the network transports that NCCL_DEBUG lines name.

    Args:
        lines: Log lines (launcher prefixes may or may not be stripped).

    Returns:
        Sorted unique transport names (`IB`, `Socket`, or a plugin's network name) and
        whether any connection line carries the `GDRDMA` flag.

    """
    seen = _Seen()
    for line in lines:
        seen.read(line)
    return TransportInfo(tuple(sorted(seen.used())), seen.gdrdma)
