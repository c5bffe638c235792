"""Every test kind, registered once; `kind_of(test)` is how the layers find a test's kind."""

from __future__ import annotations

from typing import Literal

from nvcregen.kinds.burnin.kind import BurnIn
from nvcregen.kinds.dcgm.kind import Dcgm
from nvcregen.kinds.linkcounters.kind import LinkCounters
from nvcregen.kinds.nccl.kind import Nccl
from nvcregen.kinds.node.kind import NodeHealth
from nvcregen.kinds.nvbandwidth.kind import Nvbandwidth
from nvcregen.kinds.protocol import KindTest, TestKind
from nvcregen.kinds.rdma.kind import Rdma
from nvcregen.kinds.rdma.pair import RdmaPair
from nvcregen.kinds.training.kind import Training

# a catalog test's `kind`
KindName = Literal[
    "nccl", "dcgm", "training", "node", "nvbandwidth", "rdma", "linkcounters", "rdmapair", "burnin"
]

KINDS: dict[str, TestKind] = {
    k.name: k
    for k in (
        Nccl(),
        Dcgm(),
        Training(),
        NodeHealth(),
        Nvbandwidth(),
        Rdma(),
        LinkCounters(),
        RdmaPair(),
        BurnIn(),
    )
}


def kind_of(test: KindTest) -> TestKind:
    """The kind of a catalog test (its `kind` field).

    Raises:
        ValueError: No kind of that name is registered (the catalog schema refuses it first).

    """
    found = KINDS.get(test.kind)
    if found is None:
        raise ValueError(f"test {test.name} has kind {test.kind!r}, which nvcregen does not know")
    return found
