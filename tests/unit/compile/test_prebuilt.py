"""Prebuilt Kueue Workloads: the pod sets Kueue v0.19.2 derives from each run, field by field.

Kueue finishes a prebuilt Workload as OutOfSync unless, pod set by pod set in order, the
count, min count, tolerations, init containers and containers equal what it derives from
the run (`pkg/util/equality/podset.go`); `compile/queue/prebuilt.py` names the functions
mirrored. These tests state what each of them does to nvcregen's runs, read from the
sources, and check the Workloads of the shipped trainer site against them.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from sitefactory import catalog, edit, parse, plan_of, site_yaml
from trainerfactory import (
    ROOT,
    compiled,
    example_manifests,
    example_text,
    jobs_named,
    trainer_text,
)

from nvcregen.check.crossref import Located, check_prebuilt_workloads
from nvcregen.compile.layers import check_layers, site_manifests
from nvcregen.compile.queue.prebuilt import (
    _upsert_env,
    job_pod_sets,
    pull_policy,
    stored_container,
    trainjob_pod_sets,
    workload_name,
)
from nvcregen.core.errors import Severity
from nvcregen.core.kueuekeys import PREBUILT_LABEL
from nvcregen.kubeschema.registry import default_registry
from nvcregen.plan.resolve import plan

Obj = dict[str, Any]
# What Trainer's MPI plugin adds to the runtime info only (pkg/runtime/framework/plugins/mpi):
# Kueue's getChildJobSet never copies it into its JobSet, so no pod set may carry it.
MPI_PLUGIN_ENV = "OMPI_MCA_orte_default_hostfile"
MPI_PLUGIN_MOUNT = "mpi-ssh-auth"


def _by_kind(kind: str) -> list[Obj]:
    return [m.obj for m in example_manifests() if m.kind == kind]


def _workload_of(run: Obj) -> Obj:
    name = run["metadata"]["labels"][PREBUILT_LABEL]
    (found,) = [w for w in _by_kind("Workload") if w["metadata"]["name"] == name]
    return found


def _runtime_of(trainjob: Obj) -> Obj:
    name = trainjob["spec"]["runtimeRef"]["name"]
    (found,) = [r for r in _by_kind("TrainingRuntime") if r["metadata"]["name"] == name]
    return found


def _containers(pod_set: Obj) -> list[Obj]:
    return list(pod_set["template"]["spec"]["containers"])


# --- every run, its Workload -----------------------------------------------------------------


def test_every_trainjob_and_job_has_a_workload_named_after_it() -> None:
    runs = _by_kind("TrainJob") + _by_kind("Job")
    assert len(runs) == len(_by_kind("Workload")) > 0
    for run in runs:
        workload = _workload_of(run)
        meta = run["metadata"]
        # never the run's own name: Kueue dry-run-creates a Workload of a TrainJob's name
        assert meta["labels"][PREBUILT_LABEL] == f"{meta['name']}-workload"
        assert workload["metadata"]["name"] != meta["name"]
        assert workload["metadata"]["namespace"] == meta["namespace"]
        assert workload["apiVersion"] == "kueue.x-k8s.io/v1beta2"  # the stored version
        spec = workload["spec"]
        assert spec["queueName"] == meta["labels"]["kueue.x-k8s.io/queue-name"]
        assert "active" not in spec  # Kueue's: a sync never takes a deactivation back
        assert spec["priorityClassRef"] == {
            "group": "kueue.x-k8s.io",
            "kind": "WorkloadPriorityClass",
            "name": meta["labels"]["kueue.x-k8s.io/priority-class"],
        }


def test_workload_priorities_are_the_stage_priority_class_values() -> None:
    classes = {
        m.obj["metadata"]["name"]: m.obj["value"]
        for m in _site_layers()
        if m.kind == "WorkloadPriorityClass"
    }
    assert classes
    for workload in _by_kind("Workload"):
        spec = workload["spec"]
        assert spec["priority"] == classes[spec["priorityClassRef"]["name"]]


def _site_layers() -> list[Any]:

    site, _ = parse(example_text())
    return site_manifests(plan_of(site), ROOT)


def test_every_workload_validates_against_the_vendored_crd() -> None:
    registry = default_registry()
    for workload in _by_kind("Workload"):
        assert registry.validate(workload, kube_version="1.30") == []


# --- batch Jobs: the stored template ------------------------------------------------------


def test_a_jobs_pod_set_is_its_template_with_the_core_defaults() -> None:
    for job in _by_kind("Job"):
        (pod_set,) = _workload_of(job)["spec"]["podSets"]
        assert (pod_set["name"], pod_set["count"]) == ("main", 1)
        template = job["spec"]["template"]
        assert pod_set["template"]["spec"].get("tolerations") == template["spec"].get("tolerations")
        for ours, theirs in zip(_containers(pod_set), template["spec"]["containers"], strict=True):
            assert ours["imagePullPolicy"] == "IfNotPresent"  # pinned by digest
            assert ours["terminationMessagePath"] == "/dev/termination-log"
            assert ours["terminationMessagePolicy"] == "File"
            written = {k: v for k, v in ours.items() if k in theirs}
            assert written == theirs | _defaulted_env(theirs)
        assert pod_set["topologyRequest"] == {
            "podIndexLabel": "batch.kubernetes.io/job-completion-index",
            "required": "kubernetes.io/hostname",
        }


def _defaulted_env(container: Obj) -> Obj:
    if "env" not in container:
        return {}
    env = copy.deepcopy(container["env"])
    for item in env:
        if "fieldRef" in item.get("valueFrom", {}):
            item["valueFrom"]["fieldRef"]["apiVersion"] = "v1"
    return {"env": env}


def test_a_field_ref_gets_its_api_version_as_the_api_server_stores_it() -> None:
    container = {"name": "c", "image": "i:1", "env": [_node_name()]}
    (env,) = stored_container(container)["env"]
    assert env["valueFrom"]["fieldRef"] == {"fieldPath": "spec.nodeName", "apiVersion": "v1"}
    assert container["env"] == [_node_name()]  # the Job's own container is left alone


def _node_name() -> Obj:
    return {"name": "NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}


def test_a_probe_gets_the_core_defaults_and_keeps_what_is_written() -> None:
    probe = {"tcpSocket": {"port": 22}, "initialDelaySeconds": 5, "periodSeconds": 3}
    stored = stored_container({"name": "c", "image": "i:1", "readinessProbe": probe})
    assert stored["readinessProbe"] == {
        **probe,
        "timeoutSeconds": 1,
        "successThreshold": 1,
        "failureThreshold": 3,
    }


@pytest.mark.parametrize(
    ("image", "policy"),
    [
        ("nccl", "Always"),  # no tag, no digest: latest
        ("nccl:latest", "Always"),
        ("nccl:26.01", "IfNotPresent"),
        ("nccl@sha256:" + "a" * 64, "IfNotPresent"),  # a digest and no tag
        ("nccl:latest@sha256:" + "a" * 64, "Always"),  # the tag still says latest
        ("registry:5000/nccl", "Always"),  # a port is not a tag
        ("registry:5000/nccl:1", "IfNotPresent"),
    ],
)
def test_pull_policy_follows_the_tag_as_kubernetes_defaults_it(image: str, policy: str) -> None:
    assert pull_policy(image) == policy


def test_a_jobs_count_is_the_smaller_of_parallelism_and_completions() -> None:
    job = copy.deepcopy(_by_kind("Job")[0])
    job["spec"] |= {"parallelism": 3, "completions": 2}
    assert job_pod_sets(job)[0]["count"] == 2
    job["spec"]["completions"] = 4
    assert job_pod_sets(job)[0]["count"] == 3


# --- TrainJobs: Trainer's runtime info and JobSet builder, then JobSet's pod sets ------------


def _two_node() -> Obj:
    found = [t for t in _by_kind("TrainJob") if t["spec"]["trainer"]["numNodes"] == 2]
    assert found
    return found[0]


def test_a_two_node_trainjob_has_the_worker_then_the_launcher() -> None:
    trainjob = _two_node()
    trainer = trainjob["spec"]["trainer"]
    runtime = _runtime_of(trainjob)
    node, launcher = _workload_of(trainjob)["spec"]["podSets"]
    assert [node["name"], launcher["name"]] == ["node", "launcher"]  # replicatedJobs order
    assert (node["count"], launcher["count"]) == (1, 1)  # numNodes - 1 with runLauncherAsNode
    (worker,) = _containers(node)
    (main,) = _containers(launcher)
    # the trainer step's `node` container: the TrainJob's image, command, args
    for key in ("image", "command", "args"):
        assert main[key] == trainer[key]
    runtime_worker = jobs_named(runtime)["node"]["template"]["spec"]["template"]["spec"]
    assert worker["command"] == runtime_worker["containers"][0]["command"]  # not replaced
    # with runLauncherAsNode both `node` containers take resourcesPerNode and the env
    for container in (worker, main):
        assert container["resources"] == trainer["resourcesPerNode"]
        assert container["env"] == trainer["env"]  # in the TrainJob's order
        assert all(e["name"] != MPI_PLUGIN_ENV for e in container["env"])
        assert all(m["name"] != MPI_PLUGIN_MOUNT for m in container["volumeMounts"])
        assert "imagePullPolicy" not in container  # CRDs: no core defaulting


def test_a_trainjobs_pod_sets_are_pinned_by_its_runtime_patch() -> None:
    trainjob = _two_node()
    (patch,) = trainjob["spec"]["runtimePatches"]
    patched = patch["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"]
    affinity = {p["name"]: p["template"]["spec"]["template"]["spec"]["affinity"] for p in patched}
    for pod_set in _workload_of(trainjob)["spec"]["podSets"]:
        assert pod_set["template"]["spec"]["affinity"] == affinity[pod_set["name"]]
        assert pod_set["topologyRequest"] == {
            "podIndexLabel": "batch.kubernetes.io/job-completion-index",
            "subGroupIndexLabel": "jobset.sigs.k8s.io/job-index",
            "subGroupCount": 1,
            "required": "kubernetes.io/hostname",
        }


def test_a_one_node_trainjob_is_the_launcher_alone() -> None:
    one = [t for t in _by_kind("TrainJob") if t["spec"]["trainer"]["numNodes"] == 1]
    assert one
    for trainjob in one:
        (launcher,) = _workload_of(trainjob)["spec"]["podSets"]
        assert (launcher["name"], launcher["count"]) == ("launcher", 1)


def test_a_larger_trainjob_has_num_nodes_minus_one_workers() -> None:
    trainjob = copy.deepcopy(_two_node())
    trainjob["spec"]["trainer"]["numNodes"] = 5
    node, launcher = trainjob_pod_sets(trainjob, _runtime_of(_two_node()))
    assert (node["count"], launcher["count"]) == (4, 1)


def test_trainers_env_upsert_replaces_in_place_and_appends_the_rest() -> None:
    env = [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]
    updates = [{"name": "C", "value": "3"}, {"name": "A", "value": "9"}]
    assert _upsert_env(env, updates) == [
        {"name": "A", "value": "9"},
        {"name": "B", "value": "2"},
        {"name": "C", "value": "3"},
    ]


def test_a_runtime_patch_setting_other_fields_is_refused_not_mirrored_wrong() -> None:
    trainjob = copy.deepcopy(_two_node())
    (patch,) = trainjob["spec"]["runtimePatches"]
    job = patch["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"][0]
    job["template"]["spec"]["template"]["spec"]["nodeSelector"] = {"a": "b"}
    with pytest.raises(ValueError, match="nodeSelector"):
        trainjob_pod_sets(trainjob, _runtime_of(_two_node()))


# --- where there are none --------------------------------------------------------------------


def _kinds(text: str) -> set[str]:
    return {m.kind for m in compiled(text)}


def test_no_workloads_when_the_site_turns_them_off() -> None:
    text = trainer_text(site_yaml(dependencies="kueue: {prebuiltWorkloads: false}\n"))
    found = compiled(text)
    assert "Workload" not in {m.kind for m in found}
    assert all(PREBUILT_LABEL not in m.obj["metadata"]["labels"] for m in found)
    assert "Workload" in _kinds(trainer_text(site_yaml()))  # on by default


def test_an_existing_kueue_gets_workloads_without_a_priority() -> None:
    text = trainer_text(site_yaml(dependencies="kueue: {managed: false, version: 0.19.2}\n"))
    workloads = [m.obj for m in compiled(text) if m.kind == "Workload"]
    assert workloads
    for workload in workloads:
        assert "priorityClassRef" not in workload["spec"]
        assert "priority" not in workload["spec"]
        for pod_set in workload["spec"]["podSets"]:  # no TAS annotation: only the index
            assert "required" not in pod_set["topologyRequest"]


def _codes(text: str) -> dict[str, Severity]:
    site, doc = parse(text)
    found = check_layers(site, doc, test_units=plan(site, catalog()), catalog=catalog())
    return {d.code: d.severity for d in found if d.code in {"NVC384", "NVC385", "NVC386"}}


def _on_flux(text: str) -> str:
    return edit(text, "spec:\n", "spec:\n  gitops: {engine: flux}\n")


def test_nvc384_refuses_flux_without_the_workloads_that_gate_its_jobs() -> None:
    # Flux's Job reader calls a queued (suspended) Job Current: without its Workload the
    # dcgm-l1 Job's step passes at apply.
    off = trainer_text(site_yaml(dependencies="kueue: {prebuiltWorkloads: false}\n"))
    assert _codes(_on_flux(off)) == {"NVC384": Severity.ERROR}
    assert _codes(off) == {"NVC385": Severity.INFO}  # Argo CD's Job check reads Suspended
    nccl_only = site_yaml(
        dependencies="kueue: {prebuiltWorkloads: false}\n",
        stages="- name: node\n  scope: intra-node\n  tests: [nccl-all-reduce]\n",
    )
    assert _codes(_on_flux(trainer_text(nccl_only))) == {"NVC385": Severity.INFO}
    on = trainer_text(site_yaml(dependencies="kueue: {prebuiltWorkloads: true}\n"))
    assert _codes(_on_flux(on)) == {}


def test_nvc385_tells_a_trainer_site_that_turned_them_off() -> None:
    off = trainer_text(site_yaml(dependencies="kueue: {prebuiltWorkloads: false}\n"))
    assert _codes(off) == {"NVC385": Severity.INFO}
    on = trainer_text(site_yaml(dependencies="kueue: {prebuiltWorkloads: true}\n"))
    assert _codes(on) == {}
    assert _codes(trainer_text(site_yaml())) == {}


def test_nvc386_warns_where_they_do_nothing() -> None:
    nvcre = site_yaml(dependencies="kueue: {prebuiltWorkloads: true}\n")
    assert _codes(nvcre) == {"NVC386": Severity.WARNING}
    assert _codes(site_yaml(dependencies="kueue: {prebuiltWorkloads: false}\n")) == {}


def test_nvc385_points_at_the_field() -> None:
    text = trainer_text(site_yaml(dependencies="kueue: {prebuiltWorkloads: false}\n"))
    site, doc = parse(text)
    found = check_layers(site, doc, test_units=plan(site, catalog()), catalog=catalog())
    (diag,) = [d for d in found if d.code == "NVC385"]
    line = next(i for i, t in enumerate(text.splitlines(), 1) if "prebuiltWorkloads" in t)
    assert diag.span.line == line


# --- NVC383: a run's Workload is in the tree, beside it ---------------------------------------


def _located(folder: str) -> list[Located]:
    trainjob = _two_node()
    workload = _workload_of(trainjob)
    return [
        Located("readiness/02-two-node/round-1/trainjob.yaml", trainjob),
        Located(f"readiness/{folder}/workload.yaml", workload),
    ]


def test_nvc383_is_quiet_when_the_workload_is_beside_its_run() -> None:
    assert list(check_prebuilt_workloads(_located("02-two-node/round-1"))) == []


def test_nvc383_a_run_whose_workload_is_missing_never_starts() -> None:
    run, _ = _located("02-two-node/round-1")
    ((file, finding),) = list(check_prebuilt_workloads([run]))
    assert (file, finding.code) == (run.file, "NVC383")
    assert finding.pointer == "/metadata/labels/kueue.x-k8s.io~1prebuilt-workload-name"
    assert "never starts" in finding.message


def test_nvc383_a_workload_in_another_step_cannot_fail_the_runs() -> None:
    ((_, finding),) = list(check_prebuilt_workloads(_located("02-two-node/round-2")))
    assert finding.code == "NVC383"
    assert "another step" in finding.message


def test_a_workload_carries_no_threshold_notes() -> None:
    """index.json files a manifest's notes as its thresholds: those are the run's alone."""
    runs = {f"{m.name}-workload": m for m in example_manifests() if m.kind == "TrainJob"}
    assert any(m.notes for m in runs.values())
    for workload in (m for m in example_manifests() if m.kind == "Workload"):
        assert workload.notes == ()
        if workload.name in runs:
            assert workload.source == runs[workload.name].source


def test_a_workload_name_fits_the_label_that_names_it() -> None:
    assert workload_name("a" * 54) == "a" * 54 + "-workload"  # 63: the limit
    with pytest.raises(ValueError, match="label value"):
        workload_name("a" * 55)
