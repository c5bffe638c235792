"""The Site input language, `nvcregen.io/v1alpha1`: frozen pydantic models.

These models are the single source of `schemas/site.v1alpha1.json`
(`nvcregen.spec.schema.site_json_schema`); a test fails when the two drift.
Unit-bearing fields are strings in the schema (with a pattern editors can use)
and are parsed by `nvcregen.core.units` where they are used.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic.alias_generators import to_camel

from nvcregen.core.kube import KUBE_VERSION_PATTERN

API_VERSION = "nvcregen.io/v1alpha1"
KIND = "Site"

Scope = Literal["intra-node", "inter-node"]
Fabric = Literal["roce", "ib", "tcp"]
Transport = Literal["IB", "Socket"]

_DNS_LABEL = r"^[a-z]([-a-z0-9]*[a-z0-9])?$"
_DNS_SUBDOMAIN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
_DURATION = r"^([0-9]+(h|m|s|ms))+$"
_SIZE = r"^[0-9]+(\.[0-9]+)? ?([KMGT]i?B|kB|B)$"
_BANDWIDTH = r"^[0-9]+(\.[0-9]+)? ?([KMGT](i?B|b)/s|Gbps)$"
_COMPARISON = r"^(>=|>|<=|<|==) ?[0-9]+(\.[0-9]+)? ?[A-Za-z/%]*$"
_DIGEST = r"^sha256:[a-f0-9]{64}$"
# Hosts (RFC 1123: labels of letters, digits and inner hyphens, up to 63 characters,
# joined by dots) and OCI references (the distribution reference grammar: an optional
# registry `host[:port]`, then lower-case path components joined by `/`, each of
# alphanumerics separated by `.`, `_`, `__` or hyphens; a tag of up to 128 word characters,
# dots and hyphens; nvcregen pins by sha256). A registry is told from a first path
# component as the grammar does: it holds a dot or a port, or is `localhost`. No part
# admits a space, a line break or a quote, so nothing but a name passes.
_HOST_LABEL = r"[a-zA-Z0-9]([-a-zA-Z0-9]{0,61}[a-zA-Z0-9])?"
_HOSTNAME = rf"{_HOST_LABEL}(\.{_HOST_LABEL})*"
_IPV6 = r"\[[0-9A-Fa-f:.]{2,45}\]"
_PORT_NUMBER = r"[0-9]{1,5}"
_REGISTRY = (
    rf"({_HOST_LABEL}(\.{_HOST_LABEL})+(:{_PORT_NUMBER})?|{_HOST_LABEL}:{_PORT_NUMBER}"
    rf"|localhost(:{_PORT_NUMBER})?|{_IPV6}(:{_PORT_NUMBER})?)"
)
_PATH_COMPONENT = r"[a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*"
_REPOSITORY_NAME = rf"({_REGISTRY}/)?{_PATH_COMPONENT}(/{_PATH_COMPONENT})*"
_TAG = r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}"
_END = "$"  # the end of the text (`validate/schema.py` refuses a last line break too)
IMAGE = rf"^{_REPOSITORY_NAME}(:{_TAG})?(@sha256:[a-f0-9]{{64}})?{_END}"
REPOSITORY = rf"^{_REPOSITORY_NAME}{_END}"
OCI_REF = rf"^oci://{_REPOSITORY_NAME}{_END}"
CHART_VERSION = rf"^[A-Za-z0-9_][A-Za-z0-9_.+-]{{0,127}}{_END}"
MIRROR = rf"^{_REGISTRY}(/{_PATH_COMPONENT})*{_END}"
HOST_PORT = rf"^({_HOSTNAME}|{_IPV6}):{_PORT_NUMBER}{_END}"
# A Git URL: https or ssh with an optional user, a host and a path of URL characters
# (a password is refused before the schema: NVC113), or scp-style `user@host:path`.
_URL_PATH = r"[A-Za-z0-9._~%!$&'()*+,;=:@/-]*"
GIT_URL = (
    rf"^((https|ssh)://([A-Za-z0-9._~%-]+@)?({_HOSTNAME}|{_IPV6})(:{_PORT_NUMBER})?(/{_URL_PATH})?"
    rf"|[A-Za-z0-9._-]+@{_HOSTNAME}:[A-Za-z0-9._~/-]+){_END}"
)
_LABEL_VALUE = r"^[a-zA-Z0-9]([-a-zA-Z0-9_.]{0,61}[a-zA-Z0-9])?$"
_LABEL_KEY = (
    r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
    r"[a-zA-Z0-9]([-a-zA-Z0-9_.]{0,61}[a-zA-Z0-9])?$"
)
_RESOURCE_NAME = (
    r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/"
    r"[a-zA-Z0-9]([-A-Za-z0-9_.]{0,61}[a-zA-Z0-9])?$"
)


def _unit(kind: str, pattern: str, example: str) -> object:
    """Field metadata for a unit-bearing string; `x-nvcregen-unit` names its parser."""
    return Field(
        pattern=pattern, json_schema_extra={"x-nvcregen-unit": kind, "examples": [example]}
    )


Name = Annotated[str, Field(pattern=_DNS_LABEL, min_length=1, max_length=32)]
NodeName = Annotated[str, Field(pattern=_DNS_SUBDOMAIN, min_length=1, max_length=253)]
Duration = Annotated[str, _unit("duration", _DURATION, "30m")]
Size = Annotated[str, _unit("size", _SIZE, "1GiB")]
Bandwidth = Annotated[str, _unit("bandwidth", _BANDWIDTH, "200Gb/s")]
BandwidthComparison = Annotated[str, _unit("bandwidth-comparison", _COMPARISON, ">= 380 GB/s")]
RatioComparison = Annotated[str, _unit("ratio-comparison", _COMPARISON, ">= 0.9")]
Digest = Annotated[str, Field(pattern=_DIGEST)]
Image = Annotated[
    str,
    Field(
        pattern=IMAGE,
        max_length=512,
        examples=["nvcr.io/nvidia/pytorch:26.01-py3@sha256:" + "0" * 64],
    ),
]
QueueName = Annotated[str, Field(pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", max_length=63)]
Cpu = Annotated[str, Field(pattern=r"^([1-9][0-9]*m|[0-9]+(\.[0-9]{1,3})?)$", max_length=16)]
Memory = Annotated[str, Field(pattern=r"^[0-9]+(Ki|Mi|Gi|Ti)?$", max_length=16)]


class StrictModel(BaseModel):
    """Base for every spec model: frozen, camelCase keys, unknown keys forbidden."""

    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        alias_generator=to_camel,
        validate_by_name=False,
        use_attribute_docstrings=True,  # the string under a field is its schema description
    )


class Metadata(StrictModel):
    """Identity of a site; `name` becomes `out/<name>/` and the default `cluster` label."""

    name: Name
    labels: dict[str, str] = Field(default_factory=dict)
    """Labels for the site's own bookkeeping; not copied onto generated objects."""


