"""What `nvcregen collect` reads and deletes for a site: plain requests, no I/O.

A site's readiness objects (Certifications, WorkloadRuns) carry the label
`nvcregen.io/site`, so they are listed with a label selector. Everything NVCRE makes
from them is found by ownership instead, since NVCRE does not copy our labels onto
Workflows, measurements or ConfigMaps (only onto TrainJobs, via workloadMetadata). So a
collection is two passes:

1. `owner_requests`: the site's Certifications and WorkloadRuns, and the Workflows in
   NVCRE's namespace (their owners are checked afterwards);
2. `result_requests`: BandwidthMeasurements and GoodputMeasurements in that namespace
   and in every namespace the site's Workflows run Jobs in; ConfigMaps (node results,
   report snapshots) and ReportExports in NVCRE's namespace, where their owners are.

`reclaim_requests` names what `--reclaim` may delete: the Certifications and
WorkloadRuns that carry this site's label, and every archived object they own (through
ownerReferences, at any depth: Workflows, measurements, ConfigMaps), each pinned to the
uid and resourceVersion archived, the deepest first. Every DELETE orphans what it does
not name (`propagationPolicy: Orphan`): garbage collection never removes an object the
archive does not hold, or holds in another version (issue #20: a Workflow changed after
it was listed was deleted with its owner). What NVCRE made and nvcregen does not archive
(Jobs, their pods) is left.

`export_requests` lists a Certification's ReportExports by their source label, a second
read that `--reclaim` compares with the archive (`collector.py`). NVCRE labels each
ReportExport with its source's uid and creates it in its reporting namespace, which the
Certification's `nvcre.nvidia.com/report-export-bindings` annotation names (a JSON
`{"namespace": ..., "name": ...}` reference to the frozen policy bindings).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from nvcregen.core.kube import name_problem
from nvcregen.core.labels import SITE
from nvcregen.core.nvcre import NVCRE_API
from nvcregen.results.liveobjects import labels_of, metadata, owner_uids
from nvcregen.results.select import OWNER_KINDS
from nvcregen.spec.v1alpha1 import Site

PAGE_SIZE = 250  # objects per LIST page: small enough for large status blocks
# kind -> (apiVersion, plural); the collector's RBAC (compile/platform.py) grants these.
RESOURCES: dict[str, tuple[str, str]] = {
    "Certification": (NVCRE_API, "certifications"),
    "WorkloadRun": (NVCRE_API, "workloadruns"),
    "Workflow": (NVCRE_API, "workflows"),
    "BandwidthMeasurement": (NVCRE_API, "bandwidthmeasurements"),
    "GoodputMeasurement": (NVCRE_API, "goodputmeasurements"),
    "ReportExport": (NVCRE_API, "reportexports"),
    "ConfigMap": ("v1", "configmaps"),
    # trainer mode: the runs and their pods, whose logs are the results
    "TrainJob": ("trainer.kubeflow.org/v1alpha1", "trainjobs"),
    "Job": ("batch/v1", "jobs"),
    "Pod": ("v1", "pods"),
}
RECLAIMABLE = frozenset(OWNER_KINDS)
REPORT_SOURCE_UID = "nvcre.nvidia.com/report-source-uid"  # NVCRE's label on a ReportExport
REPORT_BINDINGS = "nvcre.nvidia.com/report-export-bindings"  # on a registered Certification


def _collection_path(api_version: str, plural: str, namespace: str | None) -> str:
    base = f"/apis/{api_version}" if "/" in api_version else f"/api/{api_version}"
    scope = f"/namespaces/{quote(namespace, safe='')}" if namespace else ""
    return f"{base}{scope}/{plural}"


@dataclass(frozen=True)
class ListRequest:
    """One paginated LIST: a kind in one namespace (None: all namespaces), maybe by label."""

    kind: str
    namespace: str | None
    label_selector: str = ""
    limit: int = PAGE_SIZE

    @property
    def api_version(self) -> str:
        """The kind's apiVersion."""
        return RESOURCES[self.kind][0]

    @property
    def plural(self) -> str:
        """The kind's resource name."""
        return RESOURCES[self.kind][1]

    def path(self) -> str:
        """The collection's URL path."""
        return _collection_path(self.api_version, self.plural, self.namespace)

    def query(self, continue_token: str = "") -> list[tuple[str, str]]:
        """The query of one page: `limit`, the label selector, and the continue token."""
        query = [("limit", str(self.limit))]
        if self.label_selector:
            query.append(("labelSelector", self.label_selector))
        if continue_token:
            query.append(("continue", continue_token))
        return query

    def __str__(self) -> str:
        where = f" in {self.namespace}" if self.namespace else " in all namespaces"
        selector = f" ({self.label_selector})" if self.label_selector else ""
        return f"{self.plural}{where}{selector}"


