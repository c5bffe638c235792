"""Trainer mode from a cluster: the site's TrainJobs and Jobs, their pods, and their logs.

Three paginated LISTs in the site's namespace, all with `labelSelector=nvcregen.io/site=
SITE` (TrainJobs, Jobs, and the pods: their templates carry the site label), then one
`GET /api/v1/namespaces/<ns>/pods/<pod>/log?container=<c>` per run:

- a TrainJob's launcher pod is the one JobSet labels `jobset.sigs.k8s.io/jobset-name=
  <trainjob>` and `jobset.sigs.k8s.io/replicatedjob-name=launcher`; its container is
  `node` (where Trainer puts the TrainJob's command);
- a pair run's TrainJob (RDMA rails between two nodes, annotated `nvcregen.io/server-log:
  node`) also has its server's log read: its worker pod's (`replicatedjob-name=node`),
  container `node`, named after the pod (`<trainjob>-node-0-0-xxxxx`);
- a DCGM Job's pod is the one labelled `batch.kubernetes.io/job-name=<job>` (or the
  older `job-name`); its container is `dcgm-diag` (`node-health` for a node-health Job).

A packed run's Job (`readiness.packing: packed`, annotated `nvcregen.io/tests`) is an
Indexed Job with one pod per node of its chunk: every pod's log is read (the newest pod
of each completion index, container `tests`), each as its own log named after the pod,
with the node the API scheduled it on (`spec.nodeName`), and split into its tests'
sections by `results/packlogs.py`. A group pack's TrainJob is read as any TrainJob.

The newest pod of a run is read. Every call is retried (`nvcregen.cluster.retry`); a run
without a pod yet, or whose pod is gone (404), is a note and counts as missing (its
verdict is `incomplete`); any other failure stops the collection before anything is
written, as a failed LIST does.
"""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import quote

from nvcregen.cluster.client import Cluster, ClusterError, connect
from nvcregen.collect.client import ApiCallError, list_objects, read_text, unserved
from nvcregen.collect.model import CollectError, CollectOptions
from nvcregen.collect.requests import ListRequest, site_selector
from nvcregen.compile.readiness.mpi import LAUNCHER, NODE, PACK_CONTAINER
from nvcregen.core.fields import list_at
from nvcregen.core.labels import SERVER_LOG, TESTS
from nvcregen.ingest.limits import MAX_LOG_BYTES
from nvcregen.kindapi.registry import KINDS as TEST_KINDS
from nvcregen.results.liveobjects import Obj, Snapshot, labels_of, metadata
from nvcregen.results.logruns import RunLog
from nvcregen.spec.v1alpha1 import Site

JOBSET_NAME = "jobset.sigs.k8s.io/jobset-name"
REPLICATED_JOB = "jobset.sigs.k8s.io/replicatedjob-name"
JOB_NAME = ("batch.kubernetes.io/job-name", "job-name")
COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"
KINDS = ("TrainJob", "Job", "Pod")
# every per-node kind's container, in the registry's order (`dcgm-diag` first)


def read_cluster_logs(site: Site, options: CollectOptions) -> tuple[list[RunLog], Snapshot]:
    """The launcher and DCGM logs of a site's runs, and its TrainJobs and Jobs.

    Raises:
        CollectError: When the cluster cannot be reached, a listing cannot be completed,
            or a log cannot be read (other than a pod that is gone).

    """
    namespace, selector = site.spec.nvcre.namespace, site_selector(site)
    try:
        cluster = connect(options.context, options.kubeconfig, sleep=options.sleep)
        listings = [
            list_objects(
                cluster,
                ListRequest(kind, namespace, selector, options.page_size),
                options.policy,
                options.on_page,
            )
            for kind in KINDS
        ]
        runs = [o for listing in listings[:2] for o in listing.items]
        logs, notes = _read_logs(cluster, runs, listings[2].items, options)
    except ClusterError as exc:
        raise CollectError(str(exc)) from exc
    except ApiCallError as exc:
        raise CollectError(
            f"could not read the cluster completely, nothing archived: {exc}"
        ) from exc
    notes += unserved(listings)
    records = tuple(listing.record for listing in listings)
    snapshot = Snapshot(tuple(runs), f"context {cluster.context}", records, tuple(notes))
    return logs, snapshot


