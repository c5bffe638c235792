"""Which network transport a run used, from its NCCL_DEBUG=INFO (or TRACE) lines.

NCCL names the network it picked in `Using network IB` / `Using network Socket`, in its
`NET/IB : Using [0]mlx5_0:1/RoCE ...` and `NET/Socket : Using ...` device lines, and on
every connection (`via NET/IB/1/GDRDMA`). RoCE runs through NCCL's IB transport, so it
is reported as `IB` (as NVCRE does). Without NCCL_DEBUG lines nothing is known and the
list stays empty, as it does for a run that only used NVLink, P2P or shared memory.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

_USING_NETWORK = re.compile(r"NCCL INFO.*?\bUsing network\s+(?P<name>\S.*?)\s*$")
_NET_DEVICE = re.compile(r"\bNET/(?P<name>IB|Socket)\b")
_VIA_NET = re.compile(r"\bvia NET/(?P<name>[A-Za-z][^/\s]*(?: [A-Za-z][^/\s]*)*)(?P<rest>\S*)")
_NOT_TRANSPORTS = frozenset({"Plugin"})


@dataclass(frozen=True)
class TransportInfo:
    """Transports seen in a log and whether GPUDirect RDMA was used."""

    transports: tuple[str, ...]
    gdrdma: bool


def detect_transports(lines: Iterable[str]) -> TransportInfo:
    """Collect the network transports that NCCL_DEBUG lines name.

    Args:
        lines: Log lines (launcher prefixes may or may not be stripped).

    Returns:
        Sorted unique transport names (`IB`, `Socket`, or a plugin's network name) and
        whether any connection line carries the `GDRDMA` flag.

    """
    names: set[str] = set()
    gdrdma = False
    for line in lines:
        if "NET/" not in line and "Using network" not in line:
            continue
        if (match := _USING_NETWORK.search(line)) is not None:
            names.add(match["name"])
        names.update(m["name"] for m in _NET_DEVICE.finditer(line))
        if (via := _VIA_NET.search(line)) is not None:
            if via["name"] not in _NOT_TRANSPORTS:
                names.add(via["name"])
            gdrdma = gdrdma or "/GDRDMA" in via["rest"]
    return TransportInfo(tuple(sorted(names)), gdrdma)
