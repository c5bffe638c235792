"""`nvcregen collect` for `readiness.engine: trainer` sites: results from pod logs.

There are no NVCRE objects to read: the results are the launcher logs of the site's
TrainJobs (nccl-tests output) and the logs of its DCGM Jobs (`dcgmi diag --json`).
They are read from a folder of saved logs (`--from DIR`) or from the cluster
(`collect/podlogs.py`), placed and parsed with the `ingest` parsers
(`results/logruns.py`), judged with the same verdicts as NVCRE mode, and archived the
same way, the logs themselves included (`logs/<namespace>/<name>.log`, checksummed).

Saved-logs folder (`--from DIR`):

    DIR/logs/<namespace>/<name>.log   one log per TrainJob or Job (`kubectl logs`),
                                      named after the TrainJob, the Job or the pod;
                                      `DIR/logs/<name>.log` means the site's namespace
    DIR/logs/<namespace>/<job>-<index>-<x>.log
                                      packed runs (`readiness.packing: packed`):
                                      one log per pod of a node pack's Indexed
                                      Job, one per node; a group pack's launcher
                                      log as any TrainJob's (`results/packlogs.py`
                                      splits each into its tests' sections)
    DIR/**/*.yaml|yml|json            optional: the exported TrainJobs and Jobs
                                      (`kubectl get trainjobs,jobs -l
                                      nvcregen.io/site=SITE -o yaml`), for their labels
                                      and a `Failed` condition; and the
                                      nodes (`kubectl get nodes -o yaml`),
                                      compared with the site's inventory
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from nvcregen.collect.model import CollectError, CollectOptions, CollectOutcome, LoadedSite
from nvcregen.collect.nodedrift import saved_drift_notes
from nvcregen.collect.period import period_site, select_period
from nvcregen.collect.podlogs import read_cluster_logs
from nvcregen.collect.signing import sign_archive, signature_note
from nvcregen.collect.source import (
    NOT_REGULAR,
    SAME_RUN,
    SUFFIXES,
    SourceError,
    read_folder,
    read_regular,
    regular_files,
)
from nvcregen.core.atomicfile import FileWriteError
from nvcregen.core.kube import name_problem
from nvcregen.core.labels import SITE
from nvcregen.plan.packs import chunk_of
from nvcregen.results.archive import build_archive, run_id, write_archive
from nvcregen.results.archivefiles import latest, log_provenance, provenance, summary, texts
from nvcregen.results.examine import examine
from nvcregen.results.liveobjects import Obj, Snapshot, labels_of
from nvcregen.results.logruns import LOGS, LogResults, RunLog, assemble_log_runs
from nvcregen.results.nodekinds import with_pool_majority
from nvcregen.results.verdicts import Verdicts, judge

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

LOG_SUFFIXES = frozenset({".log", ".txt"})
RUN_KINDS = frozenset({"TrainJob", "Job"})


def collect_trainer(
    loaded: LoadedSite, options: CollectOptions, key: Ed25519PrivateKey | None = None
) -> CollectOutcome:
    """Collect, judge and archive a trainer-mode site's results from its logs.

    Raises:
        CollectError: When the folder or the cluster cannot be read, or the archive
            cannot be written; nothing is archived then.

    """
    site = loaded.plan.site
    if options.reclaim:
        raise CollectError("--reclaim deletes NVCRE objects: a trainer-mode site has none")
    namespace = site.spec.nvcre.namespace
    if options.from_dir is not None:
        logs, snapshot = read_log_folder(options.from_dir, namespace)
    else:
        logs, snapshot = read_cluster_logs(site, options)
    objects = [o for o in snapshot.objects if _is_site_run(o, site.metadata.name)]
    rounds = site.spec.readiness.rounds
    packing = site.spec.readiness.packing
    units = list(loaded.plan.units)
    packs = None
    if options.period is not None:  # one period of readiness.periodic, on its own
        period = select_period(loaded.plan, options.period, logs, objects)
        units, rounds, packs = list(period.units), 1, list(period.packs)
        logs, objects = list(period.logs), list(period.objects)
    results = assemble_log_runs(
        site.metadata.name, units, rounds, logs, objects, packing, chunk_of(site), packs
    )
    judged = with_pool_majority(units, results.sources, results.records)
    results = LogResults(results.runs, judged, results.sources)
    found = examine(units, loaded.plan.catalog, results.runs, results.records)
    verdicts = judge(site if packs is None else period_site(site, units), results.runs, found)
    digests = {log.path: hashlib.sha256(log.data).hexdigest() for log in logs}  # once a log
    run = _run_id(objects, digests, loaded.file.sha256)
    files = _texts(loaded, snapshot, objects, run, digests, results, verdicts)
    try:
        blobs = {log.path: log.data for log in logs}
        archive = build_archive(run, objects, files, blobs, digests)
        archive = sign_archive(archive, key, loaded, verdicts)
    except ValueError as exc:
        raise CollectError(f"nothing archived: {exc}") from exc
    site_dir = options.out_dir / site.metadata.name
    try:
        written = write_archive(site_dir, archive)
    except FileWriteError as exc:  # a link on the way: nothing written there
        raise CollectError(str(exc)) from exc
    except OSError as exc:
        raise CollectError(f"cannot write the archive under {site_dir}: {exc}") from exc
    signature = signature_note(key, written)
    notes = (*snapshot.notes, *written.notes)
    if options.from_dir is not None:  # the nodes saved beside the logs against the inventory
        notes += saved_drift_notes(loaded, snapshot.objects)
    return CollectOutcome(site.metadata.name, written, verdicts, notes=notes, signature=signature)


def read_log_folder(folder: Path, namespace: str) -> tuple[list[RunLog], Snapshot]:
    """The saved logs under `folder/logs/` and the objects exported beside them.

    Only regular files are read, no link followed (`source.regular_files`, NVC710), and
    two logs of one run (`x.log` and `x.txt`) are refused (NVC711): one would be judged
    and the other archived under the run's name.

    Raises:
        CollectError: When there is no log, a log is refused, or an exported file does
            not parse.

    """
    root = folder / LOGS
    if root.is_symlink():
        raise CollectError(f"{LOGS}: error[{NOT_REGULAR}]: a symbolic link; nothing is followed")
    files, problems = regular_files(root, LOG_SUFFIXES) if root.is_dir() else ([], [])
    if not files and not problems:
        raise CollectError(f"{root}: no saved logs (<namespace>/<name>.log) to read")
    logs: list[RunLog] = []
    runs: dict[tuple[str, str], str] = {}
    for file in files:
        parts = file.relative_to(root).parts
        where = parts[0] if len(parts) > 1 else namespace
        shown = file.relative_to(folder).as_posix()
        problem = name_problem("Pod", where, file.stem) if len(parts) <= 2 else "too deep"
        if problem is not None:  # it would name a path outside the archive
            raise CollectError(f"{shown}: not logs/<namespace>/<name>.log: {problem}")
        if (where, file.stem) in runs:  # x.log and x.txt: one run, two logs
            problems.append(
                f"{shown}: error[{SAME_RUN}]: {runs[where, file.stem]} is the log of the same"
                f" run ({where}/{file.stem}); keep one of them"
            )
            continue
        runs[where, file.stem] = shown
        try:
            logs.append(RunLog(where, file.stem, read_regular(file)))
        except OSError as exc:
            problems.append(f"{shown}: cannot be read: {exc.strerror or exc}")
    exported, refused = regular_files(folder, SUFFIXES)
    if problems or refused:
        raise CollectError("\n".join(sorted(set(problems + refused))))
    if not exported:
        return logs, Snapshot((), f"folder {folder.name}")
    try:
        return logs, read_folder(folder)
    except SourceError as exc:
        raise CollectError("\n".join(exc.problems)) from exc


def _is_site_run(obj: Obj, site: str) -> bool:
    return obj.get("kind") in RUN_KINDS and labels_of(obj).get(SITE) == site


def _run_id(objects: Sequence[Obj], digests: Mapping[str, str], site_sha256: str) -> str:
    """`run_id` of the objects, its hash also covering every log (path -> its sha256)."""
    digest = hashlib.sha256()
    for path, sha256 in sorted(digests.items()):
        digest.update(f"{path}\0{sha256}\n".encode())
    return run_id(objects, f"{site_sha256}:{digest.hexdigest()}")


def _texts(
    loaded: LoadedSite,
    snapshot: Snapshot,
    objects: list[Obj],
    run: str,
    digests: Mapping[str, str],
    results: LogResults,
    verdicts: Verdicts,
) -> dict[str, str]:
    """summary.json (with every log read), bandwidth.csv, verdicts.json, provenance.json.

    `digests` are the logs' sha256s by path, hashed once for the run id, provenance.json
    and SHA256SUMS alike.
    """
    records = results.records
    about = summary(loaded.file, run, snapshot, objects, results.runs, verdicts, records)
    finished = latest([about.finished_at, *(r.finished_at for r in records)])
    about = about.model_copy(update={"finished_at": finished})
    origin = log_provenance(provenance(loaded.file, snapshot, objects), records, digests)
    return texts(about, results.runs, verdicts, origin)


class TrainerCollector:
    """Trainer mode collects its runs' pod logs itself (`collect.engineparts.OwnCollector`)."""

    def collect(
        self, loaded: LoadedSite, options: CollectOptions, key: Ed25519PrivateKey | None
    ) -> CollectOutcome:
        """Collect, judge and archive a trainer-mode site's results from its logs."""
        return collect_trainer(loaded, options, key)


COLLECTOR = TrainerCollector()
