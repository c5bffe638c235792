"""Find the run a report is about and verify it against its SHA256SUMS.

A results folder is either one run (`results/<site>/<run-id>/`, holding SHA256SUMS or
summary.json) or a site folder holding runs; of a site folder the newest run is
reported, and every run in it is listed. Runs are ordered by when their measurements
finished: summary.json's `finished_at` (the last measurement's completion time, from the
objects or the logs), else the time that starts a dated run id (`20261014T130100Z-...`),
but never by a time after the run was collected: its signed `collectedAt`, else when its
SHA256SUMS was written. A run that claims to have finished more than `SKEW` after it was
collected (a completionTime in 2099) is refused (NVC755): it is listed, placed at its
collection time, and neither reported as the newest nor counted in a history. A run with
no measurement time (saved logs without timestamps: `undated-<hash>`) counts as older
than any dated one, and such runs are ordered among themselves by when they were
collected, never by their hash.

One run is listed once: two folders holding the same run (the same SHA256SUMS, or the
same run id in summary.json: a run folder copied under another name) are one entry, the
folder named for its run id kept, with a finding naming both (NVC756).

Verification reads the files rather than trusting the writer, with the same function
`collect` uses (`nvcregen.results.archive.verify_archive`), as strictly as `sha256sum -c
--strict`: SHA256SUMS and every file in the run must be regular files (no symbolic link,
FIFO or device, listed or not), every line well formed and every path listed once, in
plain form, inside the run folder; every listed file must exist and match its sha256,
every file must be listed, and the four readable files must be among them. A site
folder's runs are its real subfolders: a symbolic link to a run elsewhere is not one.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

from nvcregen.core import codes
from nvcregen.results.archive import SUMS, verify_archive
from nvcregen.results.archivemodel import RunFacts, read_json_file
from nvcregen.results.archiveread import MAX_SUMS, read_capped
from nvcregen.results.attestation import signed_collection_time

_DATED = re.compile(r"^(\d{4})(\d\d)(\d\d)T(\d\d)(\d\d)(\d\d)Z-")
_FINISHED = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
SKEW = timedelta(minutes=5)  # how far a cluster's clock may run ahead of the collector's
FUTURE = codes.NVC755.code  # a run measured (it says) after it was collected
TWICE = codes.NVC756.code  # one run in two folders of a site folder


class ReportError(Exception):
    """No report can be written; the message says why, `problems` lists the details."""

    def __init__(self, message: str, problems: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.problems = problems

    def __str__(self) -> str:
        lines = [self.args[0], *(f"  - {p}" for p in self.problems)]
        return "\n".join(lines)


@dataclass(frozen=True)
class RunEntry:
    """One run folder of a site folder, whether it verifies, and when it was measured.

    Attributes:
        finished_at: When its measurements finished (`YYYY-MM-DDTHH:MM:SSZ`), or None.
        collected_at: When it was collected: its signed `collectedAt`, else its
            SHA256SUMS file's time (`YYYY-MM-DDTHH:MM:SS.ffffffZ`); "" when unknown.
        same_as: What identifies its run: its SHA256SUMS digest and summary.json's run id.

    """

    run_id: str
    path: Path
    problems: tuple[str, ...]
    finished_at: str | None = None
    collected_at: str = ""
    same_as: tuple[str, ...] = ()

    @property
    def order(self) -> tuple[int, str, str]:
        """Sort key, oldest first: undated runs by collection, then by measurement time.

        A measurement time is never taken as later than the collection time.
        """
        if self.finished_at is None:
            return (0, self.collected_at, self.run_id)
        measured = _micro(self.finished_at)
        if self.collected_at and self.collected_at < measured:
            return (1, self.collected_at, self.run_id)
        return (1, measured, self.run_id)


@dataclass(frozen=True)
class Located:
    """Every run of a site folder (just it, for a run folder), oldest first.

    The last is the one to report on (`entry`, `run`); `findings` name the folders that
    held a run listed already (NVC756).
    """

    runs: tuple[RunEntry, ...]
    findings: tuple[str, ...] = ()

    @property
    def entry(self) -> RunEntry:
        """The run to report on: the newest."""
        return self.runs[-1]

    @property
    def run(self) -> Path:
        """Its folder."""
        return self.entry.path


def is_run_folder(folder: Path) -> bool:
    """A folder that is (or claims to be) one archived run."""
    return (folder / SUMS).is_file() or (folder / "summary.json").is_file()


ORDER_NOTE = (
    "Runs are ordered by when their measurements finished (from the objects or the logs),"
    " never later than when they were collected (signed, or when SHA256SUMS was written);"
    " runs whose objects and logs give no time come first, in the order they were collected."
)


def when_text(run: RunEntry) -> str:
    """When a run was measured, or collected when that is all that is known."""
    if run.finished_at is not None:
        return f"measured until {run.finished_at}"
    return "no measurement time: placed by when it was collected"


def standing(run: RunEntry) -> str:
    """Why a listed run is not taken (refused, or does not verify); "" when it is."""
    refused = next((p for p in run.problems if p.startswith(f"error[{FUTURE}]")), None)
    if refused is not None:
        return f"refused ({FUTURE}): measured, it says, after it was collected"
    return "does not verify" if run.problems else ""


def run_sort_key(run_id: str) -> tuple[int, str]:
    """Order of run ids alone, oldest first: undated runs before dated ones, then by id."""
    return (1 if _DATED.match(run_id) else 0, run_id)


def entry(folder: Path, problems: tuple[str, ...], now: datetime | None = None) -> RunEntry:
    """A run folder with its measurement and collection times.

    Refused (NVC755) when it says it was measured more than `SKEW` after it was collected,
    or after `now` (the clock's time when None): a SHA256SUMS written "in 2099" (its
    file time set) dates nothing later than the reader's own clock.
    """
    finished, run_id = _summary_facts(folder)
    collected = signed_collection_time(folder)
    collected = _micro(collected) if collected and _when(collected) else None
    when = collected or _collected_at(folder)
    clock = (now or datetime.now(UTC)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    if finished is not None and when and _late(finished, when):
        when_text = f"after it was collected ({when[:19]}Z{', signed' if collected else ''})"
    elif finished is not None and _late(finished, clock):
        when_text = f"later than now ({clock[:19]}Z)"
    else:
        when_text = ""
    if when_text:
        problems += (
            f"error[{FUTURE}]: it says its measurements finished at {finished}, {when_text}:"
            " a run cannot be measured after it was archived, so it is not taken as the"
            " newest nor counted (hint: its objects or logs carry a wrong date: collect them"
            " again, or remove the run)",
        )
    same = (f"sums:{_sums_digest(folder)}", *((f"run:{run_id}",) if run_id else ()))
    return RunEntry(folder.name, folder, problems, finished, when, same)


def _when(text: str) -> datetime | None:
    """A `YYYY-MM-DDTHH:MM:SSZ` time that is a real date (not month 13), UTC; else None."""
    if not _FINISHED.match(text):
        return None
    try:
        return datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    except ValueError:
        return None


def _late(finished: str, collected: str) -> bool:
    """Whether `finished` (a checked `_when` time) is more than SKEW after `collected`."""
    measured = _when(finished)
    archived = _when(f"{collected[:19]}Z")
    return measured is not None and archived is not None and measured > archived + SKEW


def _micro(when: str) -> str:
    """`...:SSZ` as `...:SS.000000Z`, so it compares with a file time."""
    return f"{when[:19]}.000000Z"


def _sums_digest(folder: Path) -> str:
    try:  # a FIFO is never opened: verification names it
        return hashlib.sha256(read_capped(folder / SUMS, MAX_SUMS)).hexdigest()
    except OSError:
        return f"unreadable:{folder.name}"  # matches no other run


def collected_at(folder: Path) -> str:
    """When a run was archived: its SHA256SUMS file's time, "" when it cannot be read."""
    return _collected_at(folder)


