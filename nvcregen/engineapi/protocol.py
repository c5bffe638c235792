"""The one protocol of each engine family (`registry.py` holds the engines).

A `GitOpsEngine` applies the site's folders from Git (`spec.gitops.engine`); a
`ReadinessEngine` runs the plan's tests (`spec.readiness.engine`). Class attributes are
the traits every layer reads; methods are the engine's own behaviour.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from typing import ClassVar

from nvcregen.catalog.engines import EngineFacts


class GitOpsEngine(ABC):
    """One GitOps engine; one instance of each in the registry."""

    name: ClassVar[str]  # its `spec.gitops.engine`
    title: ClassVar[str]  # how a message names it
    unit_kind: ClassVar[str]  # the object applying one folder (a GitOps unit)
    unit_path: ClassVar[str]  # the JSON pointer of a unit's folder
    # Flux's way: the layers are Kustomizations of one Git source, each readiness step (and
    # each shard of one) a Kustomization of its own ordered by dependsOn, charts installed
    # by reference as HelmReleases; else Argo CD's: an Application per layer under the
    # site's parent, steps ordered by sync waves, shards child Applications
    kustomizations: ClassVar[bool]
    final_gate: ClassVar[bool]  # the last wave holds a gate the whole readiness unit waits for
    # it reads a suspended batch Job as Current, so a step cannot wait for a Job Kueue queues
    suspended_job_current: ClassVar[bool]
    repo_url: ClassVar[re.Pattern[str] | None]  # the URLs its Git source accepts, if it limits

    @abstractmethod
    def status_bytes(self, objects: int, inventory_bytes: int, facts: EngineFacts) -> int:
        """The status it writes for a unit of `objects` objects (their inventory in bytes)."""

    def pull_notes(self, repository: str, digest: str | None) -> tuple[str, ...]:
        """What a reader should know of how it pulls a chart referenced from `repository`."""
        return ()


class ReadinessEngine(ABC):
    """One readiness engine; one instance of each in the registry."""

    name: ClassVar[str]  # its `spec.readiness.engine`
    # NVCRE is installed (its chart pinned, its metrics monitored) and expands the plan's
    # Certifications and WorkloadRuns itself, Argo Workflows among them
    installs_nvcre: ClassVar[bool]
    # nvcregen writes every run itself (TrainJobs, and Jobs per node): steps are rounds,
    # runs may be packed and admitted by prebuilt Workloads, results are read from pod logs
    writes_runs: ClassVar[bool]
    separate_launcher: ClassVar[bool]  # an MPI run's launcher is a pod of its own
    # a pool's tolerations reach its pods only as taint selectors (a key-less one is lost)
    taint_selectors: ClassVar[bool]
    attaches_pod_network: ClassVar[bool]  # its RDMA pods get the site's pod network
    gang_scheduler: ClassVar[bool]  # it can hand its runs to a gang scheduler (KAI)
    diagnose_groups: ClassVar[bool]  # it narrows a fault itself (`groups: diagnose`)

    @abstractmethod
    def run_object(self, mode: str, gang: bool) -> tuple[str, str]:
        """The (API group, kind) of the object that runs one test of a step.

        `mode` is how the plan runs the test (`category` of a Certification, or its own
        `workloadrun`: NVCRE's); `gang` whether its pods must start together (a collective
        or a pair). The compiler's steps wait on these kinds, the replay expands them.
        """
