"""A second sync of every shipped site's readiness objects is a no-op (issue 19, item 1).

Each run object is applied as the site's GitOps controller applies it, changed as Kueue,
the Job controller and Trainer change it (queued, running, evicted and requeued), then
applied again: the second apply must change nothing and be refused by nothing. The apply
itself is `tests/applymodel.py`, a small model of client-side and server-side apply.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from applymodel import Live, RejectedError, client_side_apply, mutate, server_side_apply, update
from sitefactory import catalog

from nvcregen.chain.pipeline import CompileResult, Options, build_site
from nvcregen.core.manifest import Manifest

Obj = dict[str, Any]
ROOT = Path(__file__).resolve().parents[3]
SITES = [  # the shipped sites and the node-health examples (#23: one Job a node)
    *sorted((ROOT / "sites").glob("*.yaml")),
    *sorted((ROOT / "examples" / "node-health").glob("*.yaml")),
]
QUEUE = "kueue.x-k8s.io/queue-name"
PREBUILT = "kueue.x-k8s.io/prebuilt-workload-name"
KUEUE_PATCH = "kueue.x-k8s.io/manager"
RUN_KINDS = frozenset({"TrainJob", "Job", "Certification", "WorkloadRun"})
Apply = Callable[[Live | None, Obj], Live]


def _manifests(path: Path) -> list[Manifest]:
    shown = path.relative_to(ROOT).as_posix()
    built = build_site(path.read_bytes(), shown, catalog(), Options(root=ROOT))
    assert not isinstance(built, CompileResult), [str(d) for d in built.diagnostics]
    return built.manifests


def _applier(manifests: list[Manifest]) -> Apply:
    """How the site's readiness layer is applied: its GitOps engine and sync options."""
    for m in manifests:
        kind, name = m.obj["kind"], m.obj["metadata"]["name"]
        if kind == "Kustomization" and name.endswith("-readiness"):
            return lambda live, obj: server_side_apply(
                live, obj, "kustomize-controller", force=True
            )
        if kind == "Application" and name.endswith("-readiness"):
            options = m.obj["spec"]["syncPolicy"].get("syncOptions", [])
            if "ServerSideApply=true" in options:
                return lambda live, obj: server_side_apply(
                    live, obj, "argocd-controller", force=True
                )
            return client_side_apply
    raise AssertionError("no readiness Application or Kustomization")


# --- what the controllers do (Kueue v0.19.2, Kubernetes' Job controller, Trainer v2.2.1) ----


def _created(live: Live) -> Live:
    """Kueue's mutating webhook and the Job strategy on create; nobody owns what they set."""
    obj = copy.deepcopy(live.obj)
    spec = obj.get("spec") or {}
    queued = QUEUE in (obj["metadata"].get("labels") or {})
    if obj["kind"] == "TrainJob" and queued:  # trainjob_webhook.go Default
        spec["suspend"] = True
        entry = {"manager": KUEUE_PATCH, "trainingRuntimeSpec": {"template": {"spec": {}}}}
        spec.setdefault("runtimePatches", []).append(entry)
    if obj["kind"] == "Job":
        if queued:  # job_webhook.go Default -> ApplyDefaultForSuspend
            spec["suspend"] = True
        uid = {"batch.kubernetes.io/controller-uid": "6b1c", "controller-uid": "6b1c"}
        spec["selector"] = {"matchLabels": dict(uid)}
        spec["template"]["metadata"].setdefault("labels", {}).update(uid)
    return mutate(live, obj)


