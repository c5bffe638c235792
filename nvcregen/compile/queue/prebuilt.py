"""Kueue prebuilt Workloads for trainer mode's runs: the pod sets Kueue derives, exactly (pure).

A run labelled `kueue.x-k8s.io/prebuilt-workload-name: <run>-workload` is admitted
through the Workload of that name nvcregen applies itself (never the run's own name: see
`workload_name`), instead of one Kueue creates, so the
Workload's state (deactivated, out of sync) is an object a health check can read
(docs/design/0006-stage-gating.md, "A run Kueue deactivated"). Kueue v0.19.2 adopts it
(`pkg/controller/jobframework/reconciler.go`: `ensureOneWorkload`,
`EnsurePrebuiltWorkloadOwnership` adds the owner reference and the `job-uid` label) and
then checks it against the run (`ensurePrebuiltWorkloadInSync`, `EquivalentToWorkload`):
the same `maximumExecutionTimeSeconds` (none: nvcregen writes no
`kueue.x-k8s.io/max-exec-time-seconds` label) and, pod set by pod set in order, the same count,
min count, tolerations (until admitted), init containers and containers
(`pkg/util/equality/podset.go`, `Semantic.DeepEqual`). A Workload that differs is Finished
with reason OutOfSync and its run never starts, so the pod sets here are what Kueue
computes, mirrored function by function:

- a batch Job (`pkg/controller/jobs/job/job_controller.go`, `PodSets`): one pod set
  `main`, `parallelism` pods, the template as the API server stored it, i.e. with the
  core defaults of `k8s.io/kubernetes/pkg/apis/core/v1/defaults.go` (`SetDefaults_Container`:
  imagePullPolicy, terminationMessagePath and -Policy; `SetDefaults_ObjectFieldSelector`;
  `SetDefaults_Probe`), since Kueue reads the stored Job;
- a TrainJob (`pkg/controller/jobs/trainjob/trainjob_controller.go`, `getChildJobSet` and
  `PodSets`): Trainer v2.2.1's runtime info built from the TrainingRuntime, its runtime
  patches merged (`pkg/runtime/core/trainingruntime.go`, `newRuntimeInfo`,
  `mergeRuntimePatches`), the MPI plugin's worker count (`pkg/runtime/framework/plugins/
  mpi/mpi.go`: `numNodes - 1` with `runLauncherAsNode`), then the JobSet builder's
  `Trainer` step (`pkg/runtime/framework/plugins/jobset/builder.go`): the trainer job's
  `node` container takes the TrainJob's image, command and args, and with
  `runLauncherAsNode` the `node` containers of the trainer and worker jobs take
  `resourcesPerNode` and the TrainJob's env. The MPI plugin's env and volume mounts stay
  in the runtime info only: Kueue never copies them into its JobSet (Trainer's own
  `JobSet.Build` does), so they are not in the pod sets. Then JobSet's `PodSets`
  (`pkg/controller/jobs/jobset/jobset_controller.go`): one pod set per replicated job,
  `replicas x min(parallelism, completions)` pods. The Workload CRD's defaults apply to
  Kueue's side too (a dry-run create), and to nvcregen's Workload when it is stored.

Both carry the topology request `pkg/controller/jobframework/tas.go` builds from the pod
template's annotations, and the priority `prepareWorkload` would set from the run's
WorkloadPriorityClass label. `spec.active` is never written: Kueue owns it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence

from nvcregen.compile.queue.objects import KUEUE_API
from nvcregen.compile.queue.workloads import (
    LABEL_VALUE_MAX,
    REQUIRED_TOPOLOGY,
    UNCONSTRAINED_TOPOLOGY,
    priority_value,
    uses_kueue,
)
from nvcregen.core import codes
from nvcregen.core.errors import Diagnostic, Severity
from nvcregen.core.kueuekeys import KUEUE_PREFIX, PREBUILT_LABEL, PRIORITY_LABEL, QUEUE_LABEL
from nvcregen.core.manifest import Manifest, Obj
from nvcregen.engineapi.registry import gitops_of, readiness_of
from nvcregen.kindapi.registry import kind_of
from nvcregen.plan.model import TestUnit
from nvcregen.spec.positions import Document
from nvcregen.spec.v1alpha1 import Site

JOB_INDEX_LABEL = "batch.kubernetes.io/job-completion-index"
JOBSET_INDEX_LABEL = "jobset.sigs.k8s.io/job-index"
ANCESTOR = "trainer.kubeflow.org/trainjob-ancestor-step"
NODE = "node"  # Trainer's container (and MPI worker job) name
MAIN = "main"  # a batch Job's one pod set
WORKLOAD_SUFFIX = "-workload"
TERMINATION_PATH = "/dev/termination-log"
PROBE_DEFAULTS = {"timeoutSeconds": 1, "periodSeconds": 10, "successThreshold": 1}
PROBES = ("livenessProbe", "readinessProbe", "startupProbe")


def uses_prebuilt(site: Site) -> bool:
    """Whether trainer mode's runs get prebuilt Workloads (Kueue, and not opted out)."""
    return _could_use_prebuilt(site) and site.spec.dependencies.kueue.prebuilt_workloads


