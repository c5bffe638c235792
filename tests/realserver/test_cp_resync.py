"""Re-syncing a shipped trainer-mode TrainJob after Kueue wrote its runtime patch (issue #19).

Kueue adds its own `spec.runtimePatches` entry (manager `kueue.x-k8s.io/manager`) to a
TrainJob it admits. The Trainer CRD declares that list a map keyed by `manager`
(`x-kubernetes-list-type: map`), so what a second sync does to Kueue's entry depends on
how the GitOps controller applies, and only a real API server merges it that way:

- client-side (`kubectl apply`, and Argo CD without `ServerSideApply=true`): a three-way
  JSON merge patch from the last-applied annotation, the file and the live object. A
  custom resource has no strategic merge, so a list that differs is replaced whole;
- server-side (Argo CD with `ServerSideApply=true`, Flux): an apply patch as one field
  manager, which sets the entries that manager owns and leaves the others' entries alone.

Each apply here goes through the official kubernetes client's `patch` (merge patch, or
apply patch with a field manager), as those controllers send it.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubecontrolplane import ControlPlane

ROOT = Path(__file__).resolve().parents[2]
SITE = "h20-3e-trainer"
NAMESPACE = "nvcre"
GROUP, VERSION, PLURAL = "trainer.kubeflow.org", "v1alpha1", "trainjobs"
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
KUEUE = "kueue.x-k8s.io/manager"
NVCREGEN = "nvcregen.io/placement"
Obj = dict[str, Any]


def shipped_train_job() -> Obj:
    """The first TrainJob of the shipped trainer-mode site's readiness layer."""
    path = sorted((ROOT / "out" / SITE / "readiness").rglob("trainjob-*.yaml"))[0]
    obj: Obj = yaml.safe_load(path.read_text("utf-8"))
    assert [p["manager"] for p in obj["spec"]["runtimePatches"]] == [NVCREGEN]
    return obj


def readiness_application() -> Obj:
    path = ROOT / "out" / SITE / "gitops" / f"application-{SITE}-readiness.yaml"
    app: Obj = yaml.safe_load(path.read_text("utf-8"))
    return app


@pytest.fixture(scope="module")
def api(control_plane: ControlPlane) -> Any:
    """The official client's CustomObjectsApi on the real server."""
    from kubernetes import client, config

    control_plane.namespace(NAMESPACE)
    loader: Any = config  # the client ships no type hints
    return client.CustomObjectsApi(
        loader.new_client_from_config(config_file=str(control_plane.kubeconfig))
    )


def renamed(obj: Obj, suffix: str) -> Obj:
    """The shipped TrainJob under a name of the test's own (one live object per test)."""
    obj = copy.deepcopy(obj)
    obj["metadata"]["name"] = f"{obj['metadata']['name'][:50]}-{suffix}"
    return obj


def get(api: Any, name: str) -> Obj:
    live: Obj = api.get_namespaced_custom_object(GROUP, VERSION, NAMESPACE, PLURAL, name)
    return live


def managers(live: Obj) -> list[str]:
    return [p["manager"] for p in live["spec"].get("runtimePatches", [])]


# --- the two ways of applying --------------------------------------------------------------


def three_way_patch(original: Obj, modified: Obj, current: Obj) -> Obj:
    """kubectl's three-way JSON merge patch: what the file dropped since the last apply is
    deleted (null), what differs from the live object is set; a list is set whole."""
    patch: Obj = {}
    for key in original:
        if key not in modified:
            patch[key] = None
    for key, value in modified.items():
        live = current.get(key)
        if isinstance(value, dict) and isinstance(live, dict):
            old = original.get(key)
            inner = three_way_patch(old if isinstance(old, dict) else {}, value, live)
            if inner:
                patch[key] = inner
        elif value != live:
            patch[key] = value
    return patch


def apply_client_side(api: Any, obj: Obj) -> Obj:
    """`kubectl apply` (client-side): create with the last-applied annotation, or patch."""
    config = copy.deepcopy(obj)
    config["metadata"].setdefault("annotations", {})[LAST_APPLIED] = json.dumps(
        obj, sort_keys=True, separators=(",", ":")
    )
    name = obj["metadata"]["name"]
    try:
        live = get(api, name)
    except Exception as exc:  # the client's ApiException: 404, create it
        if getattr(exc, "status", None) != 404:
            raise
        created: Obj = api.create_namespaced_custom_object(
            GROUP, VERSION, NAMESPACE, PLURAL, config
        )
        return created
    original = json.loads(live["metadata"]["annotations"][LAST_APPLIED])
    patch = three_way_patch(original, config, live)
    patched: Obj = api.patch_namespaced_custom_object(
        GROUP, VERSION, NAMESPACE, PLURAL, name, patch
    )
    return patched