class KubernetesSpec(StrictModel):
    """The cluster's Kubernetes minor version; it selects core schemas and compatibility."""

    version: Annotated[str, Field(pattern=KUBE_VERSION_PATTERN, examples=["1.30"])]
    """The Kubernetes minor version, quoted (`"1.30"`): it picks the core schemas objects are
    checked against."""


class ChartSpec(StrictModel):
    """Where the NVCRE Helm chart comes from, pinned by version and digest.

    `digest` is the chart's OCI manifest digest in the registry (what Flux's
    OCIRepository `ref.digest` and `helm pull ...@sha256:` name). `archive` is a local
    `.tgz` of the chart (relative to the site file) to render in-process instead of
    referencing the registry; `sha256` is that file's own hash (`sha256sum FILE`),
    which must match before anything is rendered from it.
    """

    ref: Annotated[
        str,
        Field(
            pattern=OCI_REF,
            max_length=512,
            examples=["oci://ghcr.io/nvidia/cluster-readiness-engine"],
        ),
    ] = "oci://ghcr.io/nvidia/cluster-readiness-engine"
    """The chart's OCI reference (`oci://host/path/chart`)."""
    version: Annotated[str, Field(pattern=CHART_VERSION, examples=["0.7.0"])] = "0.7.0"
    """The chart version (an OCI tag)."""
    digest: Digest | None = None
    """The chart's OCI manifest digest (`sha256:...`): Flux and Argo CD pull exactly it."""
    archive: str | None = None
    """A local `.tgz` of the chart, relative to the site file, rendered in-process."""
    sha256: Digest | None = None
    """The archive file's own hash (`sha256sum FILE`), checked before it is rendered."""


class ManagerImage(StrictModel):
    """The NVCRE controller image; pin it by digest."""

    repository: Annotated[
        str,
        Field(
            pattern=REPOSITORY,
            max_length=255,
            examples=["ghcr.io/nvidia/cluster-readiness-engine/manager"],
        ),
    ] = "ghcr.io/nvidia/cluster-readiness-engine/manager"
    """The controller image repository (rewritten behind `images.mirror`)."""
    digest: Digest | None = None
    """The controller image's digest (`sha256:...`); `--strict` refuses a site without it."""


class NvcreSpec(StrictModel):
    """Which NVCRE to install and where its readiness objects live."""

    version: Literal["0.7.0"] = "0.7.0"
    """The NVCRE release nvcregen targets."""
    namespace: Name = "nvcre"
    """The namespace of NVCRE and of every readiness run (trainer mode: TrainJobs and Jobs)."""
    managed: bool = True
    """Whether this site installs the namespace, the collector's account and (NVCRE mode)
    NVCRE itself; false when another site on the cluster does (`nvcregen retest` writes
    such a site), and this one only adds its readiness runs to that namespace."""
    chart: ChartSpec = Field(default_factory=ChartSpec)
    image: ManagerImage = Field(default_factory=ManagerImage)
    pdb: bool = False  # a PodDisruptionBudget (minAvailable 1): blocks drains with one replica
    """A PodDisruptionBudget (minAvailable 1) for the controller: with one replica it blocks node
    drains."""


class TrainerDependency(StrictModel):
    """Kubeflow Trainer, which runs every NVCRE workload as a TrainJob.

    With `managed: true` its chart is installed, pinned by version and, with `chartDigest`
    (the chart's OCI manifest digest), by content; `imageDigest` pins the controller image
    (`trainer-controller-manager:v<version>@<digest>`). `--strict` refuses either unpinned.
    """

    version: Literal["2.2.1"] = "2.2.1"
    """The Kubeflow Trainer release nvcregen installs or expects."""
    managed: bool = True
    """Whether nvcregen installs Trainer's chart; false expects it installed."""
    chart_digest: Digest | None = None
    """The Trainer chart's OCI manifest digest; `--strict` refuses a managed Trainer without."""
    image_digest: Digest | None = None
    """The controller image's digest (`trainer-controller-manager:v<version>@<digest>`)."""