def _could_use_prebuilt(site: Site) -> bool:
    """Trainer mode with Kueue: nvcregen creates the runs, and Kueue admits them."""
    return readiness_of(site).writes_runs and uses_kueue(site)


FIELD = "/spec/dependencies/kueue/prebuiltWorkloads"


def check_prebuilt(
    site: Site, doc: Document, test_units: Sequence[TestUnit] = ()
) -> list[Diagnostic]:
    """NVC384-386: prebuilt Workloads off under Flux with Jobs, off, or set in vain.

    NVC384 (error): off under Flux with a stage of batch Jobs; NVC385 (info): off in
    trainer mode; NVC386 (warning): set where it does nothing.

    Flux reads a batch/v1 Job with its own status reader, ahead of the step's health
    expressions, and that reader calls a suspended Job Current (fluxcd/pkg
    runtime/statusreaders/job.go, runtime v0.100.0): a Job Kueue still queues passes its
    step at apply, and a failure found later no longer stops the chain. Only the Job's
    prebuilt Workload, checked until Kueue finishes it, holds such a step.

    Without a Workload of its own, a run Kueue deactivated looks queued to every health
    check: its step waits until Flux's timeout, or holds Argo CD's sync until someone
    terminates it. The field does nothing in NVCRE mode (NVCRE creates the TrainJobs) or
    with a gang scheduler (no Kueue).
    """
    if FIELD not in doc.spans:  # only what the site writes: the default says nothing
        return []
    enabled = site.spec.dependencies.kueue.prebuilt_workloads
    applies = _could_use_prebuilt(site)
    jobs = sorted({u.test.name for u in test_units if not kind_of(u.test).collective})
    if applies and not enabled and gitops_of(site).suspended_job_current and jobs:
        message = (
            "without prebuilt Workloads Flux cannot wait for a batch Job Kueue queues: its Job "
            "reader calls a suspended Job Current, so a step of "
            + ", ".join(jobs)
            + " passes at apply and a later failure no longer stops the chain"
        )
        hint = "remove prebuiltWorkloads: false (the Workloads gate each step), or use Argo CD"
        return [
            Diagnostic(doc.span(FIELD), Severity.ERROR, codes.NVC384.code, message, FIELD, hint)
        ]
    if applies and not enabled:
        message = (
            "without prebuilt Workloads a run Kueue deactivated looks queued: its step waits "
            "until Flux's step timeout, and holds Argo CD's readiness sync until it is "
            "terminated (argocd app terminate-op)"
        )
        hint = "remove prebuiltWorkloads: false once the cluster's Kueue adopts prebuilt workloads"
        return [Diagnostic(doc.span(FIELD), Severity.INFO, codes.NVC385.code, message, FIELD, hint)]
    if not applies and enabled:
        why = "NVCRE creates its own runs" if uses_kueue(site) else "a gang scheduler admits runs"
        message = f"prebuiltWorkloads has no effect here: {why}"
        hint = "remove spec.dependencies.kueue.prebuiltWorkloads (trainer mode with Kueue only)"
        return [
            Diagnostic(doc.span(FIELD), Severity.WARNING, codes.NVC386.code, message, FIELD, hint)
        ]
    return []


