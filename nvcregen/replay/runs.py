"""Runs read from a tree: the Jobs and TrainJobs nvcregen writes, and an engine's own (pure).

A batch/v1 Job is one workload of `parallelism` pods. A TrainJob is one workload whose
pods follow its runtime (read from the tree): with an MPI runtime that runs the launcher
as a node, `numNodes` pods holding `resourcesPerNode`, the launcher one of them; with
another MPI runtime, a launcher without GPUs besides; otherwise `numNodes` pods. Node
rules come from the runtime's pod templates and the TrainJob's `runtimePatches`.
The objects a readiness engine expands into runs itself (NVCRE's Certifications and
WorkloadRuns) are expanded by its run model (`runmodels.py`).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from typing import Any, get_args

from nvcregen.core import labels
from nvcregen.core.fields import list_at, mapping_at
from nvcregen.core.kueuekeys import PRIORITY_LABEL, QUEUE_LABEL
from nvcregen.engineapi.registry import READINESS
from nvcregen.plan.facts import PlanFacts, Timing
from nvcregen.plan.model import Mode
from nvcregen.replay.model import Admitter, Batch, PodSet, Run, TreeObject, Workload
from nvcregen.replay.runmodels import run_models
from nvcregen.replay.selectors import Constraint, add, pod_constraint, requests_of

_RUNTIME_KINDS = frozenset({"TrainingRuntime", "ClusterTrainingRuntime"})
_SECOND_MS = 1000


@functools.cache
def written_kinds() -> frozenset[tuple[str, str]]:
    """The (group, kind) of the runs nvcregen writes itself: each engine's that writes them."""
    return frozenset(
        engine.run_object(mode, gang)
        for engine in READINESS.values()
        if engine.writes_runs
        for mode in get_args(Mode)
        for gang in (False, True)
    )


def is_run(item: TreeObject) -> bool:
    """Whether an object is a run (a kind readiness steps wait for)."""
    kind = (item.group, item.kind)
    return kind in written_kinds() or kind in run_models()


def read_runs(objects: Iterable[TreeObject], facts: PlanFacts) -> list[Run]:
    """Every run of a tree, in file order, expanded into its workloads."""
    items = list(objects)
    runtimes = {(o.kind, o.namespace, o.name): o for o in items if o.kind in _RUNTIME_KINDS}
    models = run_models()
    runs = []
    for item in sorted(items, key=lambda o: o.path):
        model = models.get((item.group, item.kind))
        if model is not None:
            runs.append(model.run(item, facts, stage_of(item)))
        elif (item.group, item.kind) not in written_kinds():
            continue
        elif item.kind == "Job":
            runs.append(_single(item, _job_podsets(item), facts))
        else:
            runs.append(_single(item, _trainjob_podsets(item, runtimes), facts))
    return runs


def stage_of(item: TreeObject) -> str:
    """A run's stage: its `nvcregen.io/stage` label, else the folder it is in."""
    stage = (item.meta.get("labels") or {}).get(labels.STAGE)
    if stage:
        return str(stage)
    parts = item.path.split("/")
    return parts[1] if len(parts) > 2 else ""


def _single(item: TreeObject, podsets: tuple[PodSet, ...], facts: PlanFacts) -> Run:
    """A Job or TrainJob: one workload, timed by the plan (else by its own deadline)."""
    found = item.meta.get("labels") or {}
    stage, test = stage_of(item), str(found.get(labels.TEST, ""))
    timing = facts.timing(stage, test) or _own_timing(item)
    queue = found.get(QUEUE_LABEL)
    admitter: Admitter = "kueue" if queue else "none"
    workload = Workload(
        f"{item.kind} {item.name}",
        podsets,
        timing.expected_ms,
        timing.timeout_ms,
        admitter,
        str(queue) if queue else None,
        str(found[PRIORITY_LABEL]) if found.get(PRIORITY_LABEL) else None,
    )
    round_ = found.get(labels.ROUND)
    return Run(item, stage, test, str(round_) if round_ else None, (Batch((workload,)),))


def _own_timing(item: TreeObject) -> Timing:
    """Without a planned test: the object's `activeDeadlineSeconds` both ways (0 if none)."""
    seconds = item.spec.get("activeDeadlineSeconds")
    ms = int(seconds) * _SECOND_MS if isinstance(seconds, int) else 0
    return Timing(ms, ms)


def _job_podsets(item: TreeObject) -> tuple[PodSet, ...]:
    template = mapping_at(item.spec, "template", "spec") or {}
    parallelism = item.spec.get("parallelism", 1)
    count = parallelism if isinstance(parallelism, int) else 1
    return (PodSet("main", count, _pod_requests(template), pod_constraint(template)),)


def _pod_requests(pod_spec: Mapping[str, Any]) -> dict[str, int]:
    containers = list_at(pod_spec, "containers")
    return add(*(requests_of(c.get("resources")) for c in containers if isinstance(c, dict)))


def _trainjob_podsets(
    item: TreeObject, runtimes: Mapping[tuple[str, str, str], TreeObject]
) -> tuple[PodSet, ...]:
    """The pods of a TrainJob, as Trainer's MPI plugin would make them from its runtime."""
    ref = mapping_at(item.spec, "runtimeRef") or {}
    kind = str(ref.get("kind", "ClusterTrainingRuntime"))
    namespace = item.namespace if kind == "TrainingRuntime" else ""
    runtime = runtimes.get((kind, namespace, str(ref.get("name", ""))))
    runtime_spec = runtime.spec if runtime is not None else {}
    trainer = mapping_at(item.spec, "trainer") or {}
    policy = mapping_at(runtime_spec, "mlPolicy") or {}
    nodes = trainer.get("numNodes", policy.get("numNodes", 1))
    nodes = nodes if isinstance(nodes, int) else 1
    requests = requests_of(trainer.get("resourcesPerNode"))
    rules = _trainjob_rules(item, runtime_spec)
    mpi = policy.get("mpi")
    node_rule = rules.get("node", Constraint())
    if not isinstance(mpi, dict):
        return (PodSet("node", nodes, requests, node_rule),)
    launcher_rule = rules.get("launcher", node_rule)
    if mpi.get("runLauncherAsNode"):
        sets = [PodSet("launcher", 1, requests, launcher_rule)]
        return (*sets, PodSet("node", nodes - 1, requests, node_rule)) if nodes > 1 else (*sets,)
    return (PodSet("launcher", 1, {}, launcher_rule), PodSet("node", nodes, requests, node_rule))


def _trainjob_rules(item: TreeObject, runtime_spec: Mapping[str, Any]) -> dict[str, Constraint]:
    """Node rules per replicated job: the runtime's, then the TrainJob's runtime patches."""
    rules: dict[str, Constraint] = {}
    patches = [
        mapping_at(p, "trainingRuntimeSpec") or {} for p in list_at(item.spec, "runtimePatches")
    ]
    for source in [runtime_spec, *patches]:
        for name, pod_spec in _replicated_pods(source):
            rules[name] = rules.get(name, Constraint()).also(pod_constraint(pod_spec))
    return rules


def _replicated_pods(spec: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    """(replicated job name, pod spec) of a runtime spec or runtime patch."""
    found: list[tuple[str, Mapping[str, Any]]] = []
    for job in list_at(spec, "template", "spec", "replicatedJobs"):
        pod = mapping_at(job, "template", "spec", "template", "spec")
        if pod is not None:
            found.append((str(job.get("name", "")), pod))
    return found