class JobSetDependency(StrictModel):
    """JobSet is a shared CRD: with `managed: false` nvcregen never emits or upgrades it.

    `managed: false` makes JobSet a precondition `nvcregen check --server` tests; with
    `managed: true` Trainer's chart installs its bundled JobSet, its controller image
    pinned by `imageDigest`.
    """

    version: Literal["0.11.0"] = "0.11.0"
    """The JobSet release Trainer's chart bundles."""
    managed: bool = False
    """Whether Trainer's chart installs its bundled JobSet; false makes JobSet a precondition."""
    image_digest: Digest | None = None
    """The bundled JobSet controller image's digest (`jobset:v<version>@<digest>`)."""


class PrometheusDependency(StrictModel):
    """The Prometheus Operator and the labels its Prometheus selects monitors by."""

    operator: bool = True
    """Whether the Prometheus Operator (and its CRDs) is installed: without it no monitoring
    objects are generated."""
    selector: dict[str, str] = Field(default_factory=lambda: {"release": "prometheus"})
    """The labels the Prometheus object selects ServiceMonitors and rules by (its
    `serviceMonitorSelector`)."""


class DcgmDependency(StrictModel):
    """A standalone DCGM hostengine (`host:port`); DCGM level 4 needs one."""

    hostengine: (
        Annotated[
            str,
            Field(
                pattern=HOST_PORT,
                max_length=261,
                examples=["nvidia-dcgm.gpu-operator.svc:5555"],
            ),
        ]
        | None
    ) = None
    """`host:port` of a standalone DCGM hostengine (GPU Operator `dcgm.enabled`)."""


class PodAllowance(StrictModel):
    """cpu and memory the queue counts per readiness pod beyond what nvcregen knows it asks.

    Kueue counts LimitRange defaults, sidecars and RuntimeClass overhead in a pod's requests.
    """

    cpu: Cpu = "1"
    """cpu per readiness pod, on top of what nvcregen knows the pod requests."""
    memory: Memory = "4Gi"
    """memory per readiness pod, on top of what nvcregen knows the pod requests."""


class KueueDependency(StrictModel):
    """Kueue admits every readiness run whole, within the window (docs/design/0007-admission.md).

    `managed: true` installs Kueue 0.19.2 from its OCI chart and generates the queues; with
    `managed: false` runs go to the existing LocalQueue `localQueue` (generated, bound to
    `clusterQueue`, only when `clusterQueue` is named), and `version` is that Kueue's.
    `podsReadyTimeout` defaults to the plan's shortest test timeout, at least 10m.
    """

    version: Annotated[str, Field(pattern=r"^[0-9]+\.[0-9]+\.[0-9]+$")] = "0.19.2"
    """The Kueue release: the one installed (`managed: true`, 0.19.2), or the existing one."""
    managed: bool = True
    """Whether nvcregen installs Kueue and its queues; false uses the cluster's Kueue."""
    chart_digest: Digest | None = None
    """The Kueue chart's OCI manifest digest; `--strict` refuses a managed Kueue without it."""
    image_digest: Digest | None = None
    """The Kueue controller image's digest (`v<version>@<digest>`)."""
    local_queue: QueueName = "readiness"
    """The LocalQueue in NVCRE's namespace every readiness run is queued in."""
    cluster_queue: Annotated[str, Field(pattern=_DNS_SUBDOMAIN, max_length=253)] | None = None
    """With `managed: false`: an existing ClusterQueue the generated LocalQueue binds to."""
    pods_ready_timeout: Duration | None = None
    """How long Kueue waits for all of a run's pods to be ready before it requeues the run
    (default: the plan's shortest test timeout, at least 10m)."""
    requeue_limit: Annotated[int, Field(ge=1, le=10)] = 3
    """How many times a run whose pods are not all ready in time is requeued before it is
    deactivated."""
    pod_allowance: PodAllowance = Field(default_factory=PodAllowance)
    """cpu and memory the quota counts per pod on top of its own requests."""
    prebuilt_workloads: bool = True
    """Trainer mode: nvcregen writes each run's Kueue Workload itself (a prebuilt workload),
    so a run Kueue deactivated is Degraded instead of queued; false for a Kueue that does
    not adopt prebuilt workloads or is configured differently."""


class GangScheduler(StrictModel):
    """NVCRE's `gangScheduler` (e.g. KAI Scheduler) instead of Kueue; NVCRE mode only."""

    scheduler_name: Annotated[str, Field(pattern=_DNS_SUBDOMAIN, max_length=253)]
    """The pods' `schedulerName` (e.g. `kai-scheduler`)."""
    queue: Annotated[str, Field(pattern=_LABEL_VALUE, max_length=63)] = "default-queue"
    """The scheduler's queue the runs go to."""
    queue_label_key: Annotated[str, Field(pattern=_LABEL_KEY, max_length=317)] | None = None
    """The label that names the queue (KAI: `kai.scheduler/queue`; Run:ai: `runai/queue`)."""


class Dependencies(StrictModel):
    """Components NVCRE relies on, and who owns them.

    Readiness runs are admitted by `kueue` unless `gangScheduler` is set (NVCRE mode).
    """

    trainer: TrainerDependency = Field(default_factory=TrainerDependency)
    """Kubeflow Trainer, which runs every workload as a TrainJob."""
    jobset: JobSetDependency = Field(default_factory=JobSetDependency)
    """JobSet, which Trainer's TrainJobs run as."""
    prometheus: PrometheusDependency = Field(default_factory=PrometheusDependency)
    """The Prometheus Operator the monitoring layer's objects are for."""
    dcgm: DcgmDependency = Field(default_factory=DcgmDependency)
    """A standalone DCGM hostengine, for DCGM level 4."""
    kueue: KueueDependency = Field(default_factory=KueueDependency)
    """Kueue, which admits every readiness run whole (unless `gangScheduler` is set)."""
    gang_scheduler: GangScheduler | None = None
    """NVCRE's gang scheduler instead of Kueue (NVCRE mode only)."""