def with_prebuilt(
    site: Site, stage_index: int, runs: Sequence[Manifest], runtime: Obj | None = None
) -> list[Manifest]:
    """Each run labelled with its prebuilt Workload's name, followed by that Workload.

    Args:
        site: The site.
        stage_index: The runs' stage (their WorkloadPriorityClass).
        runs: TrainJobs of one runtime, or batch Jobs.
        runtime: The TrainingRuntime the TrainJobs reference (None for Jobs).

    """
    if not uses_prebuilt(site):
        return list(runs)
    found: list[Manifest] = []
    for run in runs:
        labelled = _labelled(run)
        found += [labelled, prebuilt_workload(site, stage_index, labelled, runtime)]
    return found


def workload_name(run_name: str) -> str:
    """`<run>-workload`: never the run's own name.

    Kueue derives a TrainJob's pod sets by dry-run-creating a Workload named as the
    TrainJob (`trainjob_controller.go`, `PodSets`, to have the API server default them); a
    dry run of a name that exists fails with AlreadyExists, so a prebuilt Workload of the
    TrainJob's name would make every equivalence check an error and the run would never
    start. Jobs get the same suffix, so every run's Workload is found the same way.

    Raises:
        ValueError: The name would not fit the label value that names it (63 characters).

    """
    name = f"{run_name}{WORKLOAD_SUFFIX}"
    if len(name) > LABEL_VALUE_MAX:
        raise ValueError(f"{name}: longer than a label value ({LABEL_VALUE_MAX})")
    return name


def _labelled(run: Manifest) -> Manifest:
    meta = run.obj["metadata"]
    labels = {**meta["labels"], PREBUILT_LABEL: workload_name(meta["name"])}
    return dataclasses.replace(run, obj={**run.obj, "metadata": {**meta, "labels": labels}})


def prebuilt_workload(
    site: Site, stage_index: int, run: Manifest, runtime: Obj | None = None
) -> Manifest:
    """The Workload Kueue would construct for a run (labelled `_labelled`): `<run>-workload`."""
    meta = run.obj["metadata"]
    labels = meta["labels"]
    if run.kind == "Job":
        pod_sets = job_pod_sets(run.obj)
    else:
        if runtime is None:
            raise ValueError(f"TrainJob {run.name}: its TrainingRuntime is needed")
        pod_sets = trainjob_pod_sets(run.obj, runtime)
    spec: Obj = {"queueName": labels[QUEUE_LABEL], "podSets": pod_sets}
    if PRIORITY_LABEL in labels:  # ExtractPriority: the label names a WorkloadPriorityClass
        spec["priorityClassRef"] = {
            "group": KUEUE_API.partition("/")[0],
            "kind": "WorkloadPriorityClass",
            "name": labels[PRIORITY_LABEL],
        }
        spec["priority"] = priority_value(site, stage_index)
    own = {k: v for k, v in labels.items() if not k.startswith(KUEUE_PREFIX)}
    obj: Obj = {
        "apiVersion": KUEUE_API,
        "kind": "Workload",
        "metadata": {"name": labels[PREBUILT_LABEL], "namespace": meta["namespace"], "labels": own},
        "spec": spec,
    }
    # No notes: index.json files them as the run's threshold derivations, which it has alone.
    return dataclasses.replace(run, obj=obj, notes=())


# --- batch Jobs ------------------------------------------------------------------------------


