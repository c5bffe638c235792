"""NIC figures that look like unit slips (NVC387-389), warned at their line.

NIC ports are sold and rated in bits per second (25, 100, 200, 400, 800 Gb/s), and a
rate written in bytes is eight times that: `speed: 200GB/s` is a 1.6 Tb/s port, which
the physics model then uses for every ceiling and duration of the pool (a 441 GB/s
measurement would look plausible). So:

- NVC387 (an error): a NIC speed written in bytes per second (GB/s, MB/s, TB/s, GiB/s),
  with the line rate in bits it most likely means;
- NVC388: a NIC speed outside every port made (under 1 Gb/s or over MAX_PORT_GBITS);
- NVC389: more NICs than NICS_PER_GPU per GPU, as when a dual-port card's ports and
  its RDMA devices are both counted.

NVC388 and NVC389 are warnings: the site still renders, with the figure as written.
"""

from __future__ import annotations

import re

from nvcregen.core import codes, units
from nvcregen.core.errors import Diagnostic, Severity
from nvcregen.spec.positions import Document
from nvcregen.spec.v1alpha1 import NodePool

MAX_PORT_GBITS = 800.0  # the fastest NIC port shipping (ConnectX-8, Spectrum-X: 800 Gb/s)
PORT_RATES_GBITS = (10.0, 25.0, 40.0, 50.0, 100.0, 200.0, 400.0, 800.0)  # Ethernet and IB ports
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
    gbits = rate.gbytes_per_s * 8
    slip = byte_rate_slip(rate)
    if slip is not None:
        message, hint = slip
        found.append(
            Diagnostic(doc.span(where), Severity.ERROR, codes.NVC387.code, message, where, hint)
        )
    elif not MIN_PORT_GBITS <= gbits <= MAX_PORT_GBITS:
        message = (
            f"speed {nics.speed} is {gbits:g} Gb/s per NIC port, outside every port made"
            f" ({MIN_PORT_GBITS:g} to {MAX_PORT_GBITS:g} Gb/s)"
        )
        hint = "write one port's line rate, e.g. 200Gb/s (ethtool or ibstat shows it)"
        found.append(_warning(doc, where, codes.NVC388.code, message, hint))
    if nics.count > NICS_PER_GPU * gpus_per_node:
        message = (
            f"{nics.count} NICs for {gpus_per_node} GPUs per node: more than {NICS_PER_GPU} per GPU"
        )
        hint = "count the ports NCCL uses (ibv_devices), not ports and devices both"
        at = f"/spec/nodePools/{index}/nics/count"
        found.append(_warning(doc, at, codes.NVC389.code, message, hint))
    return found


def byte_rate_slip(rate: units.Bandwidth) -> tuple[str, str] | None:
    """(message, hint) when a NIC speed is written in bytes per second; None otherwise."""
    number, _, unit = rate.written.partition(" ")
    if not _BYTES.match(unit):
        return None
    gbits = rate.gbytes_per_s * 8
    message = (
        f"speed {rate.written.replace(' ', '')} is bytes per second: {gbits:g} Gb/s per NIC port;"
        " NIC ports are rated in bits"
    )
    return message, _bits_hint(number, gbits)


def _bits_hint(number: str, gbits: float) -> str:
    """The port rate in bits a speed written in bytes most likely means.

    A byte rate that is exactly a port's rate divided by 8 (`25GB/s`) was converted: the
    port is `200Gb/s`. Otherwise the unit is a slip for bits (`200GB/s`: `200Gb/s`).
    """
    converted = f"{gbits:g}Gb/s"
    typed = f"{number}Gb/s"
    if gbits in PORT_RATES_GBITS and float(number) in PORT_RATES_GBITS:
        return (
            f"write {converted} (what {number} GB/s is), or {typed} if the port is rated {number}"
        )
    if gbits in PORT_RATES_GBITS:
        return f"write {converted} ({number} GB/s is {converted}): NIC speeds are in bits"
    return f"write {typed}: NIC ports are rated in bits ({typed} is {float(number) / 8:g} GB/s)"


def _warning(doc: Document, where: str, code: str, message: str, hint: str) -> Diagnostic:
    return Diagnostic(doc.span(where), Severity.WARNING, code, message, where, hint)
