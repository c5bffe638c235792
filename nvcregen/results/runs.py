"""Put a site's objects back together as runs: one per planned stage and test (pure).

A Certification category or a WorkloadRun is one run; its Workflow says how far it got,
which nodes it excluded and which failed; its measurements are the rounds. A round is
one Job of one group in one iteration (`repeatCount` iterations per run); the Workflow's
`iterationHistory` and `groups` tell which Job ran which group in which iteration.
Measurements of Jobs the Workflow no longer names (a Job retried with
`retryFailedGroups`, which nvcregen does not set) are numbered after the known rounds,
in the Workflow's only group when it has one, else in a group of their own ("").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pydantic import ValidationError

from nvcregen.core.labels import STAGE, TEST
from nvcregen.plan.model import TestUnit
from nvcregen.results.admissible import Refusal, created_at, refusal, stranger, unreadable
from nvcregen.results.liveobjects import Obj, labels_of, metadata, status_of, uid_of
from nvcregen.results.models import (
    BandwidthMeasurement,
    Condition,
    FailedNode,
    GoodputMeasurement,
    Measurement,
    ObjectRef,
    ResultError,
    RunState,
    StatusModel,
    find_condition,
    object_ref,
    parse_bandwidth,
    parse_goodput,
)
from nvcregen.results.payloads import ReportExportResult, failed_nodes, report_export
from nvcregen.results.payloads import succeeded_nodes as decode_succeeded
from nvcregen.results.select import SiteObjects, workflow_jobs

_CATEGORY_STATES = {
    "Succeeded": RunState.SUCCEEDED,
    "Failed": RunState.FAILED,
    "InProgress": RunState.IN_PROGRESS,
}
_TRANSPORTS = {"IB": "IB", "Socket": "Socket"}  # NCCL_NET values a WorkloadRun pins
_KINDS = {"category": "Certification category", "workloadrun": "WorkloadRun"}
M = TypeVar("M", bound=Measurement)


class PlannedGroup(StatusModel):
    """A group the run's Workflow names, and its nodes when its status lists them."""

    name: str
    nodes: tuple[str, ...] = ()


class RunResult(StatusModel):
    """One planned test of one stage, as the cluster ran it (or did not).

    `groups` are the groups its Workflow names (whether or not a measurement of them
    was found); `refused` the measurements of the run refused as evidence
    (`results/admissible.py`), placed in their group and round.
    """

    stage: str
    scope: str
    test: str
    expected_transport: str | None = None
    source: ObjectRef | None = None
    state: RunState = RunState.PENDING
    reason: str = ""
    message: str = ""
    workflow: ObjectRef | None = None
    excluded_nodes: tuple[str, ...] = ()
    exclusion_reason: str = ""
    failed_nodes: tuple[FailedNode, ...] = ()
    succeeded_nodes: tuple[str, ...] = ()
    unjudged_nodes: tuple[FailedNode, ...] = ()  # read, but a check of them not judged
    pinned_transport: str | None = None
    bandwidth: tuple[BandwidthMeasurement, ...] = ()
    goodput: tuple[GoodputMeasurement, ...] = ()
    groups: tuple[PlannedGroup, ...] = ()
    refused: tuple[Refusal, ...] = ()
    superseded: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()  # each distinct note of its logs once (`runnotes.py`)


@dataclass(frozen=True)
class RunSet:
    """Every run of a site, its report exports, and what could not be read."""

    runs: tuple[RunResult, ...]
    exports: tuple[ReportExportResult, ...] = ()
    problems: tuple[str, ...] = field(default=())


def expected_transport(unit: TestUnit) -> str | None:
    """The NCCL network a test should use: IB (RDMA, RoCE included), Socket, or none."""
    return {"rdma": "IB", "socket": "Socket"}.get(unit.network)


def run_state(conditions: Sequence[Condition]) -> tuple[RunState, str, str]:
    """State, reason and message from the exclusive InProgress/Succeeded/Failed conditions."""
    for kind, state in (
        ("Failed", RunState.FAILED),
        ("Succeeded", RunState.SUCCEEDED),
        ("InProgress", RunState.IN_PROGRESS),
    ):
        found = find_condition(conditions, kind)
        if found is not None and found.status == "True":
            return state, found.reason, found.message
    return RunState.PENDING, "", ""


