"""The RDMA pair kind's NVC code, registered with the rest (`kindapi.registry.load_codes`)."""

from __future__ import annotations

from nvcregen.core.codes import ERROR, NOTE_0022_RDMA_RAILS, REGISTRY, Code, register

NVC774 = register(
    REGISTRY,
    Code(
        774,
        "an RDMA pair's client log without its server's, or the reverse",
        ERROR,
        doc=NOTE_0022_RDMA_RAILS,
    ),
)