class Images(StrictModel):
    """Workload images by role; unset roles use the catalog's default image.

    `mirror` makes the site offline: every image and Helm chart it pulls (workloads, NVCRE,
    Trainer, JobSet, Kueue) comes from `<mirror>/<original registry and path>`, and
    `images.txt` lists them all. An offline site's MPI workers cannot install sshd at
    start (NVCRE's runtimes and nvcregen's would `apt-get install openssh-server`), so
    multi-node NCCL tests need an `nccl` image that ships `/usr/sbin/sshd`, which
    `ncclShipsSshd: true` states.
    """

    mirror: (
        Annotated[
            str,
            Field(pattern=MIRROR, max_length=255, examples=["registry.example.internal/mirror"]),
        ]
        | None
    ) = None
    """The registry every image and chart is pulled through (`<mirror>/<registry>/<path>`)."""
    nccl: Image | None = None
    """The nccl-tests image, pinned by digest."""
    dcgm: Image | None = None
    """The DCGM diagnostics image, pinned by digest."""
    training: Image | None = None
    """The checkpointed training image, pinned by digest."""
    nccl_ships_sshd: bool = False
    """Whether the `nccl` image ships `/usr/sbin/sshd`: an offline site's multi-node tests
    need it."""

    @property
    def offline(self) -> bool:
        """Whether the site pulls everything through its mirror (and nothing else)."""
        return self.mirror is not None


class PodNetwork(StrictModel):
    """How RDMA pods reach the pool's NICs: the host's network, or one Multus network per NIC.

    RoCE needs the NIC's netdev (its IP and GID table) in the pod's network namespace; with
    the common OFED driver setup a pod on the cluster network alone fails at connection
    setup. `hostNetwork: true` runs RDMA pods on the node's network (their sshd then
    listens on port 2222, beside the node's own); `networks` names the Multus
    NetworkAttachmentDefinitions (`name` or `namespace/name`), one per NIC in `hcas`
    order, as the NVIDIA Network Operator creates them (e.g. macvlan or host-device
    networks on each RoCE NIC).
    """

    host_network: bool = False
    """Run RDMA pods on the node's network (sshd on port 2222)."""
    networks: list[
        Annotated[
            str,
            Field(
                pattern=r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?/)?[a-z0-9]([-a-z0-9.]*[a-z0-9])?$",
                max_length=253,
            ),
        ]
    ] = Field(default_factory=list, max_length=32)
    """Multus NetworkAttachmentDefinitions (`name` or `namespace/name`), one per NIC in
    `hcas` order."""

    @model_validator(mode="after")
    def _one_way(self) -> PodNetwork:
        if self.host_network == bool(self.networks):
            raise ValueError("a pod network is either hostNetwork: true or a list of networks")
        return self


class Nics(StrictModel):
    """The NICs of each node in a pool, as the GPU workloads should use them.

    `podNetwork` says how RDMA pods reach them (needed for RoCE; see PodNetwork).
    `nvcreNicsChecked: true` says a TrainJob NVCRE made on this cluster was seen to
    request the NICs: on a model NVCRE 0.7.0 does not know (H20, H20-3e, L20), where what
    it does with `mlnxPerNode` and `nicResourceName` is undocumented, RDMA collectives then
    stay Certification categories instead of WorkloadRuns naming the NICs themselves.
    """

    count: Annotated[int, Field(ge=0, le=32)]
    """RDMA NICs per node."""
    fabric: Fabric
    """`roce`, `ib` (InfiniBand) or `tcp` (no RDMA)."""
    speed: Bandwidth
    """Line rate of one NIC, with its unit (`200Gb/s`)."""
    hcas: list[Annotated[str, Field(pattern=r"^[a-zA-Z0-9_.:-]+$")]] = Field(default_factory=list)
    """RDMA device names (`mlx5_0`, ...) in NIC order: RDMA tests pin `NCCL_IB_HCA` to them."""
    resource_name: Annotated[str, Field(pattern=_RESOURCE_NAME, max_length=253)] | None = None
    """The extended resource the device plugin advertises the NICs as (`rdma/hca`,
    `nvidia.com/mlnxnics`)."""
    socket_interface: Annotated[str, Field(pattern=r"^[=^]?[a-zA-Z0-9_.,-]+$")] | None = None
    """`NCCL_SOCKET_IFNAME`: the interface NCCL bootstraps (and TCP tests run) over."""
    gid_index: Annotated[int, Field(ge=0, le=255)] | None = None
    """`NCCL_IB_GID_INDEX` for RoCE (often 3 for RoCEv2)."""
    pod_network: PodNetwork | None = None
    nvcre_nics_checked: bool = False


class Topology(StrictModel):
    """GPU and NIC topology as `nvidia-smi topo -m` reports it."""

    nvlink: Annotated[str, Field(pattern=r"^NV[0-9]+$")] | None = None
    """NVLink between GPU pairs as `nvidia-smi topo -m` shows it (`NV18`)."""
    numa: list[list[Annotated[int, Field(ge=0, le=63)]]] = Field(default_factory=list)
    """GPU indices per NUMA node (`[[0, 1, 2, 3], [4, 5, 6, 7]]`)."""
    nic_affinity: Literal["PIX", "PXB", "PHB", "NODE", "SYS"] | None = None
    """How the NICs attach to the GPUs (`PIX`: the same PCIe switch)."""