def job_pod_sets(job: Obj) -> list[Obj]:
    """A Job's one pod set, `main`, its template as the API server stores it."""
    spec = job["spec"]
    template = stored_template(spec["template"])
    count = spec.get("parallelism", 1)
    if (completions := spec.get("completions")) is not None:
        count = min(count, completions)
    pod_set: Obj = {"name": MAIN, "count": count, "template": template}
    pod_set["topologyRequest"] = topology_request(template, {"podIndexLabel": JOB_INDEX_LABEL})
    return [pod_set]


def stored_template(template: Obj) -> Obj:
    """A pod template with the core defaults the API server gives every container.

    New mappings along the paths that change; everything else is shared with the Job, which
    nothing changes after compiling (as `nvcregen.compile.postprocess` relies on).
    """
    spec = dict(template["spec"])
    for key in ("initContainers", "containers"):
        if key in spec:
            spec[key] = [stored_container(c) for c in spec[key]]
    return {**template, "spec": spec}


def stored_container(container: Obj) -> Obj:
    """`SetDefaults_Container`, `_ObjectFieldSelector` and `_Probe` on one container."""
    found = dict(container)
    found.setdefault("imagePullPolicy", pull_policy(str(found.get("image", ""))))
    found.setdefault("terminationMessagePath", TERMINATION_PATH)
    found.setdefault("terminationMessagePolicy", "File")
    if "env" in found:
        found["env"] = [_stored_env(e) for e in found["env"]]
    for probe in PROBES:
        if probe in found:
            found[probe] = {**PROBE_DEFAULTS, "failureThreshold": 3, **found[probe]}
    return found


def _stored_env(env: Obj) -> Obj:
    field_ref = env.get("valueFrom", {}).get("fieldRef")
    if field_ref is None or "apiVersion" in field_ref:
        return env
    value_from = {**env["valueFrom"], "fieldRef": {**field_ref, "apiVersion": "v1"}}
    return {**env, "valueFrom": value_from}


def pull_policy(image: str) -> str:
    """Always for a `latest` or untagged image without a digest, else IfNotPresent.

    As `ParseImageName`: the tag follows the last `:` after the last `/`, before any
    `@digest`; no tag and no digest is `latest`.
    """
    name, _, digest = image.partition("@")
    last = name.rpartition("/")[2]
    tag = last.rpartition(":")[2] if ":" in last else ""
    if not tag and not digest:
        tag = "latest"
    return "Always" if tag == "latest" else "IfNotPresent"


# --- TrainJobs -------------------------------------------------------------------------------


def trainjob_pod_sets(trainjob: Obj, runtime: Obj) -> list[Obj]:
    """The pod sets of a TrainJob on an MPI TrainingRuntime with `runLauncherAsNode`.

    New mappings along the paths that change; the rest is shared with the runtime and the
    TrainJob, which nothing changes after compiling.
    """
    spec = trainjob["spec"]
    trainer = spec.get("trainer", {})
    policy = runtime["spec"].get("mlPolicy", {})
    launcher_as_node = bool(policy.get("mpi", {}).get("runLauncherAsNode"))
    affinities = _patched_affinities(spec.get("runtimePatches", []))
    pod_sets = []
    for job in runtime["spec"]["template"]["spec"]["replicatedJobs"]:
        trainer_step = job["template"].get("metadata", {}).get("labels", {}).get(ANCESTOR)
        is_trainer = trainer_step == "trainer"
        count = _count(job, trainer, policy, is_trainer=is_trainer)
        template = job["template"]["spec"]["template"]
        pod_spec = dict(template["spec"])
        if job["name"] in affinities:
            pod_spec["affinity"] = _merge(pod_spec.get("affinity", {}), affinities[job["name"]])
        takes_trainer = is_trainer or (launcher_as_node and job["name"] == NODE)
        pod_spec["containers"] = [
            _trainer_container(c, trainer, image=is_trainer) if takes_trainer else c
            for c in pod_spec["containers"]
        ]
        replicas = 1 if is_trainer else job.get("replicas", 1)
        pod = {**template, "spec": pod_spec}
        request = {
            "podIndexLabel": JOB_INDEX_LABEL,
            "subGroupIndexLabel": JOBSET_INDEX_LABEL,
            "subGroupCount": replicas,
        }
        pod_sets.append(
            {
                "name": job["name"],
                "count": replicas * count,
                "template": pod,
                "topologyRequest": topology_request(pod, request),
            }
        )
    return pod_sets