def _conditions(obj: Mapping[str, Any]) -> list[Condition]:
    items = status_of(obj).get("conditions") or []
    return [Condition.model_validate(c) for c in items if isinstance(c, dict) and "type" in c]


class _Index:
    """Look-ups over a site's objects, built once."""

    def __init__(self, objects: SiteObjects, collected_at: str | None) -> None:
        self.objects = objects
        self.collected_at = collected_at
        self.configmaps = {_place(c): c for c in objects.configmaps}
        self.refused: list[Refusal] = []
        self.bandwidth = self._parsed(objects.bandwidth, parse_bandwidth)
        self.goodput = self._parsed(objects.goodput, parse_goodput)

    def _parsed(self, objects: Sequence[Obj], parse: Callable[[Obj], M]) -> list[M]:
        parsed = []
        for obj in objects:
            try:
                parsed.append(parse(obj))
            except ResultError as exc:
                self.refused.append(unreadable(obj, exc))
        return parsed

    def workflow(self, owner: Obj, ref: Mapping[str, Any] | None, prefix: str) -> Obj | None:
        """The Workflow a status names, else the one the owner owns whose name fits."""
        if ref and ref.get("name"):
            place = (str(ref.get("namespace") or _place(owner)[0]), str(ref["name"]))
            found = [w for w in self.objects.workflows if _place(w) == place]
        else:
            uid = uid_of(owner)
            found = [
                w
                for w in self.objects.workflows
                if uid and uid in _owner_uids(w) and _place(w)[1].startswith(prefix)
            ]
        return found[0] if found else None


def _place(obj: Mapping[str, Any]) -> tuple[str, str]:
    meta = metadata(obj)
    return str(meta.get("namespace") or ""), str(meta.get("name") or "")


def _owner_uids(obj: Mapping[str, Any]) -> set[str]:
    return {str(r.get("uid")) for r in metadata(obj).get("ownerReferences") or []}


def _rounds(measurements: Sequence[M], workflow: Obj) -> tuple[M, ...]:
    """The workflow's measurements with their group, nodes and iteration filled in."""
    uid, jobs = uid_of(workflow), workflow_jobs(workflow)
    orchestration = status_of(workflow).get("orchestration") or {}
    members = {
        str(g.get("name")): tuple(g.get("nodes") or []) for g in orchestration.get("groups") or []
    }
    mine = [m for m in measurements if (uid and uid in m.owners) or m.job in jobs]
    only = next(iter(members)) if len(members) == 1 else ""  # a Job of an unnamed group
    known: dict[tuple[str, int], M] = {}
    unknown: list[M] = []
    for m in sorted(mine, key=lambda m: (m.start_time or "", m.ref.name)):
        iteration, group = jobs.get(m.job, (None, only))
        placed = m.model_copy(update={"group": group, "nodes": members.get(group, ())})
        if iteration is None:
            unknown.append(placed)
        else:
            known[(group, int(iteration))] = placed.model_copy(update={"iteration": int(iteration)})
    last = max((i for _, i in known), default=0)
    extra = [m.model_copy(update={"iteration": last + n}) for n, m in enumerate(unknown, 1)]
    ordered = sorted([*known.values(), *extra], key=lambda m: (m.group, m.iteration or 0))
    return tuple(ordered)


NodeResults = tuple[tuple[FailedNode, ...], tuple[str, ...], list[str]]


def _node_results(index: _Index, sources: Sequence[tuple[str, Mapping[str, Any]]]) -> NodeResults:
    """Failed and succeeded nodes named by status blocks (namespace, status) and their refs.

    Rows are merged: a Workflow's inline `failedNodes`, then the ConfigMaps its status
    and its Certification category or WorkloadRun name (usually the same ones).
    """
    failed: dict[tuple[str, str], FailedNode] = {}
    passed: dict[str, None] = {}
    problems = []
    for namespace, status in sources:
        rows: list[FailedNode] = []
        try:
            rows += [FailedNode.model_validate(r) for r in status.get("failedNodes") or []]
            cm = _referenced(index, namespace, status, "failedNodesRef")
            rows += failed_nodes(cm) if cm else ()
            cm = _referenced(index, namespace, status, "succeededNodesRef")
            passed.update(dict.fromkeys(decode_succeeded(cm) if cm else ()))
        except (ResultError, ValidationError) as exc:
            problems.append(f"failed or succeeded nodes in {namespace}: {exc}")
        for row in rows:
            failed.setdefault((row.name, row.reason), row)
    return tuple(failed.values()), tuple(passed), problems