@dataclass(frozen=True)
class DeleteRequest:
    """One DELETE of an archived object, only if it is still the version archived."""

    kind: str
    namespace: str
    name: str
    uid: str
    resource_version: str
    owners: tuple[str, ...] = ()  # uids of the archived objects that own it

    def path(self) -> str:
        """The object's URL path."""
        api_version, plural = RESOURCES[self.kind]
        return f"{_collection_path(api_version, plural, self.namespace)}/{quote(self.name)}"

    def body(self) -> dict[str, Any]:
        """DeleteOptions: no cascade; preconditions pin the archived uid and version.

        A changed object (a new resourceVersion) or a new object under the same name (a
        new uid) makes the server answer 409 Conflict and delete nothing. `Orphan`: what
        the object owns is never deleted by garbage collection, only by its own DELETE.
        """
        preconditions = {"uid": self.uid}
        if self.resource_version:
            preconditions["resourceVersion"] = self.resource_version
        return {
            "apiVersion": "v1",
            "kind": "DeleteOptions",
            "propagationPolicy": "Orphan",
            "preconditions": preconditions,
        }

    def __str__(self) -> str:
        return f"{self.kind} {self.namespace}/{self.name}"


def site_selector(site: Site) -> str:
    """The label selector of a site's readiness objects."""
    return f"{SITE}={site.metadata.name}"


def owner_requests(site: Site, limit: int = PAGE_SIZE) -> tuple[ListRequest, ...]:
    """First pass: the site's Certifications and WorkloadRuns, and NVCRE's Workflows."""
    namespace = site.spec.nvcre.namespace
    selector = site_selector(site)
    return (
        ListRequest("Certification", namespace, selector, limit),
        ListRequest("WorkloadRun", namespace, selector, limit),
        ListRequest("Workflow", namespace, limit=limit),
    )


def job_namespaces(workflows: Iterable[Mapping[str, Any]]) -> set[str]:
    """Namespaces the Workflows run their Jobs in (spec.namespace, status.namespace)."""
    found: set[str] = set()
    for workflow in workflows:
        for part in ("spec", "status"):
            section = workflow.get(part)
            if isinstance(section, Mapping) and section.get("namespace"):
                found.add(str(section["namespace"]))
    return found


def site_namespaces(site: Site, workflows: Iterable[Mapping[str, Any]]) -> set[str]:
    """NVCRE's namespace and those the site's Workflows run their Jobs in."""
    return {site.spec.nvcre.namespace} | job_namespaces(workflows)


def result_requests(
    site: Site, workflows: Iterable[Mapping[str, Any]], limit: int = PAGE_SIZE
) -> tuple[ListRequest, ...]:
    """Second pass: measurements, node-result and snapshot ConfigMaps, ReportExports.

    Args:
        site: The site.
        workflows: The site's Workflows from the first pass.
        limit: Objects per page.

    Returns:
        The LIST requests, measurements first, in a stable order.

    """
    home = site.spec.nvcre.namespace
    namespaces = sorted(site_namespaces(site, workflows))
    measurements = [
        ListRequest(kind, ns, limit=limit)
        for kind in ("BandwidthMeasurement", "GoodputMeasurement")
        for ns in namespaces
    ]
    rest = (
        ListRequest("ConfigMap", home, limit=limit),
        ListRequest("ReportExport", home, limit=limit),
    )
    return (*measurements, *rest)