def _admitted(live: Live, flavor: Obj, jobs: list[str]) -> Live:
    """Kueue admits the workload: RunWithPodSetsInfo, then the start (manager `kueue`)."""
    obj = copy.deepcopy(live.obj)
    info = {
        "metadata": {
            "labels": {"kueue.x-k8s.io/podset": "main", "kueue.x-k8s.io/tas": "true"},
            "annotations": {"kueue.x-k8s.io/workload": "job-x-1a2b3"},
        },
        "spec": {"nodeSelector": dict(flavor)},
    }
    if obj["kind"] == "TrainJob":
        entry = next(p for p in obj["spec"]["runtimePatches"] if p["manager"] == KUEUE_PATCH)
        entry["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"] = [
            {"name": job, "template": {"spec": {"template": copy.deepcopy(info)}}} for job in jobs
        ]
        live = update(live, obj, "kueue")  # runtimePatches while suspended (Trainer's rule)
        obj = copy.deepcopy(live.obj)
        obj["spec"]["suspend"] = False
        live = update(live, obj, "kueue")
        return _status(live, {"conditions": [{"type": "Suspended", "status": "False"}]})
    template = obj["spec"]["template"]
    for key in ("labels", "annotations"):
        template["metadata"].setdefault(key, {}).update(info["metadata"][key])
    pod = template["spec"]
    pod["nodeSelector"] = {**(pod.get("nodeSelector") or {}), **flavor}  # podset.Merge
    pod.setdefault("schedulingGates", []).append({"name": "kueue.x-k8s.io/topology"})
    obj["spec"]["suspend"] = False
    live = update(live, obj, "kueue")
    return _status(live, {"startTime": "2026-12-03T10:00:00Z", "active": 1})


def _evicted(admitted: Live, created: Live) -> Live:
    """Kueue stops it (pods not ready in time): suspended, its admission undone."""
    obj = copy.deepcopy(admitted.obj)
    obj["spec"]["suspend"] = True
    if obj["kind"] == "TrainJob":  # Stop, then RestorePodSetsInfo
        entry = next(p for p in obj["spec"]["runtimePatches"] if p["manager"] == KUEUE_PATCH)
        entry["trainingRuntimeSpec"]["template"]["spec"].pop("replicatedJobs")
        return update(admitted, obj, "kueue")
    stopped = _status(update(admitted, obj, "kueue"), {})  # Stop: suspend, reset startTime
    obj = copy.deepcopy(stopped.obj)
    obj["spec"]["template"] = copy.deepcopy(created.obj["spec"]["template"])  # RestorePodSpec
    return update(stopped, obj, "kueue")


def _status(live: Live, status: Obj) -> Live:
    return Live({**live.obj, "status": status}, live.owners)


JOB_UID = "kueue.x-k8s.io/job-uid"
RESOURCE_IN_USE = "kueue.x-k8s.io/resource-in-use"


def _condition(kind: str, status: str, reason: str) -> Obj:
    return {"type": kind, "status": status, "reason": reason, "message": reason}