def _referenced(index: _Index, namespace: str, status: Mapping[str, Any], key: str) -> Obj | None:
    ref = status.get(key)
    if not isinstance(ref, Mapping) or not ref.get("name"):
        return None
    return index.configmaps.get((namespace, str(ref["name"])))


def _run(
    index: _Index, unit: TestUnit, owner: Obj, entry: Mapping[str, Any], prefix: str
) -> RunResult:
    """One run from its owner (and category entry), its Workflow and its measurements."""
    ref = entry.get("workflowRef") if isinstance(entry.get("workflowRef"), Mapping) else None
    workflow = index.workflow(owner, ref, prefix)
    if owner.get("kind") == "Certification":
        state = _CATEGORY_STATES.get(str(entry.get("status")), RunState.PENDING)
        reason, message = "", ""
    else:
        state, reason, message = run_state(_conditions(owner))
    fields: dict[str, Any] = {}
    sources: list[tuple[str, Mapping[str, Any]]] = [(_place(owner)[0], entry)]
    if workflow is not None:
        _, wf_reason, wf_message = run_state(_conditions(workflow))
        reason, message = reason or wf_reason, message or wf_message
        fields = _workflow_fields(index, workflow, owner)
        sources.insert(0, (_place(workflow)[0], status_of(workflow)))
    failed, passed, problems = _node_results(index, sources)
    return RunResult(
        stage=unit.stage.name,
        scope=unit.stage.scope,
        test=unit.test.name,
        expected_transport=expected_transport(unit),
        source=object_ref(owner),
        state=state,
        reason=reason,
        message=message,
        failed_nodes=failed,
        succeeded_nodes=passed,
        pinned_transport=_pinned_transport(owner),
        problems=tuple(problems),
        **fields,
    )


def _workflow_fields(index: _Index, workflow: Obj, owner: Obj) -> dict[str, Any]:
    """What a run takes from its Workflow: excluded nodes, its groups, the measured rounds.

    Rounds that cannot be evidence (`results/admissible.py`) are moved to `refused`.
    """
    orchestration = status_of(workflow).get("orchestration") or {}
    refused = list(_rounds(index.refused, workflow))
    kept: dict[str, list[Measurement]] = {"bandwidth": [], "goodput": []}
    created, foreign = created_at(owner), stranger(workflow, owner)
    for key, found in (("bandwidth", index.bandwidth), ("goodput", index.goodput)):
        for m in _rounds(found, workflow):
            why = refusal(m, uid_of(workflow), created, index.collected_at, foreign)
            if why is None:
                kept[key].append(m)
            else:
                refused.append(why)
    return {
        "workflow": object_ref(workflow),
        "excluded_nodes": tuple(orchestration.get("excludedNodes") or ()),
        "exclusion_reason": str(orchestration.get("exclusionReason") or ""),
        "groups": planned_groups(workflow),
        "bandwidth": tuple(kept["bandwidth"]),
        "goodput": tuple(kept["goodput"]),
        "refused": tuple(sorted(refused, key=lambda r: (r.group, r.iteration or 0))),
    }


def planned_groups(workflow: Mapping[str, Any]) -> tuple[PlannedGroup, ...]:
    """The groups a Workflow names: its current groups (with nodes), then past ones."""
    orchestration = status_of(workflow).get("orchestration") or {}
    groups: dict[str, tuple[str, ...]] = {}
    for group in orchestration.get("groups") or []:
        if isinstance(group, Mapping) and group.get("name"):
            groups[str(group["name"])] = tuple(str(n) for n in group.get("nodes") or ())
    for past in orchestration.get("iterationHistory") or []:
        for group in (past.get("groups") or []) if isinstance(past, Mapping) else []:
            if isinstance(group, Mapping) and group.get("name"):
                groups.setdefault(str(group["name"]), ())
    return tuple(PlannedGroup(name=n, nodes=nodes) for n, nodes in groups.items())