class Toleration(StrictModel):
    """A taint the pool's nodes carry, as the toleration readiness pods need for it.

    Kubernetes' Toleration: `operator: Exists` tolerates any value of `key` (or, without
    a key, every taint); `Equal` (the default) only `value`. In NVCRE mode a keyed one
    becomes a `target.taintSelectors` entry, so name only taints every node of the pool has.
    """

    key: Annotated[str, Field(pattern=_LABEL_KEY, max_length=317)] | None = None
    """The taint's key; without one (and `operator: Exists`) every taint is tolerated."""
    operator: Literal["Exists", "Equal"] = "Equal"
    """`Equal` tolerates the taint with `value`; `Exists` any value of `key`."""
    value: (
        Annotated[str, Field(pattern=r"^([a-zA-Z0-9]([-a-zA-Z0-9_.]{0,61}[a-zA-Z0-9])?)?$")] | None
    ) = None
    """The taint's value (`operator: Equal` only)."""
    effect: Literal["NoSchedule", "PreferNoSchedule", "NoExecute"] | None = None
    """The taint effect tolerated; all effects when left out."""

    @model_validator(mode="after")
    def _consistent(self) -> Toleration:
        if self.operator == "Exists" and self.value is not None:
            raise ValueError("operator Exists takes no value")
        if self.operator == "Equal" and self.key is None:
            raise ValueError("operator Equal needs a key")
        return self

    def as_toleration(self) -> dict[str, str]:
        """The pod-template form."""
        found = {"key": self.key, "operator": self.operator, "value": self.value}
        found["effect"] = self.effect
        return {name: value for name, value in found.items() if value is not None}


class FabricLevels(StrictModel):
    """The node labels naming each level of a pool's network fabric.

    Only the levels named count: `levels: {leaf: fabric.topograph.run/tier-0}` is a fabric
    of leaves alone. Newer topograph releases (v1) label `accelerator.topograph.run/domain`
    and `fabric.topograph.run/tier-N`, tier 0 the switch closest to the node (the leaf),
    tier 1 the spine, tier 2 the core. Every level named must be on every node of the pool
    (NVC394, NVC399): Kueue places pods only on nodes carrying every level of the Topology.
    """

    accelerator: Annotated[str, Field(pattern=_LABEL_KEY, max_length=317)] | None = None
    """The NVLink (accelerator) domain's label."""
    leaf: Annotated[str, Field(pattern=_LABEL_KEY, max_length=317)]
    """The leaf switch's label: the level cross-leaf stages pair."""
    spine: Annotated[str, Field(pattern=_LABEL_KEY, max_length=317)] | None = None
    """The spine's label."""
    core: Annotated[str, Field(pattern=_LABEL_KEY, max_length=317)] | None = None
    """The core's label."""

    def keys(self) -> tuple[str, ...]:
        """The level labels present, highest first (Kueue's Topology order)."""
        found = (self.core, self.spine, self.leaf, self.accelerator)
        return tuple(dict.fromkeys(k for k in found if k is not None))


TOPOGRAPH_LEVELS = {
    "accelerator": "network.topology.nvidia.com/accelerator",
    "leaf": "network.topology.nvidia.com/leaf",
    "spine": "network.topology.nvidia.com/spine",
    "core": "network.topology.nvidia.com/core",
}


class PoolFabric(StrictModel):
    """A pool's network fabric: the node labels of its levels (placement from the inventory)."""

    levels: FabricLevels = Field(
        default_factory=lambda: FabricLevels.model_validate(TOPOGRAPH_LEVELS)
    )
    """The node labels of the fabric's levels (default: topograph's
    `network.topology.nvidia.com/{accelerator,leaf,spine,core}`)."""


class NodeExpectations(StrictModel):
    """What every node of a pool must run, read by the node-health gate (issue 23).

    A node whose `nvidia-smi` shows another value is **drift** and fails (NVC817); a fact
    left out here is taken from the node's entry in the site's inventory (driver, CUDA, GPU
    count), else checked against the majority of the pool (NVC818, a warning). The GPU
    count expected is the pool's `gpusPerNode`.
    """

    driver: Annotated[str, Field(pattern=r"^[0-9]+(\.[0-9]+){1,3}$", max_length=32)] | None = None
    """The NVIDIA driver version, as `nvidia-smi` prints it, e.g. `580.159.04`."""
    cuda: Annotated[str, Field(pattern=r"^[0-9]+\.[0-9]+$", max_length=16)] | None = None
    """The CUDA version the driver supports, e.g. `13.0`."""
    vbios: Annotated[str, Field(pattern=r"^[0-9A-Fa-f]{2}(\.[0-9A-Fa-f]{2}){4}$")] | None = None
    """The VBIOS version of every GPU, e.g. `96.00.A5.00.1A`."""
    pcie_gen: Annotated[int, Field(ge=1, le=7)] | None = None
    """The PCIe generation each GPU's link supports (its maximum)."""
    pcie_width: Literal[1, 2, 4, 8, 16, 32] | None = None
    """The PCIe lanes each GPU's link runs at."""
    mig: Literal[False] | None = None
    """`false`: MIG must be off on every GPU."""


