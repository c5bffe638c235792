"""Rules upstream admission webhooks enforce, which no CRD schema shows (pure).

Implemented (see docs/design/0002-webhook-rules.md for the sources):

- Trainer TrainJob: `runtimeRef.kind` is TrainingRuntime or ClusterTrainingRuntime; the
  runtime exists among the generated objects (namespaced: in the same namespace) or is
  one the site declares as installed; `trainer.env` avoids the torch-reserved `PET_*`
  names; the name leaves room for JobSet's derived pod names (`-launcher-0-0-xxxxx`).
- Trainer runtimes: `runtimePatches[].manager` is a domain-prefixed path; a replicated
  job labelled as a TrainJob step has one replica and the container the step needs (`node`
  for `trainer`); the JobSet template's `dependsOn` rules below. Across objects: every
  replicated job a TrainJob's runtime patch names exists in the runtime, and an MPI
  runtime with `runLauncherAsNode` has both `launcher` and `node` when `numNodes >= 2`.
- JobSet: the first replicated job has no `dependsOn`; `dependsOn` names existing jobs;
  `<jobset>-<replicatedJob>-<index>` stays a 63-character RFC 1035 label.
- Argo CD: `argocd.argoproj.io/sync-wave` is an integer written as a string.
- Any object: its compact JSON stays under the 262,144-byte client-side apply annotation
  limit unless it is applied server-side.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from typing import Any

from nvcregen.check.crossref import Located
from nvcregen.check.findings import Finding
from nvcregen.core import codes
from nvcregen.core.errors import Severity
from nvcregen.core.fields import list_at, mapping_at
from nvcregen.core.kube import LABEL_MAX, POD_SUFFIX

TRAINER_GROUP = "trainer.kubeflow.org"
RUNTIME_KINDS = ("TrainingRuntime", "ClusterTrainingRuntime")
RESERVED_TORCH_ENV = frozenset(
    {"PET_NNODES", "PET_NPROC_PER_NODE", "PET_NODE_RANK", "PET_MASTER_ADDR", "PET_MASTER_PORT"}
)
ANCESTOR = f"{TRAINER_GROUP}/trainjob-ancestor-step"
# The container each TrainJob step's replicated job must hold (Trainer's runtime webhook).
STEP_CONTAINERS = {
    "trainer": "node",
    "dataset-initializer": "dataset-initializer",
    "model-initializer": "model-initializer",
}
APPLY_ANNOTATION_LIMIT = 262_144
_RFC1035 = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
_DOMAIN_PATH = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+/\S+$")
_SYNC_WAVE = re.compile(r"^-?[0-9]+$")


def webhook_findings(obj: Mapping[str, Any]) -> list[Finding]:
    """Every single-object webhook rule that applies to `obj`."""
    kind = obj.get("kind")
    group = str(obj.get("apiVersion", "")).rpartition("/")[0]
    findings = list(_sync_wave(obj)) + size_findings(obj)
    if group == TRAINER_GROUP and kind == "TrainJob":
        findings += _trainjob(obj)
    if group == TRAINER_GROUP and kind in RUNTIME_KINDS:
        findings += _runtime(obj)
    if group == "jobset.x-k8s.io" and kind == "JobSet":
        findings += _jobset(obj)
    return findings


def check_runtimes(
    objects: list[Located], declared: frozenset[str] = frozenset()
) -> Iterator[tuple[str, Finding]]:
    """Each TrainJob's runtime is generated (same namespace if namespaced) or declared."""
    generated = {o.identity[1:]: o.obj for o in objects if o.obj.get("kind") in RUNTIME_KINDS}
    for located in objects:
        if located.obj.get("kind") != "TrainJob":
            continue
        ref = mapping_at(located.obj, "spec", "runtimeRef") or {}
        kind = str(ref.get("kind", "ClusterTrainingRuntime"))
        namespace = located.identity[2] if kind == "TrainingRuntime" else ""
        runtime = generated.get((kind, namespace, str(ref.get("name"))))
        if runtime is not None:
            yield from ((located.file, f) for f in _layout(located.obj, runtime))
        elif ref.get("name") not in declared:
            yield (
                located.file,
                Finding(
                    "/spec/runtimeRef/name",
                    codes.NVC651.code,
                    f"{kind} '{ref.get('name')}' is neither generated nor declared as installed",
                    hint="the Trainer webhook rejects a TrainJob whose runtime does not exist yet",
                ),
            )


