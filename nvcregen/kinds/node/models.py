"""What `nvidia-smi` says about one node, and what nvcregen finds wrong with it.

Every fact is optional: a form of the output that does not carry it (the CSV has no SRAM
counts, a VM shows no NVLink) leaves it `None`, and no finding is made from a missing
fact. `where` maps a fact's name to the line that printed it, so a finding points there.
A check that could not be judged at all (a kernel log the pod was refused, a value with
more digits than any nvidia-smi output) is `Unjudged`: its node is never cleared on it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from nvcregen.core.errors import Severity, Span
from nvcregen.ingest.models import Json
from nvcregen.kinds.node import codes


@dataclass(frozen=True)
class GpuFacts:
    """One GPU's facts, as one form of `nvidia-smi` output gave them."""

    index: int
    bus_id: str
    product: str | None = None
    vbios: str | None = None
    pcie_gen: int | None = None
    pcie_gen_max: int | None = None
    pcie_width: int | None = None
    pcie_width_max: int | None = None
    ecc_current: bool | None = None
    ecc_pending: bool | None = None
    dram_unc_volatile: int | None = None
    sram_unc_volatile: int | None = None
    dram_unc_aggregate: int | None = None
    sram_unc_aggregate: int | None = None
    unc_volatile_total: int | None = None  # the CSV's total, when DRAM and SRAM are not split
    unc_aggregate_total: int | None = None
    sram_threshold_exceeded: bool | None = None
    retired_sbe: int | None = None
    retired_dbe: int | None = None
    retired_pending: bool | None = None
    remapped_correctable: int | None = None
    remapped_uncorrectable: int | None = None
    remap_pending: bool | None = None
    remap_failure: bool | None = None
    histogram: tuple[tuple[str, int], ...] | None = None  # (max|high|partial|low|none, banks)
    hw_slowdown: bool | None = None
    hw_thermal_slowdown: bool | None = None
    hw_power_brake: bool | None = None
    sw_thermal_slowdown: bool | None = None
    mig_current: bool | None = None
    mig_pending: bool | None = None
    temperature: int | None = None
    slowdown_headroom: int | None = None  # degrees C below the slowdown limit
    memory_temperature: int | None = None
    recovery_action: str | None = None
    where: dict[str, Span] = field(default_factory=dict, compare=False, hash=False)

    def to_json(self) -> Json:
        """Every known fact, by name (unknown facts left out)."""
        facts: dict[str, object] = {}
        for name in _GPU_FIELDS:
            value = getattr(self, name)
            if value is None:
                continue
            facts[name] = [list(pair) for pair in value] if name == "histogram" else value
        return facts


_GPU_FIELDS = tuple(name for name in GpuFacts.__dataclass_fields__ if name != "where")


@dataclass(frozen=True)
class XidEvent:
    """One `NVRM: Xid` line of a kernel log."""

    code: int
    bus_id: str
    detail: str
    span: Span

    def to_json(self) -> Json:
        """The event and where it was read."""
        return {"xid": self.code, "pci": self.bus_id, "detail": self.detail, "at": str(self.span)}


UNREADABLE = codes.NVC800.code  # the node readers' code: a file, or a value in one, not readable
UNJUDGED_XID = codes.NVC825.code  # a node-health log whose kernel log was refused or left out


@dataclass(frozen=True)
class Unjudged:
    """A check of a node that could not be judged, and why: the node is not cleared on it.

    `code` is NVC800 for a value a reader refused (`check` names the fact), NVC825 for
    Xid events a node-health log could not read (`check` is "Xid events").
    """

    code: str
    check: str
    cause: str
    hint: str
    span: Span
    gpu: int | None = None


@dataclass(frozen=True)
class NodeFacts:
    """One node: the node-wide facts and its GPUs, from one output file."""

    file: str
    form: str  # xml, text, csv, or log (a kernel log only)
    driver: str | None = None
    cuda: str | None = None
    attached_gpus: int | None = None
    gpus: tuple[GpuFacts, ...] = ()
    xids: tuple[XidEvent, ...] = ()
    unjudged: tuple[Unjudged, ...] = ()
    kernel: bool = False  # whether these facts hold a kernel log read whole (Xid events judged)
    where: dict[str, Span] = field(default_factory=dict, compare=False, hash=False)


@dataclass(frozen=True)
class Finding:
    """One thing wrong (error: fails the node) or worth a look (warning) on a node."""

    code: str
    severity: Severity
    node: str
    message: str
    hint: str
    span: Span
    gpu: int | None = None
    unjudged: bool = False  # a check not judged: the node is incomplete, never cleared

    @property
    def fails(self) -> bool:
        """Whether this finding fails the node (rather than marking it for a look)."""
        return self.severity is Severity.ERROR

    def to_json(self) -> Json:
        """The finding with its node, GPU and place."""
        found: dict[str, object] = {
            "code": self.code,
            "severity": str(self.severity),
            "node": self.node,
            "message": self.message,
            "hint": self.hint,
            "at": str(self.span),
        }
        if self.gpu is not None:
            found["gpu"] = self.gpu
        if self.unjudged:
            found["unjudged"] = True
        return found


@dataclass(frozen=True)
class NodeReport:
    """A node's merged facts and its findings."""

    node: str
    files: tuple[str, ...]
    driver: str | None
    cuda: str | None
    attached_gpus: int | None
    gpus: tuple[GpuFacts, ...]
    xids: tuple[XidEvent, ...]
    findings: tuple[Finding, ...]
    unjudged: tuple[Unjudged, ...] = ()

    @property
    def verdict(self) -> str:
        """`failed` (a failing finding), `incomplete` (a check not judged), `warning` or `healthy`.

        `warning` is findings to look at; a node with none is `healthy`.
        """
        if any(f.fails for f in self.findings):
            return "failed"
        if any(f.unjudged for f in self.findings):
            return "incomplete"
        return "warning" if self.findings else "healthy"

    def to_json(self) -> Json:
        """The node's facts, per GPU, and its findings."""
        return {
            "node": self.node,
            "verdict": self.verdict,
            "files": list(self.files),
            "driver": self.driver,
            "cuda": self.cuda,
            "gpuCount": len(self.gpus),
            "attachedGpus": self.attached_gpus,
            "gpus": [gpu.to_json() for gpu in self.gpus],
            "xids": [event.to_json() for event in self.xids],
            "findings": [finding.to_json() for finding in self.findings],
        }
