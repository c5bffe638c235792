"""Which of the objects read belong to a site (pure): by label, then by ownership.

Certifications and WorkloadRuns carry the site's label. A Workflow belongs to the site
when one of them owns it or names it in its status (`workflowRef`). A measurement
belongs when a site Workflow owns it or ran the Job it measures. A ConfigMap belongs
when a site object names it (`failedNodesRef`, `succeededNodesRef`), a site Workflow
owns it, or it is the snapshot of a site ReportExport. A ReportExport belongs when its
`spec.sourceRef` is a site Certification. Everything else read is left out of the
archive.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from nvcregen.core.labels import SITE
from nvcregen.core.nvcre import NVCRE_API
from nvcregen.results.liveobjects import Obj, labels_of, metadata, owner_uids, status_of, uid_of
from nvcregen.spec.v1alpha1 import Site

OWNER_KINDS = ("Certification", "WorkloadRun")  # labelled with the site; own what NVCRE makes
NODE_REFS = ("failedNodesRef", "succeededNodesRef")


@dataclass(frozen=True)
class SiteObjects:
    """A site's objects by kind, each tuple in the order read."""

    owners: tuple[Obj, ...] = ()
    workflows: tuple[Obj, ...] = ()
    bandwidth: tuple[Obj, ...] = ()
    goodput: tuple[Obj, ...] = ()
    configmaps: tuple[Obj, ...] = ()
    exports: tuple[Obj, ...] = ()

    def all(self) -> tuple[Obj, ...]:
        """Every object of the site."""
        return (
            self.owners
            + self.workflows
            + self.bandwidth
            + self.goodput
            + self.configmaps
            + self.exports
        )


def _of_kind(objects: Iterable[Obj], kind: str) -> list[Obj]:
    return [o for o in objects if o.get("kind") == kind and o.get("apiVersion") == NVCRE_API]


def select_owners(site: Site, objects: Iterable[Obj]) -> list[Obj]:
    """The site's Certifications and WorkloadRuns: those labelled with its name."""
    return [
        o
        for kind in OWNER_KINDS
        for o in _of_kind(objects, kind)
        if labels_of(o).get(SITE) == site.metadata.name
    ]


def _status_refs(obj: Mapping[str, Any], field: str) -> Iterator[Mapping[str, Any]]:
    """`status.<field>` and `status.categoryStatuses[].<field>` references of an object."""
    status = status_of(obj)
    entries = [status, *(c for c in status.get("categoryStatuses") or [] if isinstance(c, dict))]
    for entry in entries:
        ref = entry.get(field)
        if isinstance(ref, Mapping) and ref.get("name"):
            yield ref


def _local(obj: Mapping[str, Any], ref: Mapping[str, Any]) -> tuple[str, str]:
    """(namespace, name) of a reference; a reference without a namespace is local."""
    namespace = ref.get("namespace") or metadata(obj).get("namespace") or ""
    return str(namespace), str(ref["name"])


def _where(obj: Mapping[str, Any]) -> tuple[str, str]:
    meta = metadata(obj)
    return str(meta.get("namespace") or ""), str(meta.get("name") or "")


def select_workflows(owners: Iterable[Obj], objects: Iterable[Obj]) -> list[Obj]:
    """Workflows a site object owns or names in its status."""
    owners = list(owners)
    uids = {uid_of(o) for o in owners} - {""}
    named = {_local(o, ref) for o in owners for ref in _status_refs(o, "workflowRef")}
    return [w for w in _of_kind(objects, "Workflow") if owner_uids(w) & uids or _where(w) in named]


def workflow_jobs(workflow: Mapping[str, Any]) -> dict[str, tuple[int | None, str]]:
    """Job name -> (iteration, group) for every Job a Workflow's status names.

    Completed iterations are in `orchestration.iterationHistory`; the last one stays
    in `orchestration.groups` (its iteration is `currentIteration`).
    """
    orchestration = status_of(workflow).get("orchestration") or {}
    jobs: dict[str, tuple[int | None, str]] = {}
    for past in orchestration.get("iterationHistory") or []:
        for group in past.get("groups") or []:
            if group.get("jobName"):
                jobs[str(group["jobName"])] = (past.get("iteration"), str(group.get("name", "")))
    current = orchestration.get("currentIteration") or orchestration.get("completedIterations")
    for group in orchestration.get("groups") or []:
        job = (group.get("jobRef") or {}).get("name")
        if job and job not in jobs:
            jobs[str(job)] = (current, str(group.get("name", "")))
    return jobs


def _measurements(kind: str, workflows: list[Obj], objects: Iterable[Obj]) -> list[Obj]:
    uids = {uid_of(w) for w in workflows} - {""}
    jobs = {job for w in workflows for job in workflow_jobs(w)}
    selected = []
    for m in _of_kind(objects, kind):
        job = ((m.get("spec") or {}).get("jobRef") or {}).get("name")
        if owner_uids(m) & uids or (job and job in jobs):
            selected.append(m)
    return selected


def _exports(certifications: list[Obj], objects: Iterable[Obj]) -> list[Obj]:
    uids = {uid_of(c) for c in certifications} - {""}
    places = {_where(c) for c in certifications}
    selected = []
    for export in _of_kind(objects, "ReportExport"):
        source = (export.get("spec") or {}).get("sourceRef") or {}
        uid = str(source.get("uid") or "")
        place = (str(source.get("namespace") or ""), str(source.get("name") or ""))
        if uid in uids or (not uid and place in places):
            selected.append(export)
    return selected


def _configmaps(
    referrers: list[Obj], workflows: list[Obj], exports: list[Obj], objects: Iterable[Obj]
) -> list[Obj]:
    named = {_local(o, ref) for o in referrers for f in NODE_REFS for ref in _status_refs(o, f)}
    named |= {_local(e, ref) for e in exports for ref in _status_refs(e, "snapshotRef")}
    uids = {uid_of(o) for o in [*workflows, *exports]} - {""}
    return [
        cm
        for cm in objects
        if cm.get("kind") == "ConfigMap" and (_where(cm) in named or owner_uids(cm) & uids)
    ]


def select_site_objects(site: Site, objects: Iterable[Obj]) -> SiteObjects:
    """Every object of a site among `objects`, by kind."""
    objects = list(objects)
    owners = select_owners(site, objects)
    workflows = select_workflows(owners, objects)
    certifications = [o for o in owners if o.get("kind") == "Certification"]
    exports = _exports(certifications, objects)
    return SiteObjects(
        owners=tuple(owners),
        workflows=tuple(workflows),
        bandwidth=tuple(_measurements("BandwidthMeasurement", workflows, objects)),
        goodput=tuple(_measurements("GoodputMeasurement", workflows, objects)),
        configmaps=tuple(_configmaps([*owners, *workflows], workflows, exports, objects)),
        exports=tuple(exports),
    )