def _trainjob(obj: Mapping[str, Any]) -> Iterator[Finding]:
    spec = mapping_at(obj, "spec") or {}  # a field of another type is read as none
    kind = (mapping_at(spec, "runtimeRef") or {}).get("kind", "ClusterTrainingRuntime")
    if kind not in RUNTIME_KINDS:
        yield Finding(
            "/spec/runtimeRef/kind",
            codes.NVC650.code,
            f"unsupported runtime kind '{kind}'",
            hint="use TrainingRuntime or ClusterTrainingRuntime",
        )
    for index, env in enumerate(list_at(spec, "trainer", "env")):
        if str((mapping_at(env) or {}).get("name")) in RESERVED_TORCH_ENV:
            yield Finding(
                f"/spec/trainer/env/{index}/name",
                codes.NVC652.code,
                f"{env['name']} is set by the torch plugin and may not be overridden",
            )
    name = str((mapping_at(obj, "metadata") or {}).get("name", ""))
    if len(name) + POD_SUFFIX > LABEL_MAX or not _RFC1035.match(name):
        yield Finding(
            "/metadata/name",
            codes.NVC653.code,
            f"TrainJob name '{name}' leaves no room for JobSet's pod names",
            hint=f"use an RFC 1035 label of at most {LABEL_MAX - POD_SUFFIX} characters",
        )
    for index, patch in enumerate(list_at(spec, "runtimePatches")):
        if not _DOMAIN_PATH.match(str((mapping_at(patch) or {}).get("manager", ""))):
            yield Finding(
                f"/spec/runtimePatches/{index}/manager",
                codes.NVC654.code,
                "runtime patch manager must be a domain-prefixed path",
                hint="for example nvcregen.io/readiness",
            )


def _layout(trainjob: Mapping[str, Any], runtime: Mapping[str, Any]) -> Iterator[Finding]:
    """NVC660: a TrainJob fits its runtime's replicated jobs (Trainer's JobSet and MPI plugins)."""
    spec = mapping_at(trainjob, "spec") or {}
    runtime_spec = mapping_at(runtime, "spec") or {}
    names = {str(j.get("name")) for j in _replicated_jobs(runtime_spec)}
    for index, patch in enumerate(list_at(spec, "runtimePatches")):
        for j, job in enumerate(_replicated_jobs(mapping_at(patch, "trainingRuntimeSpec"))):
            if str(job.get("name")) not in names:
                yield Finding(
                    f"/spec/runtimePatches/{index}/trainingRuntimeSpec/template/spec/"
                    f"replicatedJobs/{j}/name",
                    codes.NVC660.code,
                    f"runtime patch names replicated job '{job.get('name')}', "
                    "which the runtime does not have",
                )
    mpi = mapping_at(runtime_spec, "mlPolicy", "mpi") or {}
    nodes = (mapping_at(spec, "trainer") or {}).get("numNodes", 1)
    if mpi.get("runLauncherAsNode") and _number(nodes) >= 2 and not {"launcher", "node"} <= names:
        yield Finding(
            "/spec/trainer/numNodes",
            codes.NVC660.code,
            f"numNodes {nodes} needs the runtime's 'launcher' and 'node' jobs "
            "(MPI with runLauncherAsNode)",
        )


def _replicated_jobs(runtime_spec: Mapping[str, Any] | None) -> list[Mapping[str, Any]]:
    """`template.spec.replicatedJobs` of a runtime's spec (or a patch's trainingRuntimeSpec).

    A job that is no mapping (NVC602) is read as an empty one, keeping the others' indexes.
    """
    return _mappings(list_at(runtime_spec, "template", "spec", "replicatedJobs"))


def _mappings(items: list[Any]) -> list[Mapping[str, Any]]:
    return [mapping_at(item) or {} for item in items]


