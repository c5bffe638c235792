"""NVCRE mode from a cluster: the node-health logs of the TrainJobs NVCRE created (collect).

NVCRE copies a WorkloadRun's `workloadMetadata.labels` onto the TrainJob it creates and
onto nothing else (nvcre-api.md 1.1), and nvcregen puts the site and test labels there.
So the site's node-health runs are the TrainJobs labelled `nvcregen.io/site=SITE` whose
`nvcregen.io/test` is a node-health test, in the site's namespace and the namespaces its
Workflows run their Jobs in; their pods are the ones JobSet labels
`jobset.sigs.k8s.io/jobset-name=<trainjob>` (the label Kueue also selects a TrainJob's
pods by). NVCRE does not document the name of its exec framework's container, so a pod's
log is read only when the pod has one container, or one named `node` (Trainer's); any
other pod is a note, its run missing. The newest pod of each TrainJob is read, at most
`MAX_BYTES` of it (the API's `limitBytes`): a longer log is a note, never judged.
Every call is retried as a LIST is; a LIST that cannot be completed stops the collection.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from urllib.parse import quote

from nvcregen.cluster.client import Cluster
from nvcregen.collect.client import Listing, list_objects, read_text, unserved
from nvcregen.collect.model import CollectOptions
from nvcregen.collect.nodelogs import MAX_BYTES
from nvcregen.collect.podlogs import JOBSET_NAME, PodIndex, node_of
from nvcregen.collect.requests import ListRequest, site_selector
from nvcregen.compile.readiness.mpi import NODE
from nvcregen.core.labels import TEST
from nvcregen.results.liveobjects import Obj, labels_of, metadata
from nvcregen.results.logruns import RunLog
from nvcregen.results.nodekinds import is_node_log
from nvcregen.spec.v1alpha1 import Site


def runs_created(owners: Iterable[Obj], tests: Iterable[str]) -> dict[str, datetime]:
    """When the oldest of the site's WorkloadRuns of each node-health test was created.

    A TrainJob made before it belongs to an earlier run (a reclaim leaves them behind):
    its log is no evidence for this one. A WorkloadRun without a readable
    `creationTimestamp` (the API server always sets it) gives its test no bound: nothing
    of that test is then judged.
    """
    wanted = frozenset(tests)
    found: dict[str, datetime] = {}
    for owner in owners:
        test = labels_of(owner).get(TEST)
        created = _created(owner)
        if owner.get("kind") != "WorkloadRun" or test not in wanted or created is None:
            continue
        found[test] = min(created, found.get(test, created))
    return found


def _created(obj: Obj) -> datetime | None:
    text = metadata(obj).get("creationTimestamp")
    try:
        return datetime.fromisoformat(str(text)) if text else None
    except ValueError:
        return None


def read_nvcre_node_health_logs(
    site: Site,
    since: Mapping[str, datetime],
    namespaces: Iterable[str],
    cluster: Cluster,
    options: CollectOptions,
) -> tuple[list[RunLog], list[str]]:
    """The node-health logs of a site's NVCRE TrainJobs, and notes on runs without one.

    Args:
        site: The site.
        since: Its node-health tests, each with when its WorkloadRun was created
            (`runs_created`); nothing is read when there are none, and a TrainJob made
            before its test's WorkloadRun is a note, never read.
        namespaces: Where NVCRE's TrainJobs may be: the site's namespace and its
            Workflows' Job namespaces.
        cluster: The cluster.
        options: Page size, retries and the page hook.

    Raises:
        ApiCallError: When a listing cannot be completed or a log cannot be read (other
            than a pod that is gone).

    """
    if not since:
        return [], []
    logs: list[RunLog] = []
    notes: list[str] = []
    for namespace in sorted(set(namespaces)):
        runs = []
        listing = _list(cluster, "TrainJob", namespace, site_selector(site), options)
        if not listing.record.served:  # Trainer is not installed: no run, and it says why
            return [], unserved([listing])
        for run in listing.items:
            bound = since.get(labels_of(run).get(TEST) or "")
            if bound is None:
                continue
            created = _created(run)
            if created is None or created < bound:
                test = labels_of(run).get(TEST)
                name = metadata(run).get("name")
                notes.append(f"TrainJob {name}: made before the WorkloadRun of {test}, not read")
                continue
            runs.append(run)
        if not runs:
            continue
        pods = PodIndex(_list(cluster, "Pod", namespace, JOBSET_NAME, options).items).jobsets
        for run in sorted(runs, key=lambda r: str(metadata(r).get("name"))):
            log, note = _read(cluster, namespace, run, pods, options)
            if log is not None:
                logs.append(log)
            if note:
                notes.append(note)
    return logs, notes


def _list(
    cluster: Cluster, kind: str, namespace: str, selector: str, options: CollectOptions
) -> Listing:
    request = ListRequest(kind, namespace, selector, options.page_size)
    return list_objects(cluster, request, options.policy, options.on_page)


def _read(
    cluster: Cluster, namespace: str, run: Obj, pods: Mapping[str, Obj], options: CollectOptions
) -> tuple[RunLog | None, str]:
    """One TrainJob's log (`pods`: the newest pod of each TrainJob), or None and why not."""
    name = str(metadata(run).get("name"))
    pod = pods.get(name)
    if pod is None:
        return None, f"TrainJob {name}: no pod yet, no node-health log"
    pod_name = str(metadata(pod).get("name"))
    container = log_container(pod)
    if container is None:
        return None, (
            f"TrainJob {name}: pod {pod_name} has several containers and none is `{NODE}`;"
            " save its log with `kubectl logs` and collect with --from"
        )
    path = f"/api/v1/namespaces/{quote(namespace)}/pods/{quote(pod_name)}/log"
    query = [("container", container), ("limitBytes", str(MAX_BYTES + 1))]
    data = read_text(cluster, path, query, options.policy)
    if data is None:
        return None, f"TrainJob {name}: pod {pod_name} is gone, no node-health log"
    if len(data) > MAX_BYTES:
        limit = f"{MAX_BYTES // (1 << 20)} MiB"
        return None, f"TrainJob {name}: the log of pod {pod_name} is over {limit}, not judged"
    if not is_node_log(data):
        return None, f"TrainJob {name}: the log of pod {pod_name} holds no node-health output"
    return RunLog(namespace, name, data, node_of(pod)), ""


def log_container(pod: Obj) -> str | None:
    """The container whose log is read: the only one, else the one named `node`."""
    spec = pod.get("spec")
    containers = spec.get("containers") if isinstance(spec, dict) else None
    names = [c.get("name") for c in containers or [] if isinstance(c, dict)]
    names = [n for n in names if isinstance(n, str) and n]
    if len(names) == 1:
        return names[0]
    return NODE if NODE in names else None


class NvcreNodeLogs:
    """The node-health logs of the TrainJobs NVCRE creates (`collect.engineparts.NodeLogs`)."""

    def runs_created(self, owners: Iterable[Obj], tests: Iterable[str]) -> dict[str, datetime]:
        """When the oldest of the site's WorkloadRuns of each node-health test was created."""
        return runs_created(owners, tests)

    def read(
        self,
        site: Site,
        since: Mapping[str, datetime],
        namespaces: Iterable[str],
        cluster: Cluster,
        options: CollectOptions,
    ) -> tuple[list[RunLog], list[str]]:
        """The node-health logs of the site's runs made since then, and notes."""
        return read_nvcre_node_health_logs(site, since, namespaces, cluster, options)


NODE_LOGS = NvcreNodeLogs()