def _read_logs(
    cluster: Cluster, runs: Sequence[Obj], pods: Sequence[Obj], options: CollectOptions
) -> tuple[list[RunLog], list[str]]:
    logs: list[RunLog] = []
    notes: list[str] = []
    index = PodIndex(pods)  # one pass over the pods, not one per run
    for run in runs:
        meta = metadata(run)
        name, namespace = str(meta.get("name")), str(meta.get("namespace") or "")
        packed = is_packed_job(run)
        found = index.pods_of(run) if packed else [index.pod_of(run)]
        if not [pod for pod, _ in found if pod is not None]:
            notes.append(f"{run.get('kind')} {name}: no pod yet, no log")
            continue
        server = index.server_of(run)  # a pair run's server: its log is named after its pod
        for pod_obj, container in [*found, *([server] if server[0] is not None else [])]:
            assert pod_obj is not None
            pod = str(metadata(pod_obj).get("name"))
            path = f"/api/v1/namespaces/{quote(namespace)}/pods/{quote(pod)}/log"
            query = [("container", container), ("limitBytes", str(MAX_LOG_BYTES + 1))]
            data = read_text(cluster, path, query, options.policy)
            if data is None:
                notes.append(f"{run.get('kind')} {name}: pod {pod} is gone, no log")
                continue
            if len(data) > MAX_LOG_BYTES:  # what `ingest` reads at most: never judged past it
                limit = f"{MAX_LOG_BYTES // (1 << 20)} MiB"
                notes.append(
                    f"{run.get('kind')} {name}: the log of pod {pod} is over {limit}, not read"
                )
                continue
            named = pod if packed or pod_obj is server[0] else name
            logs.append(RunLog(namespace, named, data, node_of(pod_obj)))
    return logs, notes


def is_packed_job(run: Obj) -> bool:
    """Whether a run is a node pack's Indexed Job: a Job naming the tests it runs."""
    return run.get("kind") == "Job" and TESTS in (metadata(run).get("annotations") or {})


def node_of(pod: Obj) -> str:
    """The node a pod was scheduled on (`spec.nodeName`), "" when not yet or not said."""
    spec = pod.get("spec")
    return str(spec.get("nodeName") or "") if isinstance(spec, dict) else ""


class PodIndex:
    """The newest pod (by creation time, then name) of each TrainJob and Job, found once.

    A TrainJob's pods are the ones JobSet labels with its name (`jobset`, any replicated
    job; `launchers`, only its launcher's); a Job's, the ones labelled with its name.
    """

    def __init__(self, pods: Sequence[Obj]) -> None:
        self.jobsets: dict[str, Obj] = {}
        self.launchers: dict[str, Obj] = {}
        self.workers: dict[str, Obj] = {}
        self.jobs: dict[str, Obj] = {}
        self.indexed: dict[str, dict[str, Obj]] = {}
        for pod in pods:
            labels = labels_of(pod)
            if (jobset := labels.get(JOBSET_NAME)) is not None:
                _keep_newest(self.jobsets, jobset, pod)
                if labels.get(REPLICATED_JOB) == LAUNCHER:
                    _keep_newest(self.launchers, jobset, pod)
                elif labels.get(REPLICATED_JOB) == NODE:
                    _keep_newest(self.workers, jobset, pod)
            for job in {labels[key] for key in JOB_NAME if key in labels}:
                _keep_newest(self.jobs, job, pod)
                index = labels.get(COMPLETION_INDEX)
                if index is not None:
                    _keep_newest(self.indexed.setdefault(job, {}), index, pod)

    def pod_of(self, run: Obj) -> tuple[Obj | None, str]:
        """The newest pod whose log holds a run's results, and the container to read."""
        name = str(metadata(run).get("name"))
        if run.get("kind") == "TrainJob":
            return self.launchers.get(name), NODE
        return self.jobs.get(name), _job_container(run)

    def server_of(self, run: Obj) -> tuple[Obj | None, str]:
        """A pair run's server pod (its TrainJob says its `node` pod's log is evidence).

        None for any other run: an MPI worker's log is sshd's, not a result.
        """
        annotations = metadata(run).get("annotations") or {}
        if run.get("kind") != "TrainJob" or annotations.get(SERVER_LOG) != NODE:
            return None, NODE
        return self.workers.get(str(metadata(run).get("name"))), NODE

    def pods_of(self, run: Obj) -> list[tuple[Obj | None, str]]:
        """A packed Job's pods, the newest of each completion index, and their container."""
        found = self.indexed.get(str(metadata(run).get("name")), {})
        return [(found[i], PACK_CONTAINER) for i in sorted(found, key=_index_order)]


def _index_order(index: str) -> tuple[int, str]:
    return (int(index), "") if index.isdigit() and len(index) < 10 else (1 << 31, index)


def _keep_newest(found: dict[str, Obj], key: str, pod: Obj) -> None:
    if key not in found or _age(found[key]) < _age(pod):
        found[key] = pod


def _age(pod: Obj) -> tuple[str, str]:
    meta = metadata(pod)
    return str(meta.get("creationTimestamp") or ""), str(meta.get("name"))


def _job_container(job: Obj) -> str:
    """The per-node kind's container a Job names (`dcgm-diag`, `node-health`), else DCGM's."""
    containers = list_at(job, "spec", "template", "spec", "containers")
    names = {c.get("name") for c in containers if isinstance(c, dict)}
    # asked when a Job is read, not at import: the registry loads every kind then
    known = [k.node_container for k in TEST_KINDS.values() if k.node_container]
    return next((c for c in known if c in names), known[0])
