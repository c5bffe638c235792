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
_IMAGE = r"^[a-z0-9]+([._:/-][a-zA-Z0-9_.-]+)*(@sha256:[a-f0-9]{64})?$"
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
Image = Annotated[str, Field(pattern=_IMAGE, max_length=512)]
QueueName = Annotated[str, Field(pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", max_length=63)]
Cpu = Annotated[str, Field(pattern=r"^([1-9][0-9]*m|[0-9]+(\.[0-9]{1,3})?)$", max_length=16)]
Memory = Annotated[str, Field(pattern=r"^[0-9]+(Ki|Mi|Gi|Ti)?$", max_length=16)]


class StrictModel(BaseModel):
    """Base for every spec model: frozen, camelCase keys, unknown keys forbidden."""

    model_config = ConfigDict(
        extra="forbid", frozen=True, alias_generator=to_camel, validate_by_name=False
    )


class Metadata(StrictModel):
    """Identity of a site; `name` becomes `out/<name>/` and the default `cluster` label."""

    name: Name
    labels: dict[str, str] = Field(default_factory=dict)


class KubernetesSpec(StrictModel):
    """The cluster's Kubernetes minor version; it selects core schemas and compatibility."""

    version: Annotated[str, Field(pattern=r"^1\.(2[5-9]|3[0-7])$", examples=["1.30"])]


class ChartSpec(StrictModel):
    """Where the NVCRE Helm chart comes from, pinned by version and digest.

    `digest` is the chart's OCI manifest digest in the registry (what Flux's
    OCIRepository `ref.digest` and `helm pull ...@sha256:` name). `archive` is a local
    `.tgz` of the chart (relative to the site file) to render in-process instead of
    referencing the registry; `sha256` is that file's own hash (`sha256sum FILE`),
    which must match before anything is rendered from it.
    """

    ref: str = "oci://ghcr.io/nvidia/cluster-readiness-engine"
    version: str = "0.7.0"
    digest: Digest | None = None
    archive: str | None = None
    sha256: Digest | None = None


class ManagerImage(StrictModel):
    """The NVCRE controller image; pin it by digest."""

    repository: str = "ghcr.io/nvidia/cluster-readiness-engine/manager"
    digest: Digest | None = None


class NvcreSpec(StrictModel):
    """Which NVCRE to install and where its readiness objects live."""

    version: Literal["0.7.0"] = "0.7.0"
    namespace: Name = "nvcre"
    chart: ChartSpec = Field(default_factory=ChartSpec)
    image: ManagerImage = Field(default_factory=ManagerImage)
    pdb: bool = False  # a PodDisruptionBudget (minAvailable 1): blocks drains with one replica


class TrainerDependency(StrictModel):
    """Kubeflow Trainer, which runs every NVCRE workload as a TrainJob."""

    version: Literal["2.2.1"] = "2.2.1"
    managed: bool = True


class JobSetDependency(StrictModel):
    """JobSet is a shared CRD: with `managed: false` nvcregen never emits or upgrades it."""

    version: Literal["0.11.0"] = "0.11.0"
    managed: bool = False


class PrometheusDependency(StrictModel):
    """The Prometheus Operator and the labels its Prometheus selects monitors by."""

    operator: bool = True
    selector: dict[str, str] = Field(default_factory=lambda: {"release": "prometheus"})


class DcgmDependency(StrictModel):
    """A standalone DCGM hostengine (`host:port`); DCGM level 4 needs one."""

    hostengine: Annotated[str, Field(pattern=r"^[a-z0-9.-]+:[0-9]{1,5}$")] | None = None


class PodAllowance(StrictModel):
    """cpu and memory the queue counts per readiness pod beyond what nvcregen knows it asks.

    Kueue counts LimitRange defaults, sidecars and RuntimeClass overhead in a pod's requests.
    """

    cpu: Cpu = "1"
    memory: Memory = "4Gi"


class KueueDependency(StrictModel):
    """Kueue admits every readiness run whole, within the window (docs/design/0007-admission.md).

    `managed: true` installs Kueue 0.19.2 from its OCI chart and generates the queues; with
    `managed: false` runs go to the existing LocalQueue `localQueue` (generated, bound to
    `clusterQueue`, only when `clusterQueue` is named), and `version` is that Kueue's.
    `podsReadyTimeout` defaults to the plan's shortest test timeout, at least 10m.
    """

    version: Annotated[str, Field(pattern=r"^[0-9]+\.[0-9]+\.[0-9]+$")] = "0.19.2"
    managed: bool = True
    chart_digest: Digest | None = None
    image_digest: Digest | None = None
    local_queue: QueueName = "readiness"
    cluster_queue: Annotated[str, Field(pattern=_DNS_SUBDOMAIN, max_length=253)] | None = None
    pods_ready_timeout: Duration | None = None
    requeue_limit: Annotated[int, Field(ge=1, le=10)] = 3
    pod_allowance: PodAllowance = Field(default_factory=PodAllowance)


class GangScheduler(StrictModel):
    """NVCRE's `gangScheduler` (e.g. KAI Scheduler) instead of Kueue; NVCRE mode only."""

    scheduler_name: Annotated[str, Field(pattern=_DNS_SUBDOMAIN, max_length=253)]
    queue: Annotated[str, Field(pattern=_LABEL_VALUE, max_length=63)] = "default-queue"
    queue_label_key: Annotated[str, Field(pattern=_LABEL_KEY, max_length=317)] | None = None


class Dependencies(StrictModel):
    """Components NVCRE relies on, and who owns them.

    Readiness runs are admitted by `kueue` unless `gangScheduler` is set (NVCRE mode).
    """

    trainer: TrainerDependency = Field(default_factory=TrainerDependency)
    jobset: JobSetDependency = Field(default_factory=JobSetDependency)
    prometheus: PrometheusDependency = Field(default_factory=PrometheusDependency)
    dcgm: DcgmDependency = Field(default_factory=DcgmDependency)
    kueue: KueueDependency = Field(default_factory=KueueDependency)
    gang_scheduler: GangScheduler | None = None


class Images(StrictModel):
    """Workload images by role; unset roles use the catalog's default image."""

    mirror: Annotated[str, Field(pattern=r"^[a-z0-9.-]+(:[0-9]+)?(/[a-z0-9._-]+)*$")] | None = None
    nccl: Image | None = None
    dcgm: Image | None = None
    training: Image | None = None


class Nics(StrictModel):
    """The NICs of each node in a pool, as the GPU workloads should use them."""

    count: Annotated[int, Field(ge=0, le=32)]
    fabric: Fabric
    speed: Bandwidth
    hcas: list[Annotated[str, Field(pattern=r"^[a-zA-Z0-9_.:-]+$")]] = Field(default_factory=list)
    resource_name: Annotated[str, Field(pattern=_RESOURCE_NAME, max_length=253)] | None = None
    socket_interface: Annotated[str, Field(pattern=r"^[=^]?[a-zA-Z0-9_.,-]+$")] | None = None
    gid_index: Annotated[int, Field(ge=0, le=255)] | None = None


class Topology(StrictModel):
    """GPU and NIC topology as `nvidia-smi topo -m` reports it."""

    nvlink: Annotated[str, Field(pattern=r"^NV[0-9]+$")] | None = None
    numa: list[list[Annotated[int, Field(ge=0, le=63)]]] = Field(default_factory=list)
    nic_affinity: Literal["PIX", "PXB", "PHB", "NODE", "SYS"] | None = None


class NodePool(StrictModel):
    """A set of identical GPU nodes, named explicitly or by a label selector.

    A selector pool states `nodeCount`, the number of nodes it is expected to match,
    so the plan's budget can be checked before anything runs. `productLabels` must be
    the catalog's labels for the model unless `productLabelsOverride: true` says a node
    was checked and reports other ones.
    """

    name: Name
    model: Annotated[str, Field(min_length=1, max_length=64)]
    product_labels: list[Annotated[str, Field(min_length=1, max_length=63)]] | None = None
    product_labels_override: bool = False
    nodes: list[NodeName] | None = Field(default=None, min_length=1, max_length=4096)
    selector: dict[str, str] | None = None
    node_count: Annotated[int, Field(ge=1, le=100_000)] | None = None
    gpus_per_node: Annotated[int, Field(ge=1, le=16)] | None = None
    nics: Nics | None = None
    topology: Topology | None = None

    @model_validator(mode="after")
    def _nodes_or_selector(self) -> NodePool:
        if (self.nodes is None) == (self.selector is None):
            raise ValueError("a node pool names its nodes with exactly one of nodes or selector")
        return self


class Stage(StrictModel):
    """One step of the staged readiness plan; it becomes one Certification."""

    name: Name
    scope: Scope
    pool: Name | None = None
    tests: list[Annotated[str, Field(pattern=_DNS_LABEL, max_length=40)]] = Field(min_length=1)
    nodes_per_job: Annotated[int, Field(ge=1, le=4096)] | None = None
    timeout_per_job: Duration | None = None
    pin_transport: bool = False


class Window(StrictModel):
    """The test window: concurrency, wall-clock deadline and GPU-hour budget.

    `timeoutFactor` is the safety factor on each job's expected duration: a stage without
    `timeoutPerJob` gets expected duration x timeoutFactor, rounded up to whole minutes
    (docs/design/0005-physics.md).
    """

    max_concurrent_jobs: Annotated[int, Field(ge=1, le=1024)] = 1
    deadline: Duration
    gpu_hours: Annotated[float, Field(gt=0, le=1_000_000)]
    retests: Annotated[int, Field(ge=0, le=10)] = 0
    timeout_factor: Annotated[float, Field(ge=1.25, le=10)] = 2.0


class Readiness(StrictModel):
    """What runs, in which order, and within which budget.

    `engine` is what runs the plan: `nvcre` compiles it to NVCRE Certifications and
    WorkloadRuns; `trainer` to Kubeflow Trainer TrainingRuntimes and TrainJobs and plain
    batch/v1 Jobs, with NVCRE not installed (docs/design/0003-trainer-mode.md).
    """

    engine: Literal["nvcre", "trainer"] = "nvcre"
    trigger: Literal["manual", "on-sync"] = "manual"
    window: Window
    rounds: Annotated[int, Field(ge=1, le=100)] = 3
    stages: list[Stage] = Field(min_length=1, max_length=32)


class Threshold(StrictModel):
    """A typed pass criterion for one test at one scope (and optionally one size).

    With `pool`, only the stages on that node pool are held to it.
    """

    test: Annotated[str, Field(pattern=_DNS_LABEL, max_length=40)]
    scope: Scope
    pool: Name | None = None
    transport: Transport | None = None
    at: Size | None = None
    busbw: BandwidthComparison | None = None
    algbw: BandwidthComparison | None = None
    goodput: RatioComparison | None = None
    baseline: Name | None = None
    note: Annotated[str, Field(max_length=200)] | None = None


class TlsSpec(StrictModel):
    """TLS for scraping the controller; verification stays on unless the site says so."""

    insecure_skip_verify: bool = False
    server_name: str | None = None
    ca_secret: Annotated[str, Field(pattern=_DNS_SUBDOMAIN)] | None = None


class ServiceMonitorSpec(StrictModel):
    """How Prometheus scrapes the NVCRE controller."""

    labels: dict[str, str] = Field(default_factory=lambda: {"release": "prometheus"})
    interval: Duration | None = None
    scrape_timeout: Duration | None = None
    honor_labels: bool = True
    tls: TlsSpec = Field(default_factory=TlsSpec)


class Monitoring(StrictModel):
    """Monitoring objects to generate."""

    service_monitor: ServiceMonitorSpec = Field(default_factory=ServiceMonitorSpec)
    recording_rules: bool = True
    dashboards: bool = True


class GitOps(StrictModel):
    """The GitOps controller that applies `out/<site>/`.

    Without `repoURL` no GitOps objects are generated. `repoURL` may be scp-style
    (`git@host:org/repo.git`) for Argo CD only; Flux needs `ssh://git@host/org/repo.git`.
    `targetRevision` is a branch, a `refs/...` name or a commit SHA. `path` is the folder
    of this site's output inside the repository (default `out/<name>`). `secretRef` names
    the Secret in `flux-system` holding Flux's Git credentials (Flux only: Argo CD reads
    repository credentials from its own repository Secrets).
    """

    engine: Literal["argocd", "flux"] = "argocd"
    repo_url: (
        Annotated[str, Field(pattern=r"^((https|ssh)://\S+|[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:\S+)$")]
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


class SiteSpec(StrictModel):
    """Everything about one cluster site."""

    cluster: Annotated[str, Field(min_length=1, max_length=63)]
    kubernetes: KubernetesSpec
    nvcre: NvcreSpec = Field(default_factory=NvcreSpec)
    dependencies: Dependencies = Field(default_factory=Dependencies)
    images: Images = Field(default_factory=Images)
    node_pools: list[NodePool] = Field(min_length=1, max_length=64)
    readiness: Readiness
    thresholds: list[Threshold] = Field(default_factory=list)
    monitoring: Monitoring = Field(default_factory=Monitoring)
    gitops: GitOps = Field(default_factory=GitOps)


class Site(StrictModel):
    """A `Site` file: one cluster site's hardware, plan and thresholds."""

    api_version: Literal["nvcregen.io/v1alpha1"]
    kind: Literal["Site"]
    metadata: Metadata
    spec: SiteSpec