class NodePool(StrictModel):
    """A set of identical GPU nodes, named explicitly or by a label selector.

    A selector pool states `nodeCount`, the number of nodes it is expected to match,
    so the plan's budget can be checked before anything runs. `productLabels` must be
    the catalog's labels for the model unless `productLabelsOverride: true` says a node
    was checked and reports other ones. `tolerations` are the taints the pool's GPU nodes
    carry (e.g. `nvidia.com/gpu:NoSchedule`), which every readiness pod must tolerate.
    """

    name: Name
    """The pool's name (a DNS label); stages and thresholds refer to it."""
    model: Annotated[str, Field(min_length=1, max_length=64)]
    """A GPU model of the catalog (`catalog/hardware/`), e.g. `H20-3e`."""
    product_labels: list[Annotated[str, Field(min_length=1, max_length=63)]] | None = None
    """The `nvidia.com/gpu.product` values of the pool's nodes (default: the catalog's)."""
    product_labels_override: bool = False
    """Accept `productLabels` the catalog does not list for the model."""
    nodes: list[NodeName] | None = Field(default=None, min_length=1, max_length=4096)
    """The pool's nodes by name (or a `selector` and `nodeCount`)."""
    selector: dict[str, str] | None = None
    """Node labels that select the pool's nodes (with `nodeCount`)."""
    node_count: Annotated[int, Field(ge=1, le=100_000)] | None = None
    gpus_per_node: Annotated[int, Field(ge=1, le=16)] | None = None
    """GPUs per node; the catalog's for the model when left out."""
    nics: Nics | None = None
    topology: Topology | None = None
    tolerations: list[Toleration] = Field(default_factory=list, max_length=32)
    fabric: PoolFabric | None = None
    """The pool's fabric levels; which node sits under which leaf comes from the site's
    inventory (docs/design/0011-fabric.md)."""

    expect: NodeExpectations | None = None
    """What each node must run (driver, CUDA, VBIOS, PCIe, MIG); checked by `node-health`.

    When the site names an inventory, each node's driver, CUDA version and GPU count come
    from its entry where this statement (or `gpusPerNode`) leaves them out; the pool's
    statement wins. `nvcregen ingest node --site --pool` and `collect` read both.
    """

    @model_validator(mode="after")
    def _nodes_or_selector(self) -> NodePool:
        if (self.nodes is None) == (self.selector is None):
            raise ValueError("a node pool names its nodes with exactly one of nodes or selector")
        return self


class Stage(StrictModel):
    """One step of the staged readiness plan; it becomes one Certification."""

    name: Name
    """The stage's name (a DNS label); its objects carry it."""
    scope: Scope
    """`intra-node` (one node per job) or `inter-node` (`nodesPerJob` nodes per job)."""
    pool: Name | None = None
    """The node pool the stage runs on; the first pool when left out."""
    tests: list[Annotated[str, Field(pattern=_DNS_LABEL, max_length=40)]] = Field(min_length=1)
    """Catalog tests (`catalog/tests/`) the stage runs."""
    nodes_per_job: Annotated[int, Field(ge=1, le=4096)] | None = None
    """Nodes per job of an inter-node stage; the pool's nodes when left out (at least two)."""
    timeout_per_job: Duration | None = None
    """Each job's timeout; from the physics model (expected duration x timeoutFactor) when left
    out."""
    pin_transport: bool = False
    """Run RDMA collectives as WorkloadRuns pinning `NCCL_NET=IB` and the HCA list, so a missing
    RDMA path fails instead of falling back to TCP."""
    groups: Literal["leaf", "cross-leaf", "accelerator", "pool", "diagnose"] | None = None
    """How an inter-node stage groups a pool with a fabric: within one leaf, pairs of leaves
    (every leaf pair in the fewest rounds), one NVLink domain, the whole pool, or NVCRE's
    `diagnose` (NVCRE mode); `nodesPerJob` consecutive nodes when left out."""


class Window(StrictModel):
    """The test window: concurrency, wall-clock deadline and GPU-hour budget.

    `timeoutFactor` is the safety factor on each job's expected duration: a stage without
    `timeoutPerJob` gets expected duration x timeoutFactor, rounded up to whole minutes
    (docs/design/0005-physics.md).
    """

    max_concurrent_jobs: Annotated[int, Field(ge=1, le=1024)] = 1
    """How many jobs may run at once (NVCRE `maxConcurrent`, the Kueue quota)."""
    deadline: Duration
    """Wall-clock time the whole plan must fit, worst case included."""
    gpu_hours: Annotated[float, Field(gt=0, le=1_000_000)]
    """GPU-hours the whole plan may use, worst case included."""
    retests: Annotated[int, Field(ge=0, le=10)] = 0
    """How many times a failed job may be run again, counted in the worst case."""
    timeout_factor: Annotated[float, Field(ge=1.25, le=10)] = 2.0


class Periodic(StrictModel):
    """Continuous re-certification: single-node stages re-run on a schedule (trainer mode).

    Each stage's tests become one batch/v1 CronJob per node pack and chunk, whose Jobs
    queue in the site's LocalQueue at a priority below 0 and below every stage's, so tenant
    work takes the capacity back (docs/design/0021-periodic.md).
    """

    schedule: Annotated[str, Field(min_length=1, max_length=100)]
    """A cron schedule as a CronJob takes it: five fields (minute hour day-of-month month
    day-of-week) or `@hourly`, `@daily`, `@weekly`, `@monthly`, `@yearly`."""
    stages: list[Name] = Field(min_length=1, max_length=32)
    """Names of `intra-node` stages of `readiness.stages` to re-run each period."""
    time_zone: Annotated[str, Field(min_length=1, max_length=64)] | None = None
    """The schedule's IANA time zone (CronJob `timeZone`); the controller's (UTC) when left
    out."""
    starting_deadline: Duration | None = None
    """How late a missed period may still start (CronJob `startingDeadlineSeconds`); 1h when
    left out."""


