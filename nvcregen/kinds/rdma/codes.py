"""The RDMA rails kind's NVC codes, registered with the rest (`kindapi.registry.load_codes`)."""

from __future__ import annotations

from nvcregen.core.codes import ERROR, NOTE_0022_RDMA_RAILS, REGISTRY, Code, register


def _code(number: int, title: str) -> Code:
    return register(REGISTRY, Code(number, title, ERROR, doc=NOTE_0022_RDMA_RAILS))


NVC830 = _code(830, "an RDMA rail measured above its NIC's line rate")
NVC831 = _code(831, "perftest JSON whose unit its figures do not tell")
NVC832 = _code(832, "an RDMA rail below its floor")