def apply_server_side(api: Any, obj: Obj, manager: str) -> Obj:
    """Server-side apply as one field manager (force: take fields from other managers)."""
    applied: Obj = api.patch_namespaced_custom_object(
        GROUP,
        VERSION,
        NAMESPACE,
        PLURAL,
        obj["metadata"]["name"],
        obj,
        field_manager=manager,
        force=True,
        _content_type="application/apply-patch+yaml",
    )
    return applied


def kueue_admits(api: Any, obj: Obj) -> Obj:
    """Kueue's write: its own runtimePatches entry (a node selector for the flavor it
    assigned), applied as its own field manager."""
    pod = {"spec": {"template": {"spec": {"nodeSelector": {"flavor": "h20-3e"}}}}}
    patch = {
        "manager": KUEUE,
        "trainingRuntimeSpec": {
            "template": {"spec": {"replicatedJobs": [{"name": "launcher", "template": pod}]}}
        },
    }
    body = {
        "apiVersion": obj["apiVersion"],
        "kind": obj["kind"],
        "metadata": {"name": obj["metadata"]["name"], "namespace": NAMESPACE},
        "spec": {"runtimePatches": [patch]},
    }
    return apply_server_side(api, body, "kueue-admission")


# --- the tests -----------------------------------------------------------------------------


def test_a_client_side_resync_replaces_the_list_and_drops_kueues_entry(api: Any) -> None:
    obj = renamed(shipped_train_job(), "csa")
    apply_client_side(api, obj)
    assert managers(kueue_admits(api, obj)) == [NVCREGEN, KUEUE]
    again = apply_client_side(api, obj)  # the second sync, same file
    assert managers(again) == [NVCREGEN]  # the list was replaced whole
    assert managers(get(api, obj["metadata"]["name"])) == [NVCREGEN]


def test_a_server_side_resync_keeps_kueues_entry_and_changes_nothing(api: Any) -> None:
    obj = renamed(shipped_train_job(), "ssa")
    apply_server_side(api, obj, "argocd-controller")
    admitted = kueue_admits(api, obj)
    assert managers(admitted) == [NVCREGEN, KUEUE]
    again = apply_server_side(api, obj, "argocd-controller")
    assert managers(again) == [NVCREGEN, KUEUE]
    # A no-op: the server did not even write a new version.
    assert again["metadata"]["resourceVersion"] == admitted["metadata"]["resourceVersion"]
    owners = {f["manager"] for f in again["metadata"]["managedFields"]}
    assert {"argocd-controller", "kueue-admission"} <= owners


def test_a_server_side_resync_dropping_our_entry_keeps_kueues(api: Any) -> None:
    """An entry is owned by its writer: the sync's manager can drop only its own."""
    obj = renamed(shipped_train_job(), "ssa-drop")
    apply_server_side(api, obj, "argocd-controller")
    kueue_admits(api, obj)
    without = copy.deepcopy(obj)
    del without["spec"]["runtimePatches"]
    assert managers(apply_server_side(api, without, "argocd-controller")) == [KUEUE]


def sync_options(app: Obj, obj: Obj) -> set[str]:
    """The Application's sync options, with the object's own annotation's added."""
    options = set(app["spec"].get("syncPolicy", {}).get("syncOptions", []))
    annotation = obj["metadata"].get("annotations", {}).get("argocd.argoproj.io/sync-options")
    return options | set(filter(None, str(annotation or "").split(",")))


def test_the_shipped_readiness_application_can_sync_a_train_job_twice(api: Any) -> None:
    """Argo CD's way, read from the shipped Application: server-side apply when a sync
    option says `ServerSideApply=true`, else client-side; with `RespectIgnoreDifferences=
    true`, fields under `ignoreDifferences` for TrainJobs are taken from the live object."""
    app, obj = readiness_application(), renamed(shipped_train_job(), "argocd")
    options = sync_options(app, obj)

    def sync(live: Obj | None) -> Obj:
        wanted = copy.deepcopy(obj)
        if live is not None and "RespectIgnoreDifferences=true" in options:
            for ignored in app["spec"].get("ignoreDifferences", []):
                pointers = ignored.get("jsonPointers", [])
                if ignored.get("kind") == "TrainJob" and "/spec/runtimePatches" in pointers:
                    wanted["spec"]["runtimePatches"] = live["spec"].get("runtimePatches", [])
        if "ServerSideApply=true" in options:
            return apply_server_side(api, wanted, "argocd-controller")
        return apply_client_side(api, wanted)

    sync(None)
    admitted = kueue_admits(api, obj)
    again = sync(admitted)
    assert managers(again) == [NVCREGEN, KUEUE]
    assert again["spec"] == admitted["spec"]