def measured_at(folder: Path) -> str | None:
    """When a run's measurements finished: summary.json's `finished_at`, or a dated id's."""
    return _summary_facts(folder)[0]


def _summary_facts(folder: Path) -> tuple[str | None, str]:
    """summary.json's `finished_at` (else a dated id's time) and `run_id` ("" unknown)."""
    facts = RunFacts()
    try:
        text = read_capped(folder / "summary.json").decode("utf-8")  # no FIFO
        facts = read_json_file(RunFacts, text)
    except (OSError, ValueError):  # ArchiveFileError too: the file itself is checked later
        pass  # no usable time: the run id's, if dated
    found, run_id = facts.finished_at, facts.run_id
    if found is not None and _when(found):
        return found, run_id
    dated = _DATED.match(folder.name)
    named = "{}-{}-{}T{}:{}:{}Z".format(*dated.groups()) if dated else ""
    return (named if _when(named) else None), run_id


def _collected_at(folder: Path) -> str:
    """When a run was archived: its SHA256SUMS file's time (`...:SS.ffffffZ`), "" unknown."""
    try:
        stamp = (folder / SUMS).stat().st_mtime
    except OSError:
        return ""
    return datetime.fromtimestamp(stamp, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def locate(results_dir: Path) -> Located:
    """The run to report on: RESULTS_DIR itself, or the newest run of a site folder.

    Raises:
        ReportError: When the folder is neither a run nor a site folder with runs.

    """
    if not results_dir.is_dir():
        raise ReportError(f"{results_dir} is not a folder")
    if is_run_folder(results_dir):
        return Located((entry(results_dir, tuple(verify(results_dir))),))
    runs = _run_folders(results_dir)
    if not runs:
        children = _children(results_dir)
        sites = [p.name for p in children if any(is_run_folder(c) for c in p.iterdir())]
        hint = f"; it holds site folders ({', '.join(sites)}): give one" if sites else ""
        raise ReportError(
            f"{results_dir} is neither a run folder (no {SUMS}) nor a site folder of runs{hint}"
        )
    kept, findings = once(entry(p, tuple(verify(p))) for p in runs)
    entries = sorted(kept, key=lambda e: e.order)
    return Located(tuple(entries), findings)


def runs_after(run_dir: Path) -> tuple[RunEntry, ...] | None:
    """The runs of `run_dir`'s site folder after it in `locate`'s order, each verified.

    `locate` verifies every run it lists; the release gate asks only of the runs newer
    than the quarantining one, so only those are verified (and a run that shares a
    SHA256SUMS or run id with another, whose verification decides which folder is kept:
    `once`). The order, the refusals (NVC755) and the runs kept are `locate`'s. None when
    `run_dir` is not listed (a copy kept under another name: NVC756), or is no run of a
    site folder.
    """
    folder = run_dir.parent
    if is_run_folder(folder) or not folder.is_dir():
        return None
    listed = [entry(p, ()) for p in _run_folders(folder)]  # not verified yet
    keys = Counter(k for e in listed for k in e.same_as)
    twins = {e.path for e in listed if any(keys[k] > 1 for k in e.same_as)}
    kept, _ = once(_verified(e) if e.path in twins else e for e in listed)
    ordered = sorted(kept, key=lambda e: e.order)
    at = next((i for i, e in enumerate(ordered) if e.path.resolve() == run_dir.resolve()), None)
    if at is None:
        return None
    return tuple(e if e.path in twins else _verified(e) for e in ordered[at + 1 :])


def _verified(found: RunEntry) -> RunEntry:
    """The entry with what its verification finds before its own refusals (as `entry`)."""
    return replace(found, problems=(*verify(found.path), *found.problems))


def _children(folder: Path) -> list[Path]:
    """A folder's real subfolders by name, hidden ones left out (no symbolic link)."""
    return sorted(
        (
            p
            for p in folder.iterdir()
            if p.is_dir() and not p.is_symlink() and not p.name.startswith(".")
        ),
        key=lambda p: p.name,  # the order shown is by when measurements finished: `order`
    )


def _run_folders(folder: Path) -> list[Path]:
    """A site folder's run folders, by name."""
    return [p for p in _children(folder) if is_run_folder(p)]


def once(entries: Iterable[RunEntry]) -> tuple[list[RunEntry], tuple[str, ...]]:
    """Each run once, with a finding (NVC756) for each folder that held one listed already.

    Of the folders holding one run, the one named for it is kept, else one that
    verifies, else the first by name.
    """
    ranked = sorted(
        entries,
        key=lambda e: (f"run:{e.run_id}" not in e.same_as, bool(e.problems), e.run_id),
    )
    kept: list[RunEntry] = []
    seen: dict[str, RunEntry] = {}
    findings = []
    for found in ranked:
        first = next((seen[k] for k in found.same_as if k in seen), None)
        if first is None:
            kept.append(found)
            seen |= dict.fromkeys(found.same_as, found)
            continue
        how = "the same SHA256SUMS" if found.same_as[0] == first.same_as[0] else "the same run id"
        findings.append(
            f"error[{TWICE}]: {found.path} holds the run of {first.path} ({how}): listed once,"
            f" as {first.run_id} (hint: a run copied under another name; remove the copy)"
        )
    return kept, tuple(findings)


def verify(folder: Path) -> list[str]:
    """Every way a run folder fails to match its SHA256SUMS (empty when it verifies)."""
    return verify_archive(folder)


def verified_run(results_dir: Path) -> Located:
    """Locate the run and refuse it unless it verifies.

    Raises:
        ReportError: When no run is found or the run does not match its SHA256SUMS.

    """
    located = locate(results_dir)
    entry = next(e for e in located.runs if e.path == located.run)
    if entry.problems:
        raise ReportError(
            f"{located.run} does not verify against its {SUMS}; no report written"
            " (the archive was changed or is incomplete: collect it again)",
            entry.problems,
        )
    return located