def reclaim_requests(site: Site, archived: Iterable[Mapping[str, Any]]) -> list[DeleteRequest]:
    """DELETEs for the site's archived owners and what they own in the archive, deepest first.

    Owners: Certifications and WorkloadRuns with this site's label in its NVCRE
    namespace, with a uid (an object without one was not read from a cluster). Then
    every archived object of a kind collect reads whose ownerReferences reach an owner,
    in the same namespace, with a uid. Each request names its archived owners, so a
    caller keeps an owner whose dependents were not all deleted.
    """
    objects = [o for o in archived if metadata(o).get("uid") and o.get("kind") in RESOURCES]
    depth: dict[str, int] = {}
    for obj in objects:
        meta = metadata(obj)
        if (
            obj.get("kind") in RECLAIMABLE
            and labels_of(obj).get(SITE) == site.metadata.name
            and meta.get("namespace") == site.spec.nvcre.namespace
        ):
            depth[str(meta["uid"])] = 0
    namespace = {str(metadata(o)["uid"]): metadata(o).get("namespace") for o in objects}
    changed = True
    while changed:  # owned objects, level by level (a cycle of owners never settles deeper)
        changed = False
        for obj in objects:
            uid = str(metadata(obj)["uid"])
            owners = [u for u in owner_uids(obj) if u in depth and namespace[u] == namespace[uid]]
            level = 1 + max((depth[u] for u in owners), default=-1) if owners else None
            if level is not None and uid not in depth and level <= len(objects):
                depth[uid] = level
                changed = True
    requests = []
    for obj in objects:
        meta = metadata(obj)
        uid = str(meta["uid"])
        if uid not in depth:
            continue
        request = DeleteRequest(
            str(obj["kind"]),
            str(meta.get("namespace") or ""),
            str(meta["name"]),
            uid,
            str(meta.get("resourceVersion") or ""),
            tuple(sorted(u for u in owner_uids(obj) if u in depth and depth[u] < depth[uid])),
        )
        requests.append((-depth[uid], request))
    return [r for _, r in sorted(requests, key=lambda p: (p[0], p[1].kind, p[1].name))]


def export_requests(
    owners: Iterable[Mapping[str, Any]], limit: int = PAGE_SIZE
) -> tuple[list[ListRequest], list[str]]:
    """One LIST per Certification: its ReportExports, by NVCRE's source label.

    Listed in the reporting namespace its bindings annotation names, else in its own.

    Returns:
        The requests, and one problem per Certification whose annotation is unreadable.

    """
    requests, problems = [], []
    for obj in owners:
        meta = metadata(obj)
        if obj.get("kind") != "Certification" or not meta.get("uid"):
            continue
        namespace = report_namespace(obj)
        if namespace is None:
            problems.append(
                f"Certification {meta.get('namespace')}/{meta.get('name')}: its {REPORT_BINDINGS}"
                " annotation cannot be read"
            )
            continue
        selector = f"{REPORT_SOURCE_UID}={meta['uid']}"
        requests.append(ListRequest("ReportExport", namespace, selector, limit))
    return requests, problems


def report_namespace(certification: Mapping[str, Any]) -> str | None:
    """Where a Certification's ReportExports are: its bindings' namespace, else its own.

    None when the annotation is there but is not a reference with a valid namespace name.
    """
    meta = metadata(certification)
    annotations = meta.get("annotations")
    raw = annotations.get(REPORT_BINDINGS) if isinstance(annotations, Mapping) else None
    if raw is None:
        return str(meta.get("namespace") or "")
    try:
        hint = json.loads(str(raw)[:4096])
    except (ValueError, RecursionError):
        return None
    found = hint.get("namespace") if isinstance(hint, dict) else None
    if not isinstance(found, str) or name_problem("ReportExport", found, "x") is not None:
        return None
    return found
