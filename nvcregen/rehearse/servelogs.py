"""Give every pod the rehearsal saw bound to a node the log its run would print, through kwok.

For each run's namespace, one list of its pods; each pod bound to a node (`spec.nodeName`)
belongs to a run of the tree: a node pack's Job (its pod labelled with the Job's name), or
a group pack's TrainJob (labelled by JobSet with the TrainJob's name; its launcher is the
pod of the `launcher` replicated job, whose hosts are the nodes the TrainJob's pods ran
on). Its log is made from the plan (`podlogs.py`), written in CRI format under the
rehearsal's folder (`pod-logs/<namespace>/<pod>.log`) and served by a `Logs` object
(`kwoklogs.py`) for every container of the pod. A pair run's TrainJob (annotated
`nvcregen.io/server-log: node`: RDMA rails between two nodes) has its worker serve the
server's log and its launcher the client's, each made on the node its pod was bound to.
A pod of no run in the tree (none expected) and every other pod of a run (an MPI
TrainJob's workers) get an empty log.
Once created, kwok's watch must see them: `wait_served` asks the API server for one
pod's log until kwok answers it.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

from nvcregen.compile.readiness.mpi import LAUNCHER
from nvcregen.core.labels import NODES
from nvcregen.rehearse.controlplane import ControlPlane, ControlPlaneError
from nvcregen.rehearse.kwoklogs import LOGS_PATH, cri_text, logs_object
from nvcregen.rehearse.podlogs import run_pod_log
from nvcregen.rehearse.printer import Printer
from nvcregen.replay.model import TreeObject

JOBSET_NAME = "jobset.sigs.k8s.io/jobset-name"
REPLICATED_JOB = "jobset.sigs.k8s.io/replicatedjob-name"
JOB_NAME = ("batch.kubernetes.io/job-name", "job-name")
SERVE_TIMEOUT = 60.0  # seconds for kwok's watch to see the Logs objects on a loaded machine


@dataclass(frozen=True)
class ServedLog:
    """One pod's log as served: where, the first line (empty for no output), its file."""

    namespace: str
    pod: str
    node: str
    run: str
    path: Path
    first: str


def serve_pod_logs(
    plane: ControlPlane, runs: Sequence[TreeObject], printer: Printer, folder: Path
) -> list[ServedLog]:
    """Write and serve the log of every bound pod in the runs' namespaces; what was served.

    Raises:
        ControlPlaneError: When a list fails or a `Logs` object is refused.

    """
    by_name = {(r.namespace or "default", r.kind, r.name): r.obj for r in runs}
    served: list[ServedLog] = []
    for namespace in sorted({r.namespace or "default" for r in runs}):
        listed = plane.ok("GET", f"/api/v1/namespaces/{quote(namespace)}/pods")
        pods = [p for p in listed.get("items") or [] if (p.get("spec") or {}).get("nodeName")]
        hosts = _jobset_nodes(pods)
        served += [
            _serve(plane, namespace, pod, by_name, hosts, printer, folder)
            for pod in sorted(pods, key=lambda p: str(p["metadata"]["name"]))
        ]
    return served


def _jobset_nodes(pods: Sequence[dict[str, object]]) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for pod in pods:
        jobset = _labels(pod).get(JOBSET_NAME)
        if jobset:
            found.setdefault(jobset, set()).add(_node(pod))
    return found


def _serve(
    plane: ControlPlane,
    namespace: str,
    pod: dict[str, object],
    runs: Mapping[tuple[str, str, str], Mapping[str, Any]],
    hosts: dict[str, set[str]],
    printer: Printer,
    folder: Path,
) -> ServedLog:
    labels, name, node = _labels(pod), str(_meta(pod).get("name")), _node(pod)
    start = _started(pod)
    text, run_name = "", ""
    job = next((labels[k] for k in JOB_NAME if k in labels), None)
    jobset = labels.get(JOBSET_NAME)
    if jobset and (namespace, "TrainJob", jobset) in runs:
        run, run_name = runs[(namespace, "TrainJob", jobset)], jobset
        notes = (run.get("metadata") or {}).get("annotations") or {}
        planned = str(notes.get(NODES) or "").split(",")
        bound = hosts.get(jobset, set())
        nodes = [n for n in planned if n in bound] + sorted(bound - set(planned))
        launcher = labels.get(REPLICATED_JOB) == LAUNCHER
        text = run_pod_log(printer, run, name, nodes, start, launcher, on=node)
    elif job and (namespace, "Job", job) in runs:
        run_name = job
        text = run_pod_log(printer, runs[(namespace, "Job", job)], name, [node], start, False)
    path = folder / namespace / f"{name}.log"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(cri_text(text, start), encoding="utf-8")
    obj = logs_object(namespace, name, path)  # every container of the pod
    code, answer = plane.request("POST", LOGS_PATH.format(namespace=quote(namespace)), obj)
    if code not in {201, 409}:
        raise ControlPlaneError(f"Logs {namespace}/{name}: HTTP {code}: {answer}")
    first = text.split("\n", 1)[0]
    return ServedLog(namespace, name, node, run_name, path, first)


def wait_served(
    plane: ControlPlane, served: Sequence[ServedLog], timeout: float = SERVE_TIMEOUT
) -> str:
    """Wait until kwok serves the last pod's log with output; "" then, else why not."""
    probe = next((s for s in reversed(served) if s.first), None)
    if probe is None:
        return ""
    path = f"/api/v1/namespaces/{quote(probe.namespace)}/pods/{quote(probe.pod)}/log"
    deadline = time.monotonic() + timeout
    answer: object = None
    while time.monotonic() < deadline:
        code, answer = plane.request("GET", f"{path}?limitBytes=4096")
        if code == 200 and isinstance(answer, str) and answer.startswith(probe.first):
            return ""
        time.sleep(0.5)
    return f"kwok did not serve pod {probe.namespace}/{probe.pod}'s log in {timeout:.0f}s: {answer}"


def _meta(obj: dict[str, object]) -> dict[str, object]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, dict) else {}


def _labels(obj: dict[str, object]) -> dict[str, str]:
    labels = _meta(obj).get("labels")
    return {str(k): str(v) for k, v in labels.items()} if isinstance(labels, dict) else {}


def _node(pod: dict[str, object]) -> str:
    spec = pod.get("spec")
    return str(spec.get("nodeName") or "") if isinstance(spec, dict) else ""


def _started(pod: dict[str, object]) -> datetime:
    """When the pod started (`status.startTime`, else its creation), in UTC."""
    status = pod.get("status")
    raw = (status.get("startTime") if isinstance(status, dict) else None) or _meta(pod).get(
        "creationTimestamp"
    )
    try:
        return datetime.strptime(str(raw), "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    except ValueError:
        return datetime.now(UTC).replace(microsecond=0)