class Readiness(StrictModel):
    """What runs, in which order, and within which budget.

    `engine` is what runs the plan: `nvcre` compiles it to NVCRE Certifications and
    WorkloadRuns; `trainer` to Kubeflow Trainer TrainingRuntimes and TrainJobs and plain
    batch/v1 Jobs, with NVCRE not installed (docs/design/0003-trainer-mode.md).
    """

    engine: Literal["nvcre", "trainer"] = "nvcre"
    trigger: Literal["manual", "on-sync"] = "manual"
    """`manual`: GitOps applies the runs only when started; `on-sync`: at every sync."""
    window: Window
    rounds: Annotated[int, Field(ge=1, le=100)] = 3
    """How many times each test runs (NVCRE `repeatCount`)."""
    stages: list[Stage] = Field(min_length=1, max_length=32)
    packing: Literal["perRun", "packed"] = "perRun"
    """Trainer mode: `perRun` makes one run per test, round and node (or node group);
    `packed` runs a stage's tests one after the other in one run per round, one Job per
    64 nodes for tests inside a node and one TrainJob per node group for the rest: the
    form that a fleet's engines can hold (docs/design/0018-fleet-units.md)."""
    periodic: Periodic | None = None
    """Single-node stages re-run on a schedule at the site's lowest priority, after the
    one-shot plan (trainer mode; docs/design/0021-periodic.md)."""


class Threshold(StrictModel):
    """A typed pass criterion for one test at one scope (and optionally one size).

    With `pool`, only the stages on that node pool are held to it.
    """

    test: Annotated[str, Field(pattern=_DNS_LABEL, max_length=40)]
    """The catalog test the threshold is for."""
    scope: Scope
    """The scope of the stages it applies to."""
    pool: Name | None = None
    transport: Transport | None = None
    """The transport the test must have used: `IB` (RDMA) or `Socket` (TCP)."""
    at: Size | None = None
    """The message size it is judged at (collect); NVCRE compares the maximum over sizes."""
    busbw: BandwidthComparison | None = None
    """Bus bandwidth bound, with its unit (`>= 380 GB/s`; `Gb/s` is bits)."""
    algbw: BandwidthComparison | None = None
    """Algorithm bandwidth bound, with its unit."""
    goodput: RatioComparison | None = None
    """Goodput bound of a training test (`>= 0.9`)."""
    baseline: Name | None = None
    """A catalog baseline (`catalog/baselines/`) the bound was derived from."""
    note: Annotated[str, Field(max_length=200)] | None = None
    """Free text kept with the threshold in index.json."""


class KeyRef(StrictModel):
    """A key of a Secret or ConfigMap in NVCRE's namespace (`ca.crt` unless named)."""

    name: Annotated[str, Field(pattern=_DNS_SUBDOMAIN, max_length=253)]
    """The Secret's or ConfigMap's name, in NVCRE's namespace."""
    key: Annotated[str, Field(pattern=r"^[-._a-zA-Z0-9]+$", max_length=253)] = "ca.crt"
    """The key holding the PEM-encoded CA certificate."""


class CaRef(StrictModel):
    """The CA that signed the metrics endpoint's certificate: a Secret or a ConfigMap key.

    cert-manager writes `ca.crt` into a Certificate's Secret; trust-manager distributes a
    CA bundle to a ConfigMap. Either must be in NVCRE's namespace, where the ServiceMonitor
    is (the Prometheus Operator reads it from there).
    """

    secret: KeyRef | None = None
    """A Secret key holding the CA (cert-manager's `ca.crt`)."""
    config_map: KeyRef | None = None
    """A ConfigMap key holding the CA bundle (trust-manager)."""

    @model_validator(mode="after")
    def _one_source(self) -> CaRef:
        if (self.secret is None) == (self.config_map is None):
            raise ValueError("a CA comes from exactly one of secret or configMap")
        return self


class TlsSpec(StrictModel):
    """TLS for scraping the controller: skipped, unless the site says a certificate is served.

    NVCRE 0.7.0's chart mounts no certificate and passes no certificate path, so the
    controller serves its metrics with a self-signed certificate that no CA verifies
    (`certificate: self-signed`, the default): the ServiceMonitor skips verification
    explicitly and keeps the bearer token. A platform that mounts a certificate into the
    controller itself (the chart has no value for it) says so with `certificate: platform`
    and names the CA that signed it in `ca` (`caSecret` is the short form of
    `ca: {secret: {name: ..., key: ca.crt}}`); `serverName` is the name in that
    certificate (default `nvcre-metrics-service.<namespace>.svc`). A CA without
    `certificate: platform` is refused (NVC370), as is `platform` without a CA (NVC380):
    either would verify what cannot verify and fail every scrape.
    """

    certificate: Literal["self-signed", "platform"] = "self-signed"
    """Who serves the controller's metrics certificate: itself (self-signed) or the platform."""
    insecure_skip_verify: bool = False
    """Skip verifying a platform certificate anyway (NVC331); a self-signed one never is."""
    server_name: Annotated[str, Field(pattern=_DNS_SUBDOMAIN, max_length=253)] | None = None
    """The name in the controller's certificate (default `nvcre-metrics-service.<ns>.svc`)."""
    ca: CaRef | None = None
    """The CA that signed the certificate the platform mounts into the controller."""
    ca_secret: Annotated[str, Field(pattern=_DNS_SUBDOMAIN)] | None = None
    """Short form of `ca: {secret: {name: <this>, key: ca.crt}}`."""

    @model_validator(mode="after")
    def _one_ca(self) -> TlsSpec:
        if self.ca is not None and self.ca_secret is not None:
            raise ValueError("name the CA once: ca or caSecret, not both")
        return self

    @property
    def ca_ref(self) -> CaRef | None:
        """The CA, whichever way the site wrote it."""
        if self.ca_secret is not None:
            return CaRef(secret=KeyRef(name=self.ca_secret))
        return self.ca


