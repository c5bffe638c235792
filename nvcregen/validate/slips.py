"""NIC figures that look like unit slips (NVC387-389), warned at their line.

NIC ports are sold and rated in bits per second (25, 100, 200, 400, 800 Gb/s), and a
rate written in bytes is eight times that: `speed: 200GB/s` is a 1.6 Tb/s port, which
the physics model then uses for every ceiling and duration of the pool (a 441 GB/s
measurement would look plausible). So:

- NVC387: a NIC speed written in bytes per second (GB/s, MB/s, TB/s, GiB/s);
- NVC388: a NIC speed outside every port made (under 1 Gb/s or over MAX_PORT_GBITS);
- NVC389: more NICs than NICS_PER_GPU per GPU, as when a dual-port card's ports and
  its RDMA devices are both counted.

Each is a warning: the site still renders, with the figure as written.
"""

from __future__ import annotations

import re

from nvcregen.core import units
from nvcregen.core.errors import Diagnostic, Severity
from nvcregen.spec.positions import Document
from nvcregen.spec.v1alpha1 import NodePool

MAX_PORT_GBITS = 800.0  # the fastest NIC port shipping (ConnectX-8, Spectrum-X: 800 Gb/s)
MIN_PORT_GBITS = 1.0
NICS_PER_GPU = 2
_BYTES = re.compile(r"^[KMGT]i?B(?:/s|ps)$")


def nic_slips(doc: Document, index: int, pool: NodePool, gpus_per_node: int) -> list[Diagnostic]:
    """NVC387-389 for one pool's NICs."""
    nics = pool.nics
    if nics is None:
        return []
    found = []
    where = f"/spec/nodePools/{index}/nics/speed"
    try:
        rate = units.parse_bandwidth(nics.speed)
    except units.UnitError:
        return []  # NVC309 says why
    number, _, unit = rate.written.partition(" ")
    gbits = rate.gbytes_per_s * 8
    if _BYTES.match(unit):
        message = (
            f"speed {nics.speed} is bytes per second: {gbits:g} Gb/s per NIC port; NIC ports"
            " are rated in bits"
        )
        hint = f"did you mean {number}Gb/s? ({number} Gb/s is {float(number) / 8:g} GB/s)"
        found.append(_warning(doc, where, "NVC387", message, hint))
    elif not MIN_PORT_GBITS <= gbits <= MAX_PORT_GBITS:
        message = (
            f"speed {nics.speed} is {gbits:g} Gb/s per NIC port, outside every port made"
            f" ({MIN_PORT_GBITS:g} to {MAX_PORT_GBITS:g} Gb/s)"
        )
        hint = "write one port's line rate, e.g. 200Gb/s (ethtool or ibstat shows it)"
        found.append(_warning(doc, where, "NVC388", message, hint))
    if nics.count > NICS_PER_GPU * gpus_per_node:
        message = (
            f"{nics.count} NICs for {gpus_per_node} GPUs per node: more than {NICS_PER_GPU} per GPU"
        )
        hint = "count the ports NCCL uses (ibv_devices), not ports and devices both"
        at = f"/spec/nodePools/{index}/nics/count"
        found.append(_warning(doc, at, "NVC389", message, hint))
    return found


def _warning(doc: Document, where: str, code: str, message: str, hint: str) -> Diagnostic:
    return Diagnostic(doc.span(where), Severity.WARNING, code, message, where, hint)