def _trainer_container(container: Obj, trainer: Obj, *, image: bool) -> Obj:
    """The JobSet builder's `Trainer` step on a `node` container (others are left alone)."""
    if container["name"] != NODE:
        return container
    found = dict(container)
    if image:  # the trainer step only: the TrainJob's image, command and args
        found.update({k: trainer[k] for k in ("image", "command", "args") if k in trainer})
    if resources := trainer.get("resourcesPerNode"):
        found["resources"] = resources
    env = _upsert_env(found.get("env", []), trainer.get("env", []))
    if env:
        found["env"] = env
    return found


def _count(job: Obj, trainer: Obj, policy: Obj, *, is_trainer: bool) -> int:
    """`newRuntimeInfo` and the MPI plugin: pods per replica of one replicated job."""
    if is_trainer:
        return int(policy.get("numNodes", 1))
    parallelism = int(job["template"]["spec"].get("parallelism", 1))
    mpi = policy.get("mpi")
    if job["name"] == NODE and mpi is not None and "numNodes" in trainer:
        nodes = int(trainer["numNodes"])
        return max(nodes - 1, 1) if mpi.get("runLauncherAsNode") else nodes
    return parallelism


def _patched_affinities(patches: Sequence[Obj]) -> dict[str, Obj]:
    """`mergeRuntimePatches`, for the field nvcregen's patches set: pod-spec affinity, by job.

    A strategic merge replaces `affinity.nodeAffinity.required...nodeSelectorTerms` (an
    atomic list) and merges the maps above it; nvcregen patches nothing else.

    Raises:
        ValueError: A patch sets a pod-spec field other than affinity.

    """
    found: dict[str, Obj] = {}
    for patch in patches:
        for job_patch in _replicated_job_patches(patch):
            pod_patch = job_patch.get("template", {}).get("spec", {}).get("template", {})
            unknown = set(pod_patch.get("spec", {})) - {"affinity"} or set(pod_patch) - {"spec"}
            if unknown:
                raise ValueError(f"runtime patch sets {sorted(unknown)}: not mirrored")
            if "affinity" in pod_patch.get("spec", {}):
                name = job_patch["name"]
                found[name] = _merge(found.get(name, {}), pod_patch["spec"]["affinity"])
    return found


def _replicated_job_patches(patch: Obj) -> Iterator[Obj]:
    template = patch.get("trainingRuntimeSpec", {}).get("template", {})
    yield from template.get("spec", {}).get("replicatedJobs", [])


def _merge(base: Obj, patch: Obj) -> Obj:
    """A strategic merge of maps; lists (node selector terms) are replaced whole."""
    merged = dict(base)
    for key, value in patch.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def _upsert_env(env: Sequence[Obj], updates: Sequence[Obj]) -> list[Obj]:
    """Trainer's `apply.UpsertEnvVars`: replace a variable of the same name, else append."""
    found = list(env)
    for update in updates:
        index = next((i for i, e in enumerate(found) if e["name"] == update["name"]), None)
        if index is None:
            found.append(update)
        else:
            found[index] = update
    return found


# --- both --------------------------------------------------------------------------------


def topology_request(template: Obj, request: Obj) -> Obj:
    """`NewPodSetTopologyRequest(...).Build()`: the pod template's TAS annotation, indexed."""
    annotations = template.get("metadata", {}).get("annotations", {})
    found: Obj = {}
    if REQUIRED_TOPOLOGY in annotations:
        found["required"] = annotations[REQUIRED_TOPOLOGY]
    elif UNCONSTRAINED_TOPOLOGY in annotations:
        found["unconstrained"] = annotations[UNCONSTRAINED_TOPOLOGY] == "true"
    return {**found, **request}
