"""Pod Security Standards: which level the pods of an object need, and namespace labels.

Kubernetes' Pod Security admission checks every pod against the level its namespace's
`pod-security.kubernetes.io/enforce` label names: `privileged` (anything), `baseline`
(no privileged containers, host namespaces, hostPath volumes, host ports, or capabilities
beyond a default set) or `restricted`. Readiness pods add `IPC_LOCK` (RDMA pins memory),
which `baseline` forbids, and some run on the host network; the namespace they run in must
say `privileged`, or their pods are rejected when the Job or JobSet creates them.

Objects are read as plain data, so both the compiler (to label namespaces) and the
checker (NVC682) share this one reading.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from nvcregen.core.fields import list_at, mapping_at
from nvcregen.core.nvcre import NVCRE_GROUP

ENFORCE = "pod-security.kubernetes.io/enforce"
ENFORCE_VERSION = "pod-security.kubernetes.io/enforce-version"
LEVELS = ("restricted", "baseline", "privileged")
# The capabilities `baseline` allows a container to add (Pod Security Standards).
BASELINE_CAPABILITIES = frozenset(
    {
        "AUDIT_WRITE",
        "CHOWN",
        "DAC_OVERRIDE",
        "FOWNER",
        "FSETID",
        "KILL",
        "MKNOD",
        "NET_BIND_SERVICE",
        "SETFCAP",
        "SETGID",
        "SETPCAP",
        "SETUID",
        "SYS_CHROOT",
    }
)
_TEMPLATE_KINDS = frozenset({"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job"})
_RUNTIME_KINDS = frozenset({"TrainingRuntime", "ClusterTrainingRuntime"})
# NVCRE's catalog MPI runtimes add IPC_LOCK to every NCCL pod, and its DCGM level 4 entry
# runs privileged on the host network (nvcre-api.md sections 4.7 and 4.8).
NVCRE_REASON = "NVCRE's MPI pods add IPC_LOCK"


def rank(level: str) -> int:
    """A level's place from least (`restricted`) to most allowed (`privileged`)."""
    return LEVELS.index(level) if level in LEVELS else len(LEVELS)


def pod_specs(obj: Mapping[str, Any]) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """Every pod spec an object describes, with its JSON pointer."""
    kind = obj.get("kind")
    spec = mapping_at(obj, "spec") or {}  # a field of another type is read as none
    if kind == "Pod":
        yield "/spec", spec
    elif kind in _TEMPLATE_KINDS:
        yield "/spec/template/spec", mapping_at(spec, "template", "spec") or {}
    elif kind == "CronJob":
        pod = mapping_at(spec, "jobTemplate", "spec", "template", "spec") or {}
        yield "/spec/jobTemplate/spec/template/spec", pod
    elif kind in _RUNTIME_KINDS or kind == "JobSet":
        base, jobset = ("/spec/template/spec", mapping_at(spec, "template", "spec") or {})
        if kind == "JobSet":
            base, jobset = "/spec", spec
        for index, job in enumerate(list_at(jobset, "replicatedJobs")):
            pointer = f"{base}/replicatedJobs/{index}/template/spec/template/spec"
            yield pointer, mapping_at(job, "template", "spec", "template", "spec") or {}


def containers(pod: Mapping[str, Any]) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """Every container and init container of a pod spec, with its pointer below the spec."""
    for field in ("initContainers", "containers"):
        for index, container in enumerate(list_at(pod, field)):
            if isinstance(container, Mapping):
                yield f"/{field}/{index}", container


def baseline_violations(pod: Mapping[str, Any]) -> list[str]:
    """What in a pod spec the `baseline` level forbids, in words; [] when it passes."""
    found = [f"{key}: true" for key in ("hostNetwork", "hostPID", "hostIPC") if pod.get(key)]
    found += [
        f"hostPath volume {v.get('name')}"
        for v in list_at(pod, "volumes")
        if isinstance(v, Mapping) and "hostPath" in v
    ]
    for _, container in containers(pod):
        context = mapping_at(container, "securityContext") or {}
        if context.get("privileged"):
            found.append(f"privileged container {container.get('name')}")
        added = list_at(context, "capabilities", "add")
        found += [f"capability {c}" for c in added if str(c) not in BASELINE_CAPABILITIES]
        found += [
            f"hostPort {p['hostPort']}"
            for p in list_at(container, "ports")
            if isinstance(p, Mapping) and p.get("hostPort")
        ]
    return sorted(set(found))


def needed_level(obj: Mapping[str, Any]) -> tuple[str, list[str]] | None:
    """The least level the object's pods pass, with why; None for objects without pods.

    Readiness pods run as root, so `restricted` is never claimed: `baseline` at least.
    NVCRE's Certifications and WorkloadRuns make pods NVCRE's catalog shapes.
    """
    group = str(obj.get("apiVersion", "")).rpartition("/")[0]
    if group == NVCRE_GROUP and obj.get("kind") in {"Certification", "WorkloadRun"}:
        return "privileged", [NVCRE_REASON]
    specs = list(pod_specs(obj))
    if not specs:
        return None
    reasons = sorted({reason for _, pod in specs for reason in baseline_violations(pod)})
    return ("privileged" if reasons else "baseline"), reasons


def namespace_labels(level: str, kube_version: str) -> dict[str, str]:
    """The labels that make a namespace enforce `level`, pinned to the cluster's version."""
    return {ENFORCE: level, ENFORCE_VERSION: f"v{kube_version}"}