class ServiceMonitorSpec(StrictModel):
    """How Prometheus scrapes the NVCRE controller."""

    labels: dict[str, str] = Field(default_factory=lambda: {"release": "prometheus"})
    """The ServiceMonitor's labels: they must match the Prometheus selector."""
    interval: Duration | None = None
    """Scrape interval; Prometheus's default when left out."""
    scrape_timeout: Duration | None = None
    """Scrape timeout, at most the interval."""
    honor_labels: bool = True
    """Keep the metrics' own `job` and `namespace` labels (NVCRE's dashboards need them)."""
    tls: TlsSpec = Field(default_factory=TlsSpec)


class Monitoring(StrictModel):
    """Monitoring objects to generate."""

    service_monitor: ServiceMonitorSpec = Field(default_factory=ServiceMonitorSpec)
    recording_rules: bool = True
    """Generate the PrometheusRule (recording rules and alerts)."""
    dashboards: bool = True
    """Generate the Grafana dashboard ConfigMap."""


class GitOps(StrictModel):
    """The GitOps controller that applies `out/<site>/`.

    Without `repoURL` no GitOps objects are generated. `repoURL` may be scp-style
    (`git@host:org/repo.git`) for Argo CD only; Flux needs `ssh://git@host/org/repo.git`.
    `targetRevision` is a branch, a `refs/...` name or a commit SHA. `path` is the folder
    of this site's output inside the repository (default `out/<name>`). `secretRef` names
    the Secret in `flux-system` holding Flux's Git credentials (Flux only: Argo CD reads
    repository credentials from its own repository Secrets). `fluxSource` says whether Flux
    reads the site through its own artifact (default) or the whole repository.
    """

    engine: Literal["argocd", "flux"] = "argocd"
    """`argocd` or `flux`."""
    repo_url: (
        Annotated[
            str,
            Field(
                pattern=GIT_URL,
                max_length=2048,
                examples=["https://git.example.com/gpu/readiness.git"],
            ),
        ]
        | None
    ) = Field(default=None, alias="repoURL")
    target_revision: Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._/-]*$")] = "main"
    path: (
        Annotated[
            str,
            Field(pattern=r"^(\./)?[A-Za-z0-9_][A-Za-z0-9_.-]*(/[A-Za-z0-9_][A-Za-z0-9_.-]*)*/?$"),
        ]
        | None
    ) = None
    secret_ref: Annotated[str, Field(pattern=_DNS_SUBDOMAIN, max_length=253)] | None = None
    health_checks: Literal["install", "existing"] = "install"
    """Argo CD: `install` adds the health checks the readiness waves need to `argocd-cm`
    (server-side, from the platform layer); `existing` when another site on the cluster,
    or the Argo CD installation, already does: one object two Applications track flips
    between them."""
    flux_source: Literal["artifact", "repository"] = "artifact"
    """Flux: `artifact` reads the site's folder through an ExternalArtifact whose revision
    changes only with that folder's files (source-watcher, kustomize-controller's
    `ExternalArtifact` feature gate); `repository` reads the GitRepository, whose revision
    is the commit, so any commit stops a running plan after its current step."""


class SiteSpec(StrictModel):
    """Everything about one cluster site."""

    cluster: Annotated[str, Field(min_length=1, max_length=63)]
    """The cluster's name: sites naming the same one are checked against each other, and it labels
    the metrics."""
    kubernetes: KubernetesSpec
    nvcre: NvcreSpec = Field(default_factory=NvcreSpec)
    dependencies: Dependencies = Field(default_factory=Dependencies)
    images: Images = Field(default_factory=Images)
    inventory: (
        Annotated[
            str, Field(pattern=r"^[A-Za-z0-9_][A-Za-z0-9_.-]*(/[A-Za-z0-9_][A-Za-z0-9_.-]*)*$")
        ]
        | None
    ) = None
    """The site's node inventory (`nvcregen inventory`), relative to the project folder: nodes
    are checked against it, and fabric placement comes from it."""
    node_pools: list[NodePool] = Field(min_length=1, max_length=64)
    readiness: Readiness
    thresholds: list[Threshold] = Field(default_factory=list)
    monitoring: Monitoring = Field(default_factory=Monitoring)
    gitops: GitOps = Field(default_factory=GitOps)


class Site(StrictModel):
    """A `Site` file: one cluster site's hardware, plan and thresholds."""

    api_version: Literal["nvcregen.io/v1alpha1"]
    """Always `nvcregen.io/v1alpha1`."""
    kind: Literal["Site"]
    """Always `Site`."""
    metadata: Metadata
    spec: SiteSpec

    def with_gitops_path(self, path: str) -> Site:
        """The site with `gitops.path` set: where its output is in the GitOps repository."""
        gitops = self.spec.gitops.model_copy(update={"path": path})
        return self.model_copy(update={"spec": self.spec.model_copy(update={"gitops": gitops})})
