"""The replay's vocabulary: tree objects, runs, the workloads they make, and problems (pure).

A **run** is an object a GitOps step waits for (a Certification, WorkloadRun, TrainJob or
batch/v1 Job). It makes **workloads**, each admitted by Kueue as a whole: a TrainJob or
Job is one; NVCRE makes one TrainJob per node group per iteration per category. A run's
workloads come in **batches** that run one after another (NVCRE's categories and
iterations), at most `at_once` of a batch at a time (NVCRE's `maxConcurrent`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Literal

from nvcregen.core.errors import Severity
from nvcregen.plan.facts import GPU
from nvcregen.replay.selectors import Constraint, add, scaled

PODS = "pods"
Admitter = Literal["kueue", "gang", "none"]


@dataclass(frozen=True)
class TreeObject:
    """One object of a site's tree.

    Attributes:
        file: How diagnostics name its file.
        path: Its path inside the site's folder, e.g. `readiness/01-single-node/x.yaml`.
        obj: The object.

    """

    file: str
    path: str
    obj: Mapping[str, Any]

    @property
    def kind(self) -> str:
        """The object's kind."""
        return str(self.obj.get("kind", ""))

    @property
    def group(self) -> str:
        """The object's API group ("" for the core group)."""
        return str(self.obj.get("apiVersion", "")).rpartition("/")[0]

    @property
    def meta(self) -> Mapping[str, Any]:
        """`metadata`, or {}."""
        meta = self.obj.get("metadata")
        return meta if isinstance(meta, dict) else {}

    @property
    def name(self) -> str:
        """`metadata.name`."""
        return str(self.meta.get("name", ""))

    @property
    def namespace(self) -> str:
        """`metadata.namespace` ("" when none)."""
        return str(self.meta.get("namespace", ""))

    @property
    def spec(self) -> Mapping[str, Any]:
        """`spec`, or {}."""
        spec = self.obj.get("spec")
        return spec if isinstance(spec, dict) else {}


@dataclass(frozen=True)
class PodSet:
    """Pods of one workload with the same requests and node rules."""

    name: str
    count: int
    requests: Mapping[str, int]
    constraint: Constraint


@dataclass(frozen=True)
class Workload:
    """What Kueue admits whole: a TrainJob or a Job, made by nvcregen or by NVCRE.

    Attributes:
        label: How messages name it (`TrainJob x`, `Certification y, nccl-alltoall, group 1`).
        podsets: Its pods.
        expected_ms: The physics model's expected duration.
        timeout_ms: How long it may run (worst case).
        admitter: `kueue` (it names a LocalQueue), `gang` (NVCRE's gang scheduler) or
            `none` (it bypasses admission: its pods bind one by one).
        queue: The LocalQueue it names.
        priority_class: Its `kueue.x-k8s.io/priority-class`.

    """

    label: str
    podsets: tuple[PodSet, ...]
    expected_ms: int
    timeout_ms: int
    admitter: Admitter = "none"
    queue: str | None = None
    priority_class: str | None = None

    @cached_property
    def usage(self) -> dict[str, int]:
        """What Kueue counts: the sum of pod requests times counts, and the pods."""
        parts = [scaled(p.requests, p.count) for p in self.podsets]
        return add(*parts, {PODS: sum(p.count for p in self.podsets)})

    @property
    def gpus(self) -> int:
        """GPUs it holds while it runs."""
        return self.usage.get(GPU, 0)

    @property
    def gpu_pods(self) -> int:
        """Pods that hold GPUs: one per node for every readiness run."""
        return sum(p.count for p in self.podsets if p.requests.get(GPU))

    @property
    def all_or_nothing(self) -> bool:
        """Whether something admits all its pods together (Kueue or a gang scheduler)."""
        return self.admitter != "none"


@dataclass(frozen=True)
class Batch:
    """Workloads that may run side by side, at most `at_once` at a time (0: no limit)."""

    workloads: tuple[Workload, ...]
    at_once: int = 0

    @property
    def width(self) -> int:
        """How many of its workloads can run at once."""
        count = len(self.workloads)
        return min(count, self.at_once) if self.at_once else count


@dataclass(frozen=True)
class Run:
    """A run object, expanded into batches of workloads.

    Attributes:
        source: The object.
        stage: Its stage (label `nvcregen.io/stage`, else its folder).
        test: Its test (label `nvcregen.io/test`; a Certification names its stage).
        round: Trainer mode: its round label.
        batches: Its workloads, batch after batch.
        problems: Why it cannot run at all (e.g. too few nodes match its target).

    """

    source: TreeObject
    stage: str
    test: str
    round: str | None
    batches: tuple[Batch, ...]
    problems: tuple[Problem, ...] = ()

    @property
    def label(self) -> str:
        """`Kind/name`."""
        return f"{self.source.kind}/{self.source.name}"

    @property
    def workloads(self) -> tuple[Workload, ...]:
        """Every workload of every batch."""
        return tuple(w for b in self.batches for w in b.workloads)


@dataclass(frozen=True)
class Problem:
    """One finding of the replay, at an object of the tree."""

    file: str
    pointer: str
    code: str
    message: str
    severity: Severity = Severity.ERROR
    hint: str = ""
    notes: tuple[str, ...] = field(default=())