def _number(value: Any, default: int = 1) -> int:
    """A count as an int (a bool or anything else is `default`: the schema reports it)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _runtime(obj: Mapping[str, Any]) -> Iterator[Finding]:
    """NVC659: each TrainJob step's job has one replica and the container the step needs."""
    jobs = _replicated_jobs(mapping_at(obj, "spec"))
    base = "/spec/template/spec/replicatedJobs"
    for index, job in enumerate(jobs):
        template = mapping_at(job, "template") or {}
        step = (mapping_at(template, "metadata", "labels") or {}).get(ANCESTOR)
        if step is None:
            continue
        if job.get("replicas", 1) != 1:
            yield Finding(
                f"{base}/{index}/replicas", codes.NVC659.code, f"the {step} job needs 1 replica"
            )
        pod = mapping_at(template, "spec", "template", "spec") or {}
        containers = {
            str(c.get("name")) for c in list_at(pod, "containers") if isinstance(c, Mapping)
        }
        wanted = STEP_CONTAINERS.get(str(step))
        if wanted is not None and wanted not in containers:
            yield Finding(
                f"{base}/{index}",
                codes.NVC659.code,
                f"the {step} job needs a container named '{wanted}'",
                hint="Trainer puts the TrainJob's fields on that container",
            )
    yield from _depends_on(jobs, base)


def _depends_on(jobs: list[Mapping[str, Any]], base: str) -> Iterator[Finding]:
    """NVC655: the first job depends on nothing; `dependsOn` names existing jobs."""
    names = [str(job.get("name")) for job in jobs]
    for index, job in enumerate(jobs):
        depends = [str(d.get("name")) for d in list_at(job, "dependsOn") if isinstance(d, Mapping)]
        if depends and index == 0:
            yield Finding(
                f"{base}/0/dependsOn",
                codes.NVC655.code,
                "the first replicated job cannot depend on another",
            )
        for missing in sorted(set(depends) - set(names)):
            yield Finding(
                f"{base}/{index}/dependsOn",
                codes.NVC655.code,
                f"dependsOn names '{missing}', which is not a replicated job",
            )


def _jobset(obj: Mapping[str, Any]) -> Iterator[Finding]:
    name = str((mapping_at(obj, "metadata") or {}).get("name", ""))
    jobs = _mappings(list_at(obj, "spec", "replicatedJobs"))
    yield from _depends_on(jobs, "/spec/replicatedJobs")
    for job in jobs:
        derived = f"{name}-{job.get('name')}-{max(0, _number(job.get('replicas')) - 1)}"
        if len(derived) > LABEL_MAX or not _RFC1035.match(derived):
            yield Finding(
                "/metadata/name",
                codes.NVC656.code,
                f"job name '{derived}' derived from this JobSet exceeds {LABEL_MAX} characters",
            )


def _sync_wave(obj: Mapping[str, Any]) -> Iterator[Finding]:
    annotations = mapping_at(obj, "metadata", "annotations") or {}
    wave = annotations.get("argocd.argoproj.io/sync-wave")
    if wave is not None and not (isinstance(wave, str) and _SYNC_WAVE.match(wave)):
        yield Finding(
            "/metadata/annotations/argocd.argoproj.io~1sync-wave",
            codes.NVC657.code,
            f"sync wave {wave!r} must be an integer written as a string",
            hint='quote it, e.g. "-1"',
        )


SIZE_CODE = codes.NVC658.code


def size_findings(obj: Mapping[str, Any]) -> list[Finding]:
    """NVC658: an object too large for client-side apply's last-applied annotation."""
    size = len(json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode())
    annotations = mapping_at(obj, "metadata", "annotations") or {}
    options = str(annotations.get("argocd.argoproj.io/sync-options", ""))
    if size <= APPLY_ANNOTATION_LIMIT or "ServerSideApply=true" in options:
        return []
    return [
        Finding(
            "",
            SIZE_CODE,
            f"{size} bytes: too large for client-side apply's annotation",
            Severity.WARNING,
            "apply it server-side (Argo CD: ServerSideApply=true)",
        )
    ]
