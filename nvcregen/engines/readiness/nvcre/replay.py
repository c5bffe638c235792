"""Certifications and WorkloadRuns expanded as NVCRE 0.7.0 runs them: its replay (pure).

A Certification runs one Workflow per category, one after another; a WorkloadRun one
Workflow. A Workflow splits the nodes its target matches (sorted by name) into groups of
`nodesPerJob` (`numNodes` for a WorkloadRun; one node with `testScale: intra-node`; all of
them at `full-scale` without a count) and runs `repeatCount` iterations, one after
another, each with a TrainJob per group, at most `maxConcurrent` at a time (0: all).
Each TrainJob has a pod per node holding `gpusPerNode` GPUs and `mlnxPerNode` of
`nicResourceName`, plus an MPI launcher (2 CPUs, 1Gi) for communication tests; its labels
are `workloadMetadata.labels`, a category's merged over the Certification's per key
(nvcre-api.md 1.1, 5.5).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nvcregen.core import codes, units
from nvcregen.core.fields import list_at, mapping_at
from nvcregen.core.kueuekeys import PRIORITY_LABEL, QUEUE_LABEL
from nvcregen.engines.readiness.nvcre.engine import RUN_OBJECTS
from nvcregen.plan.facts import GPU, Node, PlanFacts
from nvcregen.replay.model import Admitter, Batch, PodSet, Problem, Run, TreeObject, Workload
from nvcregen.replay.selectors import Constraint, target_constraint

LAUNCHER = {"cpu": 2000, "memory": 2**30}
DEFAULT_TIMEOUT_MS = 3_600_000  # timeoutPerJob's default, "1h"
NEVER_RUNS = codes.NVC670.code


def nvcre_run(item: TreeObject, facts: PlanFacts, stage: str) -> Run:
    """A Certification (categories in order) or a WorkloadRun, expanded into batches."""
    spec = item.spec
    if item.kind == "Certification":
        parts = [
            (f"/spec/categories/{i}", str(c.get("variant", "")), {**spec, **_options(c)}, c)
            for i, c in enumerate(list_at(spec, "categories"))
            if isinstance(c, dict)
        ]
        test = ""
    else:
        orchestration = mapping_at(spec, "orchestration") or {}
        options = {**spec, **orchestration, "nodesPerJob": spec.get("numNodes")}
        test = str((mapping_at(item.meta, "labels") or {}).get("nvcregen.io/test", ""))
        parts = [("/spec", test, options, {"framework": spec.get("framework")})]
    batches: list[Batch] = []
    problems: list[Problem] = []
    target = target_constraint(mapping_at(spec, "target") or {})
    eligible = sorted((n for n in facts.nodes if target.allows(n)), key=lambda n: n.name)
    for pointer, variant, options, category in parts:
        groups = _groups(eligible, options)
        if not groups:
            problems.append(_too_few(item, pointer, len(eligible), options))
            continue
        template = _workload(item, facts, stage, variant, options, category, target)
        batches += _iterations(template, groups, options)
    return Run(item, stage, test, None, tuple(batches), tuple(problems))


def _options(category: Mapping[str, Any]) -> dict[str, Any]:
    """A category's options; its workloadMetadata labels merge into the Certification's."""
    return dict(mapping_at(category, "options") or {})


def _labels(item: TreeObject, options: Mapping[str, Any]) -> dict[str, Any]:
    own = mapping_at(item.spec, "workloadMetadata", "labels") or {}
    extra = mapping_at(options, "workloadMetadata", "labels") or {}
    return {**own, **extra}


def _groups(eligible: list[Node], options: Mapping[str, Any]) -> list[tuple[Node, ...]]:
    """The node groups of one Workflow: consecutive runs of `nodesPerJob` sorted nodes."""
    if options.get("testScale") == "intra-node":
        size = 1
    else:
        wanted = options.get("nodesPerJob")
        size = wanted if isinstance(wanted, int) and wanted > 0 else len(eligible)
    if size == 0 or len(eligible) < size:
        return []
    return [tuple(eligible[i : i + size]) for i in range(0, len(eligible) - size + 1, size)]


def _workload(
    item: TreeObject,
    facts: PlanFacts,
    stage: str,
    variant: str,
    options: Mapping[str, Any],
    category: Mapping[str, Any],
    target: Constraint,
) -> Workload:
    """One TrainJob NVCRE would make for this Workflow (its node group filled in later)."""
    requests = {GPU: _int(options.get("gpusPerNode"), 4)}
    nics = _int(options.get("mlnxPerNode"), 0)
    if nics and options.get("nicResourceName"):
        requests[str(options["nicResourceName"])] = nics
    podsets = [PodSet("node", 1, requests, target)]
    framework = mapping_at(category, "framework") or {}
    mpi = category.get("domain") == "communication" or "mpi" in framework
    if mpi:
        podsets.append(PodSet("launcher", 1, dict(LAUNCHER), Constraint()))
    timing = facts.timing(stage, variant)
    timeout = _timeout(options.get("timeoutPerJob"))
    expected = timing.expected_ms if timing is not None else timeout
    found = _labels(item, options)
    queue = found.get(QUEUE_LABEL)
    admitter: Admitter = "gang" if item.spec.get("gangScheduler") else "kueue" if queue else "none"
    label = f"{item.kind} {item.name}" + (f", {variant}" if item.kind == "Certification" else "")
    priority = found.get(PRIORITY_LABEL)
    return Workload(
        label,
        tuple(podsets),
        expected,
        timeout,
        admitter,
        str(queue) if queue else None,
        str(priority) if priority else None,
    )


def _iterations(
    template: Workload, groups: list[tuple[Node, ...]], options: Mapping[str, Any]
) -> list[Batch]:
    """`repeatCount` batches, each with a workload per group, pinned to the group's nodes."""
    node_set, *rest = template.podsets
    workloads = tuple(
        Workload(
            f"{template.label}, group {index + 1}" if len(groups) > 1 else template.label,
            (
                PodSet(
                    "node",
                    len(group),
                    node_set.requests,
                    node_set.constraint.also(Constraint(names=frozenset(n.name for n in group))),
                ),
                *rest,
            ),
            template.expected_ms,
            template.timeout_ms,
            template.admitter,
            template.queue,
            template.priority_class,
        )
        for index, group in enumerate(groups)
    )
    at_once = _int(options.get("maxConcurrent"), 0)
    return [Batch(workloads, at_once) for _ in range(max(1, _int(options.get("repeatCount"), 1)))]


def _too_few(item: TreeObject, pointer: str, eligible: int, options: Mapping[str, Any]) -> Problem:
    wanted = options.get("nodesPerJob") or 1
    return Problem(
        item.file,
        pointer,
        NEVER_RUNS,
        f"{item.kind} {item.name} can never run: its target matches {eligible} of the site's "
        f"nodes, and each job needs {wanted}",
        hint="widen spec.target, or lower nodesPerJob to the nodes it matches",
    )


def _timeout(value: Any) -> int:
    try:
        return units.parse_duration(str(value)) if value else DEFAULT_TIMEOUT_MS
    except ValueError:
        return DEFAULT_TIMEOUT_MS


def _int(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


class NvcreRuns:
    """NVCRE's objects as the replay expands them (`replay.runmodels.RunModel`)."""

    run_kinds = frozenset(RUN_OBJECTS.values())
    queue_pointer = "/spec/workloadMetadata"  # its labels reach the TrainJobs NVCRE makes

    def run(self, item: TreeObject, facts: PlanFacts, stage: str) -> Run:
        """A Certification or a WorkloadRun, expanded into the batches NVCRE runs."""
        return nvcre_run(item, facts, stage)


RUNS = NvcreRuns()