def _pinned_transport(owner: Mapping[str, Any]) -> str | None:
    """The network a WorkloadRun forces with NCCL_NET (IB or Socket), if it does."""
    for env in (owner.get("spec") or {}).get("env") or []:
        if isinstance(env, Mapping) and env.get("name") == "NCCL_NET":
            return _TRANSPORTS.get(str(env.get("value")))
    return None


Found = dict[tuple[str, str], list[tuple[str, RunResult]]]


def _owner_runs(index: _Index, units: Sequence[TestUnit], owner: Obj, found: Found) -> None:
    """Add the runs of one Certification or WorkloadRun to `found`, by (stage, test)."""
    stage = labels_of(owner).get(STAGE, "")
    name = _place(owner)[1]
    created = str(metadata(owner).get("creationTimestamp") or "")
    if owner.get("kind") == "Certification":
        statuses = status_of(owner).get("categoryStatuses") or []
        entries = statuses or (owner.get("spec") or {}).get("categories") or []
        for entry in entries:
            unit = _unit(units, stage, variant=str(entry.get("variant")))
            if unit is not None:
                prefix = f"{name}-{entry.get('domain')}-{entry.get('variant')}"
                run = _run(index, unit, owner, entry if statuses else {}, prefix)
                found.setdefault((stage, unit.test.name), []).append((created, run))
        return
    unit = _unit(units, stage, test=labels_of(owner).get(TEST, ""))
    if unit is not None:
        run = _run(index, unit, owner, status_of(owner), name)
        found.setdefault((stage, unit.test.name), []).append((created, run))


def _unit(
    units: Sequence[TestUnit], stage: str, *, variant: str = "", test: str = ""
) -> TestUnit | None:
    for unit in units:
        if unit.stage.name != stage:
            continue
        if test and unit.test.name == test and unit.mode == "workloadrun":
            return unit
        nvcre = unit.test.nvcre
        if variant and unit.mode == "category" and nvcre is not None and nvcre.variant == variant:
            return unit
    return None


def assemble_runs(
    units: Sequence[TestUnit], objects: SiteObjects, collected_at: str | None = None
) -> RunSet:
    """Every planned run of a site, found among its objects or marked as not found.

    When one stage and test has several runs (a changed spec makes a new object), the
    newest is judged and the others are listed in `superseded`. A measurement refused
    as evidence that no judged run holds is one of the set's problems.

    Args:
        units: The site's plan.
        objects: The site's objects.
        collected_at: When they were read (RFC 3339): a measurement that finished later
            is refused (None: not checked).

    """
    index = _Index(objects, collected_at)
    found: Found = {}
    for owner in objects.owners:
        _owner_runs(index, units, owner, found)
    runs = []
    for unit in units:
        candidates = sorted(found.get((unit.stage.name, unit.test.name), []), key=lambda c: c[0])
        if not candidates:
            runs.append(_not_found(unit))
            continue
        newest = candidates[-1][1]
        older = tuple(r.source.name for _, r in candidates[:-1] if r.source is not None)
        runs.append(newest.model_copy(update={"superseded": older}))
    placed = {r.ref for run in runs for r in run.refused}
    problems = [f"{r.code}: {r.ref.kind} {r.ref.name}: {r.why}" for r in index.refused]
    unplaced = [p for r, p in zip(index.refused, problems, strict=True) if r.ref not in placed]
    return RunSet(tuple(runs), _exports(index), tuple(unplaced))


def _not_found(unit: TestUnit) -> RunResult:
    return RunResult(
        stage=unit.stage.name,
        scope=unit.stage.scope,
        test=unit.test.name,
        expected_transport=expected_transport(unit),
        reason="NotFound",
        message=f"no {_KINDS[unit.mode]} of this site runs it",
    )


def _exports(index: _Index) -> tuple[ReportExportResult, ...]:
    results = []
    for export in index.objects.exports:
        ref = (status_of(export).get("snapshotRef") or {}).get("name")
        snapshot = index.configmaps.get((_place(export)[0], str(ref))) if ref else None
        results.append(report_export(export, snapshot))
    return tuple(results)
