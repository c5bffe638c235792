"""The node-health kind's NVC codes, registered with the rest (`kindapi.registry.load_codes`).

NVC824 (an NCCL network plugin that failed, read from an nccl-tests log) stays in
`core/codes.py`: `ingest/models.py` reports it for the nccl kind.
"""

from __future__ import annotations

from nvcregen.core.codes import (
    ERROR,
    NOTE_0014_NODE_HEALTH,
    REGISTRY,
    WARNING,
    Code,
    FixedSeverity,
    register,
)


def _code(number: int, title: str, severity: FixedSeverity = "") -> Code:
    return register(REGISTRY, Code(number, title, severity, doc=NOTE_0014_NODE_HEALTH))


NVC800 = _code(800, "a node-health file or value not readable", ERROR)
NVC801 = _code(801, "PCIe link width below its maximum", ERROR)
NVC802 = _code(802, "PCIe generation below its maximum", WARNING)
NVC803 = _code(803, "ECC disabled or a change pending", ERROR)
NVC804 = _code(804, "uncorrectable ECC errors since the last reset", ERROR)
NVC805 = _code(805, "uncorrectable ECC errors over the GPU's life", WARNING)
NVC806 = _code(806, "SRAM uncorrectable errors past NVIDIA's threshold", ERROR)
NVC807 = _code(807, "pages pending retirement", WARNING)
NVC808 = _code(808, "a row remapping failed", ERROR)
NVC809 = _code(809, "a row remapping pending", WARNING)
NVC810 = _code(810, "memory banks low on spare rows", WARNING)
NVC811 = _code(811, "hardware slowdown active", ERROR)
NVC812 = _code(812, "software thermal slowdown active", WARNING)
NVC813 = _code(813, "MIG on or pending", WARNING)
NVC814 = _code(814, "near or past the thermal slowdown limit")
NVC815 = _code(815, "an Xid that needs a reset, reboot or support", ERROR)
NVC816 = _code(816, "an Xid that ends only its application", WARNING)
NVC817 = _code(817, "drift from the pool's statement", ERROR)
NVC818 = _code(818, "a node unlike its pool's majority", WARNING)
NVC819 = _code(819, "fewer GPUs reported than attached", ERROR)
NVC820 = _code(820, "the driver asks for recovery", ERROR)
NVC821 = _code(821, "an Xid nvcregen's catalogue does not know", WARNING)
NVC822 = _code(822, "a node not in the site's inventory", WARNING)
NVC823 = _code(823, "retired pages past NVIDIA's limits", ERROR)
NVC825 = _code(825, "Xid events not judged", WARNING)