def _workload_states(first: Live, run: Obj) -> dict[str, Live]:
    """A prebuilt Workload as Kueue v0.19.2 leaves it (jobframework/reconciler.go, core/)."""
    stored = copy.deepcopy(first.obj)
    stored["spec"]["active"] = True  # the CRD's default, owned by nobody
    created = mutate(first, stored)
    obj = copy.deepcopy(created.obj)
    meta = obj["metadata"]  # EnsurePrebuiltWorkloadOwnership, then the finalizer: updates
    meta["ownerReferences"] = [
        {
            "apiVersion": run["apiVersion"],
            "kind": run["kind"],
            "name": run["metadata"]["name"],
            "uid": "0b7e5c1a-5d2f-4f7e-9c1a-1f2e3d4c5b6a",
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]
    meta["labels"] = {**meta["labels"], JOB_UID: "0b7e5c1a-5d2f-4f7e-9c1a-1f2e3d4c5b6a"}
    meta["finalizers"] = [RESOURCE_IN_USE]
    adopted = _status(
        update(created, obj, "kueue"),
        {"conditions": [_condition("QuotaReserved", "False", "Pending")]},
    )
    admitted = _status(
        adopted,
        {
            "conditions": [
                _condition("QuotaReserved", "True", "QuotaReserved"),
                _condition("Admitted", "True", "Admitted"),
            ]
        },
    )
    obj = copy.deepcopy(admitted.obj)
    obj["spec"]["active"] = False  # RequeuingLimitExceeded: the workload controller's Update
    deactivated = _status(
        update(admitted, obj, "kueue"),
        {"conditions": [_condition("Evicted", "True", "Deactivated")]},
    )
    return {"adopted": adopted, "admitted": admitted, "deactivated": deactivated}


def _states(first: Live, flavor: Obj, jobs: list[str], run: Obj | None = None) -> dict[str, Live]:
    if first.obj["kind"] == "Workload":
        assert run is not None, first.obj["metadata"]["name"]
        return _workload_states(first, run)
    if first.obj["kind"] not in RUN_KINDS:  # ConfigMaps, TrainingRuntimes, LogProfiles
        return {"created": first}
    if first.obj["kind"] not in ("TrainJob", "Job"):
        progress = {"conditions": [{"type": "InProgress", "status": "True"}]}
        return {"created": first, "running": _status(first, progress)}
    queued = _created(first)
    running = _admitted(queued, flavor, jobs)
    return {"queued": queued, "running": running, "requeued": _evicted(running, queued)}


def _cases() -> list[Any]:
    cases = []
    for path in SITES:
        manifests = _manifests(path)
        runs = [m.obj for m in manifests if m.component == "readiness"]
        runs = [obj for obj in runs if obj["kind"] in RUN_KINDS]
        assert runs, path.name
        cases.append(pytest.param(path, id=f"{path.parent.name}/{path.stem}"))
    return cases


@pytest.mark.slow
@pytest.mark.parametrize("path", _cases())
def test_a_second_sync_of_every_run_changes_nothing_and_fails_nothing(path: Path) -> None:
    manifests = _manifests(path)
    apply = _applier(manifests)
    flavors = [m.obj for m in manifests if m.obj["kind"] == "ResourceFlavor"]
    flavor = flavors[0]["spec"].get("nodeLabels", {}) if flavors else {}
    runtimes = {m.obj["metadata"]["name"]: m.obj for m in manifests if "Runtime" in m.obj["kind"]}
    problems = []
    readiness = [m.obj for m in manifests if m.component == "readiness"]
    assert {obj["kind"] for obj in readiness} & RUN_KINDS
    runs = {  # each run by the name of its prebuilt Workload
        (o["metadata"]["namespace"], o["metadata"]["labels"][PREBUILT]): o
        for o in readiness
        if PREBUILT in o["metadata"].get("labels", {})
    }
    for obj in readiness:
        ref = (obj.get("spec") or {}).get("runtimeRef", {}).get("name")
        replicated = runtimes[ref]["spec"]["template"]["spec"]["replicatedJobs"] if ref else []
        jobs = [job["name"] for job in replicated] or ["main"]
        run = runs.get((obj["metadata"].get("namespace"), obj["metadata"]["name"]))
        for state, live in _states(apply(None, obj), flavor, jobs, run).items():
            where = f"{obj['kind']} {obj['metadata']['name']} ({state})"
            try:
                again = apply(live, obj)
            except RejectedError as refused:
                problems.append(f"{where}: refused: {refused}")
                continue
            if again.obj != live.obj:
                problems.append(f"{where}: the second sync changed it")
    assert problems == []


# --- the model itself ----------------------------------------------------------------------


def _trainjob(patches: list[Obj], *, suspend: bool | None = None) -> Obj:
    spec: Obj = {"runtimeRef": {"name": "rt"}, "runtimePatches": patches}
    if suspend is not None:
        spec["suspend"] = suspend
    return {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob", "spec": spec}


OURS = {"manager": "nvcregen.io/placement", "trainingRuntimeSpec": {}}
KUEUES = {"manager": KUEUE_PATCH, "trainingRuntimeSpec": {"template": {"spec": {}}}}


def test_client_side_apply_replaces_a_custom_resources_list_and_trainer_refuses_it() -> None:
    live = client_side_apply(None, _trainjob([OURS]))
    running = Live(copy.deepcopy(live.obj))
    running.obj["spec"] |= {"runtimePatches": [OURS, KUEUES], "suspend": False}
    with pytest.raises(RejectedError, match="RuntimePatches can only be modified"):
        client_side_apply(running, _trainjob([OURS]))
    queued = Live(copy.deepcopy(running.obj))
    queued.obj["spec"]["suspend"] = True
    assert client_side_apply(queued, _trainjob([OURS])).obj["spec"]["runtimePatches"] == [OURS]


def test_server_side_apply_keeps_another_managers_item_of_a_keyed_list() -> None:
    live = server_side_apply(None, _trainjob([OURS]), "argocd-controller", force=True)
    webhook = mutate(live, _trainjob([OURS, KUEUES], suspend=True))
    again = server_side_apply(webhook, _trainjob([OURS]), "argocd-controller", force=True)
    assert again.obj["spec"]["runtimePatches"] == [OURS, KUEUES]
    assert again.obj["spec"]["suspend"] is True


def test_server_side_apply_drops_an_item_only_its_applier_owned() -> None:
    live = server_side_apply(
        None, _trainjob([OURS, KUEUES], suspend=True), "argocd-controller", force=True
    )
    again = server_side_apply(
        live, _trainjob([OURS], suspend=True), "argocd-controller", force=True
    )
    assert again.obj["spec"]["runtimePatches"] == [OURS]


def _job(selector: dict[str, str]) -> Obj:
    pod = {"containers": [{"name": "c", "image": "i"}], "nodeSelector": selector}
    spec = {"suspend": True, "template": {"metadata": {}, "spec": pod}}
    return {"apiVersion": "batch/v1", "kind": "Job", "spec": spec}


def test_a_forced_apply_takes_back_an_atomic_map_another_manager_changed() -> None:
    live = server_side_apply(None, _job({"a": "1"}), "flux", force=True)
    changed = update(live, _job({"a": "1", "b": "2"}), "kueue")
    with pytest.raises(RejectedError, match="conflict"):
        server_side_apply(changed, _job({"a": "1"}), "flux", force=False)
    forced = server_side_apply(changed, _job({"a": "1"}), "flux", force=True)
    assert forced.obj["spec"]["template"]["spec"]["nodeSelector"] == {"a": "1"}


def test_a_strategic_merge_patch_merges_a_built_in_map_key_by_key() -> None:
    live = client_side_apply(None, _job({"a": "1"}))
    changed = Live(copy.deepcopy(live.obj))
    changed.obj["spec"]["template"]["spec"]["nodeSelector"]["b"] = "2"
    changed.obj["spec"]["suspend"] = False
    again = client_side_apply(changed, _job({"a": "1"})).obj["spec"]
    assert again["template"]["spec"]["nodeSelector"] == {"a": "1", "b": "2"}
    assert again["suspend"] is True  # the manifest states it, so the apply puts it back


def test_every_queued_trainer_run_has_its_workload_in_the_second_sync() -> None:
    """The Workloads the test above replays are there: one per TrainJob and Job, same name."""
    manifests = _manifests(ROOT / "tests" / "fixtures" / "perrun" / "h20-3e-trainer.yaml")
    readiness = [m.obj for m in manifests if m.component == "readiness"]
    runs = {o["metadata"]["name"] for o in readiness if o["kind"] in {"TrainJob", "Job"}}
    workloads = {o["metadata"]["name"] for o in readiness if o["kind"] == "Workload"}
    assert runs
    assert workloads == {f"{name}-workload" for name in runs}


@pytest.mark.slow
def test_a_workloads_pod_sets_are_immutable_once_it_holds_quota() -> None:
    """The rendered Workload applied again unchanged leaves the admitted one as it is.

    The first half checks this file's apply model (`tests/applymodel.py`), not nvcregen:
    it refuses changed pod sets once a Workload is admitted, as Kueue's webhook does, so
    the second half would notice a rendered Workload that changes them.
    """
    manifests = _manifests(ROOT / "tests" / "fixtures" / "perrun" / "h20-3e-trainer.yaml")
    workload = next(m.obj for m in manifests if m.obj["kind"] == "Workload")
    run = next(
        m.obj
        for m in manifests
        if m.obj["metadata"]["labels"].get(PREBUILT) == workload["metadata"]["name"]
    )
    admitted = _workload_states(
        server_side_apply(None, workload, "kustomize-controller", force=True), run
    )["admitted"]
    changed = copy.deepcopy(workload)
    changed["spec"]["podSets"][0]["count"] += 1
    with pytest.raises(RejectedError, match="podSets"):
        server_side_apply(admitted, changed, "kustomize-controller", force=True)
    assert (
        server_side_apply(admitted, workload, "kustomize-controller", force=True).obj
        == admitted.obj
    )
