"""`nvcregen collect`: read a site's results, judge them, archive them, reclaim if asked.

    load the site          -> Site, its file's sha256, the planned test units
    read                   -> every object (cluster: two passes of paginated LISTs; or a folder)
    select                 -> the site's objects (labels, then ownership)
    assemble, judge        -> runs with their rounds; pass / fail / incomplete verdicts
    archive                -> results/<site>/<run-id>/, atomic, never overwritten, verified
    reclaim (--reclaim)    -> DELETE the site's Certifications and WorkloadRuns and what
                              they own in the archive, each pinned to the version archived,
                              only when every listing was complete, the archive verified
                              and holds them, every object they name was read, every
                              ReportExport of theirs is archived, no run is still going
                              and no verdict is incomplete

A read that cannot be completed stops before anything is written: a partial read is
never archived.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace
from pathlib import Path

from nvcregen.catalog.load import load_catalog
from nvcregen.chain.sites import SITES_DIR, display_path, site_root
from nvcregen.cluster.client import Cluster, ClusterError, connect
from nvcregen.cluster.retry import RetryPolicy
from nvcregen.collect.client import (
    ApiCallError,
    DeleteOutcome,
    delete_object,
    list_objects,
    unserved,
)
from nvcregen.collect.completeness import missing_objects
from nvcregen.collect.engineparts import node_logs, own_collector
from nvcregen.collect.model import CollectError, CollectOptions, CollectOutcome, LoadedSite
from nvcregen.collect.nodedrift import drift_notes, saved_drift_notes
from nvcregen.collect.nodelogs import saved_node_health_logs
from nvcregen.collect.requests import (
    export_requests,
    owner_requests,
    reclaim_requests,
    result_requests,
    site_namespaces,
)
from nvcregen.collect.signing import sign_archive, signature_note, signing_key
from nvcregen.collect.source import SourceError, read_folder
from nvcregen.core import codes
from nvcregen.core.atomicfile import FileWriteError
from nvcregen.core.errors import NvcregenError
from nvcregen.engineapi.registry import readiness_of
from nvcregen.kindapi.registry import kind_of
from nvcregen.results.archive import (
    Archive,
    Written,
    archived_objects,
    build_archive,
    run_id,
    write_archive,
)
from nvcregen.results.archivefiles import SiteFile, provenance, summary, texts
from nvcregen.results.attestation import collection_time
from nvcregen.results.examine import examine
from nvcregen.results.liveobjects import Obj, Snapshot, content_digest, metadata
from nvcregen.results.logruns import LogRecord, RunLog
from nvcregen.results.models import RunState
from nvcregen.results.nodekinds import judge_nvcre_logs
from nvcregen.results.runs import RunSet, assemble_runs
from nvcregen.results.select import (
    SiteObjects,
    select_owners,
    select_site_objects,
    select_workflows,
)
from nvcregen.results.verdicts import Verdicts, Word, judge
from nvcregen.spec.load import read_site_bytes
from nvcregen.spec.v1alpha1 import Site
from nvcregen.validate.site import load_site


def collect(options: CollectOptions) -> CollectOutcome:
    """Collect, judge and archive one site's results; reclaim its objects if asked.

    Raises:
        CollectError: When the site is invalid, the folder cannot be read, the cluster
            cannot be read completely, or the archive cannot be written; nothing is
            archived then.

    """
    if options.reclaim and options.from_dir is not None:
        raise CollectError("--reclaim deletes from a cluster: it cannot be used with a folder")
    key = signing_key(options.sign_key)  # a wrong key stops it before anything is read
    loaded = load_site_file(options.root, options.site)
    # the live nodes against the site's inventory (saved nodes: once the folder is read)
    drift = drift_notes(loaded, options, lambda: _connect(options))
    own = own_collector(readiness_of(loaded.plan.site))
    if own is not None:  # results the engine collects itself (trainer mode: pod logs)
        found = own.collect(loaded, options, key)
        return replace(found, notes=found.notes + drift)
    if options.period is not None:
        raise CollectError("--period: NVCRE mode has no periodic runs (readiness.periodic)")
    cluster = None if options.from_dir is not None else _connect(options)
    snapshot = (
        read_folder_or_fail(options.from_dir)
        if cluster is None
        else read_cluster(loaded.plan.site, cluster, options)
    )
    if cluster is None:
        drift = saved_drift_notes(loaded, snapshot.objects)
    objects = select_site_objects(loaded.plan.site, snapshot.objects)  # labels, then owners
    # runs and their rounds, per planned test; a round that finished after now is refused
    runs = assemble_runs(loaded.plan.units, objects, collection_time())
    namespace = loaded.plan.site.spec.nvcre.namespace
    logs: list[RunLog] = []
    log_notes: list[str] = []
    if options.from_dir is not None:
        logs = saved_node_health_logs(options.from_dir, namespace)
    elif cluster is not None:
        logs, log_notes = _cluster_node_health_logs(loaded, cluster, objects, options)
    runs, health = judge_nvcre_logs(loaded.plan.units, runs, logs)  # nvidia-smi, per node
    verdicts = judge(
        loaded.plan.site, runs, examine(loaded.plan.units, loaded.plan.catalog, runs, health)
    )
    site_objects = list(objects.all())
    try:
        archive = sign_archive(
            _archive(loaded.file, snapshot, site_objects, runs, verdicts, (logs, health)),
            key,
            loaded,
            verdicts,
        )
    except ValueError as exc:  # two objects on one path, or a name unusable as a path
        raise CollectError(f"nothing archived: {exc}") from exc
    site_dir = options.out_dir / loaded.plan.site.metadata.name
    try:
        written = write_archive(site_dir, archive)  # atomic; an existing run is kept
    except FileWriteError as exc:  # a link on the way: nothing written there
        raise CollectError(str(exc)) from exc
    except OSError as exc:
        raise CollectError(f"cannot write the archive under {site_dir}: {exc}") from exc
    notes = (*snapshot.notes, *log_notes, *written.notes, *drift)
    signature = signature_note(key, written)
    outcome = CollectOutcome(
        loaded.plan.site.metadata.name, written, verdicts, notes=notes, signature=signature
    )
    if not options.reclaim or cluster is None:
        return outcome  # reading never changes the cluster
    read = Read(snapshot, site_objects, runs, verdicts)
    deleted, problems = reclaim(loaded.plan.site, cluster, written, read, options.policy)
    return CollectOutcome(
        outcome.site, written, verdicts, tuple(deleted), tuple(problems), notes, signature
    )


def load_site_file(root: Path, given: str) -> LoadedSite:
    """Load, validate and plan a site named by file or by name (`sites/<name>.yaml`).

    Raises:
        CollectError: When no such site exists, or it is invalid (with diagnostics).

    """
    path = Path(given)
    if not path.is_file():
        found = [root / SITES_DIR / f"{given}{s}" for s in (".yaml", ".yml")]
        path = next((p for p in found if p.is_file()), path)
    if not path.is_file():
        raise CollectError(f"no site '{given}': neither a file nor {SITES_DIR}/{given}.yaml")
    project = site_root(path, root)  # as render finds it: names and spec.inventory from here
    shown = display_path(path, project)  # the same from any directory
    raw, diags = read_site_bytes(path, shown)
    try:
        catalog = load_catalog()
    except NvcregenError as exc:
        raise CollectError("the catalog cannot be loaded", exc.diagnostics) from exc
    loaded = load_site(raw, shown, catalog, root=project) if raw is not None else None
    if loaded is None or loaded.plan is None:
        raise CollectError(f"{shown} is not a valid site", loaded.diagnostics if loaded else diags)
    sha = hashlib.sha256(raw or b"").hexdigest()
    return LoadedSite(loaded.plan, SiteFile(loaded.plan.name, shown, sha))


def _connect(options: CollectOptions) -> Cluster:
    try:
        return connect(options.context, options.kubeconfig, sleep=options.sleep)
    except ClusterError as exc:
        raise CollectError(str(exc)) from exc


def _cluster_node_health_logs(
    loaded: LoadedSite, cluster: Cluster, objects: SiteObjects, options: CollectOptions
) -> tuple[list[RunLog], list[str]]:
    """NVCRE mode's node-health logs, read by its engine from the pods of the runs it made.

    Only in the namespaces of the site's own Workflows, and only runs made since the
    site's WorkloadRun of their test was: a reclaim leaves earlier runs behind. None for
    an engine that makes no node-health runs of its own.
    """
    site = loaded.plan.site
    reader = node_logs(readiness_of(site))
    if reader is None:
        return [], []
    tests = {u.test.name for u in loaded.plan.units if kind_of(u.test).node_health}
    namespaces = site_namespaces(site, objects.workflows)
    since = reader.runs_created(objects.owners, tests)
    try:
        return reader.read(site, since, namespaces, cluster, options)
    except ApiCallError as exc:
        raise CollectError(
            f"could not read the node-health logs completely, nothing archived: {exc}"
        ) from exc


def read_folder_or_fail(folder: Path | None) -> Snapshot:
    """The objects exported to a folder, or a CollectError naming every problem."""
    assert folder is not None
    try:
        return read_folder(folder)
    except SourceError as exc:
        raise CollectError("\n".join(exc.problems)) from exc


def read_cluster(site: Site, cluster: Cluster, options: CollectOptions) -> Snapshot:
    """Read a site's objects from a cluster in two passes (see `collect/requests.py`).

    Raises:
        CollectError: When any listing cannot be completed; nothing is returned then.

    """
    policy, on_page, limit = options.policy, options.on_page, options.page_size
    try:
        first = [list_objects(cluster, r, policy, on_page) for r in owner_requests(site, limit)]
        read = [item for listing in first for item in listing.items]
        workflows = select_workflows(select_owners(site, read), read)
        second = [
            list_objects(cluster, r, policy, on_page)
            for r in result_requests(site, workflows, limit)
        ]
    except ApiCallError as exc:
        raise CollectError(
            f"could not read the cluster completely, nothing archived: {exc}"
        ) from exc
    listings = first + second
    notes = tuple(unserved(listings))
    objects = tuple(item for listing in listings for item in listing.items)
    records = tuple(listing.record for listing in listings)
    return Snapshot(objects, f"context {cluster.context}", records, notes)


def _archive(
    site: SiteFile,
    snapshot: Snapshot,
    objects: list[Obj],
    runs: RunSet,
    verdicts: Verdicts,
    health: tuple[list[RunLog], tuple[LogRecord, ...]] = ([], ()),
) -> Archive:
    logs, records = health
    run = run_id(objects, site.sha256 + "".join(f":{r.path}:{r.sha256}" for r in records))
    # node-health logs, judged per node (`results/nodekinds.py`), are listed when read
    about = summary(site, run, snapshot, objects, runs, verdicts, records or None)
    files = texts(about, runs, verdicts, provenance(site, snapshot, objects))
    return build_archive(run, objects, files, {log.path: log.data for log in logs})


@dataclass(frozen=True)
class Read:
    """What one collection read and made of it: all a reclaim decision needs."""

    snapshot: Snapshot
    objects: list[Obj]  # the site's, among snapshot.objects
    runs: RunSet
    verdicts: Verdicts


def reclaim(
    site: Site, cluster: Cluster, written: Written, read: Read, policy: RetryPolicy
) -> tuple[list[DeleteOutcome], list[str]]:
    """Delete the site's Certifications and WorkloadRuns, if and only if that is safe.

    Safe means: the archive verified against its SHA256SUMS; the objects read back from
    it are the objects just read; every object they name was read (`completeness.py`:
    a missing CRD and a missing object are told apart); no run is still pending or in
    progress (deleting its owner would abort it); and no verdict is `incomplete` (a
    measurement missing or not final). Every listing was complete, or nothing was
    archived (`client.py`); the ReportExports, listed again by their source label, are all
    in the archive (NVC725). Each DELETE pins the archived uid and resourceVersion and
    orphans what it does not name; what the site's objects own in the archive is deleted
    first, and an object whose dependent was not deleted (it changed: 409) is kept.

    Returns:
        What each DELETE did, and why reclaiming fell short (empty when it did not).

    """
    refusal = _refusal(written, read)
    if refusal:
        return [], [f"nothing deleted: {refusal}"]
    archived = archived_objects(written.path)
    unarchived = _unarchived_exports(cluster, archived, read, policy)
    if unarchived:
        return [], [f"nothing deleted: error[{EXPORTS_UNREAD}]: {unarchived}"]
    outcomes: list[DeleteOutcome] = []
    kept: set[str] = set()  # uids of objects with a dependent that was not deleted
    for request in reclaim_requests(site, archived):  # dependents first
        if request.uid in kept:
            outcome = DeleteOutcome(request, "kept", 0, "something it owns was not deleted")
        else:
            outcome = delete_object(cluster, request, policy)
        if outcome.status not in {"deleted", "gone"}:
            kept.update(request.owners)
        outcomes.append(outcome)
    problems = [
        f"{o.request} was not deleted: {o.status} ({o.message or o.code})"
        for o in outcomes
        if o.status not in {"deleted", "gone"}
    ]
    return outcomes, problems


EXPORTS_UNREAD = codes.NVC725.code


def _unarchived_exports(
    cluster: Cluster, archived: list[Obj], read: Read, policy: RetryPolicy
) -> str:
    """Why the ReportExport listing cannot be trusted whole ("" when it can).

    Each archived Certification's ReportExports are listed again by NVCRE's source label,
    in the reporting namespace its bindings annotation names: one the archive does not
    hold means the first listing was cut short (an empty or truncated list, a continue
    token not followed) or did not reach that namespace, and the report it carries would
    be lost with its source. A listing that fails, or an annotation that cannot be read,
    stops reclaiming too.
    """
    served = [r for r in read.snapshot.listings if r.kind == "ReportExport"]
    if served and not all(r.served for r in served):
        return ""  # the cluster has no ReportExport kind: nothing to lose
    held = {str(metadata(o).get("uid")) for o in archived if o.get("kind") == "ReportExport"}
    requests, unreadable = export_requests(archived)
    if unreadable:
        return "; ".join(unreadable)
    missing = []
    for request in requests:
        try:
            listing = list_objects(cluster, request, policy)
        except ApiCallError as exc:
            return f"the ReportExports could not be read again: {exc}"
        missing += [
            f"ReportExport {metadata(o).get('namespace')}/{metadata(o).get('name')}"
            for o in listing.items
            if str(metadata(o).get("uid")) not in held
        ]
    if not missing:
        return ""
    return (
        f"the ReportExport list was not read whole: {', '.join(sorted(missing))} not archived"
        " (collect again)"
    )


def _refusal(written: Written, read: Read) -> str:
    """Why the site's objects must not be deleted ("" when they may)."""
    if not written.verified:
        return f"the archive did not verify: {'; '.join(written.problems)}"
    if content_digest(archived_objects(written.path)) != content_digest(read.objects):
        return "the archived objects differ from the objects read"
    running = [f"{r.stage}/{r.test}" for r in read.runs.runs if r.source and r.state in _UNFINISHED]
    if running:
        return f"still running: {', '.join(running)}"
    missing = missing_objects(read.objects, read.snapshot.objects, read.snapshot.listings)
    if missing:
        return f"not every object was read: {'; '.join(missing)}"
    if read.verdicts.word is Word.INCOMPLETE:
        what = [f"{v.stage}/{v.test}" for v in read.verdicts.runs if v.word is Word.INCOMPLETE]
        what += [
            f"{v.test} {v.scope}" for v in read.verdicts.thresholds if v.word is Word.INCOMPLETE
        ]
        return f"results are incomplete ({', '.join(sorted(set(what))) or 'report exports'})"
    return ""


_UNFINISHED = frozenset({RunState.PENDING, RunState.IN_PROGRESS})
