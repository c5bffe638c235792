"""Typed catalog entries: GPU hardware, readiness tests and measured baselines."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, SerializerFunctionWrapHandler, model_serializer, model_validator

from nvcregen.kindapi.protocol import PodSizeName
from nvcregen.kindapi.registry import KINDS
from nvcregen.spec.v1alpha1 import Bandwidth, Duration, Image, Scope, Size, StrictModel

ImageRole = Literal["nccl", "dcgm", "training"]


class NvcreDefaults(StrictModel):
    """What NVCRE 0.7.0 itself knows about a GPU model."""

    known: bool
    arch: str | None = None
    gpus_per_node: int = 4
    mlnx_per_node: int = 0


class TypicalNics(StrictModel):
    """NICs such nodes are usually built with; a site states its own."""

    count: int
    speed: Bandwidth
    fabric: Literal["roce", "ib", "tcp", "roce-or-ib"]


class HardwareEntry(StrictModel):
    """One GPU model as Kubernetes and NVCRE see it."""

    model: str
    product_labels: list[str] = Field(min_length=1)
    label_certain: bool = True
    gpus_per_node: Annotated[int, Field(ge=1, le=16)]
    memory_gb: Annotated[int, Field(ge=1, alias="memoryGB")]
    form_factor: Literal["SXM", "PCIe", "Superchip"]
    nvlink: str | None = None
    nvlink_bandwidth: Bandwidth | None = None  # both directions together, as datasheets say
    nvlink_sharp: bool = False  # NVSwitch reduces in the switch (NVLS): all-reduce sends less
    nvlink_domain_gpus: Annotated[int, Field(ge=2)] | None = None  # NVLink across nodes (MNNVL)
    pcie_gen: Annotated[int, Field(ge=3, le=6)] | None = None  # the GPU's x16 host link
    power_watts: Annotated[int, Field(ge=1)]
    typical_nics: TypicalNics | None = None
    nvcre: NvcreDefaults
    notes: list[str] = Field(default_factory=list)
    sources: list[str] = Field(min_length=1)


class NvcreCategory(StrictModel):
    """The NVCRE catalog category a test maps to, when NVCRE has one."""

    domain: str
    variant: str
    log_profile: str | None = None
    hostengine: str | None = None
    inner_timeout: Duration | None = None  # the entry's own `timeout` around its command


class TestEntry(StrictModel):
    """One readiness test and how it becomes NVCRE objects."""

    name: str
    title: str
    kind: str  # a registered kind's name (a Literal of them in the catalog's model)
    scopes: list[Scope] = Field(min_length=1)
    transport: Literal["fabric", "socket", "none", "rdma"]  # rdma: the NICs at any scope
    image: ImageRole
    measurement: Literal["bandwidth", "goodput", "none"]
    nvcre: NvcreCategory | None = None
    # each registered kind's block (`kind.params`, named as the kind) is a field of the
    # model the catalog is read with (`catalog/kindblocks.py`), not of this one: a kind's
    # package reads it typed with `KIND.block(test)`
    notes: list[str] = Field(default_factory=list)
    sources: list[str] = Field(min_length=1)

    @model_validator(mode="after")
    def _its_kinds_block(self) -> TestEntry:
        """A test carries the block its kind names (`kinds/`), and no other kind's."""
        blocks = [k for k in KINDS if getattr(self, k, None) is not None]
        if blocks != [self.kind]:
            found = ", ".join(f"`{b}`" for b in blocks) or "none"
            raise ValueError(
                f"a {self.kind} test takes a `{self.kind}` block and no other (found: {found})"
            )
        return self

    @model_serializer(mode="wrap")
    def _provenance_last(self, handler: SerializerFunctionWrapHandler) -> dict[str, object]:
        """Its kind's block before `notes` and `sources`, as a catalog file writes them.

        The block is a field of the model built from the registry (`kindblocks.py`), whose
        fields follow this one's, so it would otherwise be dumped last.
        """
        data: dict[str, object] = handler(self)
        last = [key for key in ("notes", "sources") if key in data]
        return {k: v for k, v in data.items() if k not in last} | {k: data[k] for k in last}


class BaselineRound(StrictModel):
    """One measured round."""

    busbw: float
    time_us: float | None = None


class Baseline(StrictModel):
    """A measured reference figure with provenance: evidence, not a threshold."""

    name: str
    model: str
    nodes: Annotated[int, Field(ge=1)]
    gpus_per_node: Annotated[int, Field(ge=1)]
    test: str
    scope: Scope
    transport: Literal["IB", "Socket", "NVLink"]
    at: Size
    unit: Literal["GB/s"] = "GB/s"
    rounds: list[BaselineRound] = Field(min_length=1)
    nics: TypicalNics | None = None  # the NICs of each node, for network baselines
    nccl_version: str | None = None
    image: str | None = None
    measured: str
    sources: list[str] = Field(min_length=1)
    notes: list[str] = Field(default_factory=list)


Cpu = Annotated[str, Field(pattern=r"^([1-9][0-9]*m|[0-9]+(\.[0-9]{1,3})?)$", max_length=16)]
Memory = Annotated[str, Field(pattern=r"^[0-9]+(Ki|Mi|Gi|Ti)?$", max_length=16)]


class CpuMemory(StrictModel):
    """A cpu and a memory quantity, either of which may be left out."""

    cpu: Cpu | None = None
    memory: Memory | None = None

    def as_resources(self) -> dict[str, str]:
        """The quantities as a Kubernetes resource map (only those given)."""
        found = {"cpu": self.cpu, "memory": self.memory}
        return {name: value for name, value in found.items() if value is not None}


class PodSize(StrictModel):
    """Requests and limits of one kind of readiness pod (its GPUs and NICs aside)."""

    requests: CpuMemory
    limits: CpuMemory = Field(default_factory=CpuMemory)

    @model_validator(mode="after")
    def _requests_complete(self) -> PodSize:
        if self.requests.cpu is None or self.requests.memory is None:
            raise ValueError("a pod size requests both cpu and memory")
        if self.limits.memory is None:
            raise ValueError("a pod size limits memory")
        return self


class PodSizes(StrictModel):
    """cpu and memory per kind of readiness pod, by the kind of test it runs."""

    nccl: PodSize
    dcgm: PodSize
    sources: list[str] = Field(min_length=1)

    def named(self, size: PodSizeName | None) -> PodSize | None:
        """The size a kind's pods take (`TestKind.pod_size`); None when NVCRE sizes them."""
        return None if size is None else {"nccl": self.nccl, "dcgm": self.dcgm}[size]


class ExampleDigest(StrictModel):
    """A digest written as an example: it pins nothing real."""

    digest: Annotated[str, Field(pattern=r"^sha256:[a-f0-9]{64}$")]
    what: str
    derived_from: str | None = None


class ExampleDigests(StrictModel):
    """The digests nvcregen's examples carry (`catalog/example-digests.yaml`)."""

    digests: list[ExampleDigest] = Field(min_length=1)
    sources: list[str] = Field(min_length=1)

    def find(self, digest: str) -> ExampleDigest | None:
        """The example entry for a digest (`sha256:...`), if it is one."""
        return next((d for d in self.digests if d.digest == digest), None)


class DefaultImages(StrictModel):
    """Images used for a role when a site does not pin its own."""

    nccl: Image
    dcgm: Image
    training: Image
