"""The pod network of RDMA runs: host networking or Multus networks per NIC (pure).

RoCE needs the NIC's netdev in the pod's network namespace: with the common OFED driver
setup, a pod on the cluster network alone fails at RDMA connection setup, and with
`NCCL_NET=IB` pinned the test fails. A pool's `nics.podNetwork` says which way its RDMA
pods get there (`nvcregen.spec.v1alpha1.PodNetwork`). Trainer mode writes it into every
pod template of an RDMA run; NVCRE 0.7.0 documents no field for it on Certifications or
WorkloadRuns, so NVCRE mode can only say so (NVC372: information, a warning where the site
set a podNetwork NVCRE mode cannot apply) and mark it assumed in the preview.

`check_pod_network` reports RoCE RDMA runs without a pod network (NVC371), networks that
do not match the NICs one to one (NVC373), and NVCRE mode's gap (NVC372).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from nvcregen.core import codes
from nvcregen.core.errors import Diagnostic, Severity
from nvcregen.core.manifest import Obj
from nvcregen.engineapi.registry import readiness_of
from nvcregen.plan.model import TestUnit
from nvcregen.spec.positions import Document
from nvcregen.spec.v1alpha1 import Site

MULTUS = "k8s.v1.cni.cncf.io/networks"
SSH_PORT = 22
HOST_SSH_PORT = 2222  # the node's own sshd holds 22 on the host network


@dataclass(frozen=True)
class PodNet:
    """What an RDMA run's pod templates carry for its network, and the port sshd uses."""

    fields: Obj = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)
    ssh_port: int = SSH_PORT


def pod_network(unit: TestUnit) -> PodNet:
    """The pod network of a run: only RDMA runs on a pool that names one get any."""
    nics = unit.pool.spec.nics
    network = nics.pod_network if nics is not None else None
    if unit.network != "rdma" or network is None:
        return PodNet()
    if network.host_network:
        fields = {"hostNetwork": True, "dnsPolicy": "ClusterFirstWithHostNet"}
        return PodNet(fields=fields, ssh_port=HOST_SSH_PORT)
    return PodNet(annotations={MULTUS: ",".join(network.networks)})


def check_pod_network(
    site: Site, test_units: Iterable[TestUnit], doc: Document, *, strict: bool = False
) -> list[Diagnostic]:
    """NVC371, NVC372, NVC373 for the pools the site's RDMA runs use (once per pool)."""
    found: list[Diagnostic] = []
    seen: set[int] = set()
    for unit in test_units:
        if unit.network != "rdma" or unit.pool.index in seen:
            continue
        seen.add(unit.pool.index)
        found += _pool_problems(site, unit, doc, strict=strict)
    return found


def _pool_problems(site: Site, unit: TestUnit, doc: Document, *, strict: bool) -> list[Diagnostic]:
    nics = unit.pool.spec.nics
    assert nics is not None  # RDMA runs only on pools with NICs
    where = f"/spec/nodePools/{unit.pool.index}/nics"
    network = nics.pod_network
    problems: list[tuple[str, Severity, str, str, str]] = []
    if network is not None and network.networks and len(network.networks) != nics.count:
        problems.append(
            (
                f"{where}/podNetwork/networks",
                Severity.ERROR,
                codes.NVC373.code,
                f"{len(network.networks)} networks for {nics.count} NICs: the Network Operator "
                "attaches one network per NIC",
                "list one NetworkAttachmentDefinition per NIC, in hcas order",
            )
        )
    if not readiness_of(site).attaches_pod_network and nics.fabric == "roce":
        problems.append(_nvcre_gap(where, unit))
    elif network is None and nics.fabric == "roce":
        severity = Severity.ERROR if strict else Severity.WARNING
        problems.append(
            (
                where,
                severity,
                codes.NVC371.code,
                f"pool {unit.pool.spec.name}'s RDMA runs use RoCE but name no pod network: on "
                "the cluster network alone RDMA connection setup fails with the common OFED "
                "setup, and with NCCL_NET=IB pinned the tests fail",
                "set nics.podNetwork: {hostNetwork: true}, or {networks: [<one Multus "
                "NetworkAttachmentDefinition per NIC>]} as the NVIDIA Network Operator sets up",
            )
        )
    return [
        Diagnostic(doc.span(p), sev, code, msg, p, hint) for p, sev, code, msg, hint in problems
    ]


def _nvcre_gap(where: str, unit: TestUnit) -> tuple[str, Severity, str, str, str]:
    """NVC372: information without a pod network; a warning when the site set one in vain."""
    pool = unit.pool.spec.name
    gap = (
        "NVCRE 0.7.0 documents no field to give RDMA pods a pod network (host network or "
        f"Multus networks) on pool {pool}'s RoCE NICs"
    )
    hint = (
        "check a preview TrainJob's pods on the cluster (kubectl get pod -o yaml); trainer "
        "mode (readiness.engine: trainer) writes nics.podNetwork into every RDMA pod"
    )
    if unit.pool.spec.nics is not None and unit.pool.spec.nics.pod_network is not None:
        message = f"{gap}, so this podNetwork is not applied in NVCRE mode"
        return f"{where}/podNetwork", Severity.WARNING, codes.NVC372.code, message, hint
    message = f"{gap}: unless NVCRE's platform overrides add one, RDMA connection setup may fail"
    return where, Severity.INFO, codes.NVC372.code, message, hint
