"""Find the run a report is about and verify it against its SHA256SUMS.

A results folder is either one run (`results/<site>/<run-id>/`, holding SHA256SUMS or
summary.json) or a site folder holding runs; of a site folder the newest run is
reported, and every run in it is listed. Runs are ordered by when their measurements
finished: summary.json's `finished_at` (the last measurement's completion time, from the
objects or the logs), else the time that starts a dated run id (`20261014T130100Z-...`).
A run with neither (saved logs without timestamps: `undated-<hash>`) counts as older
than any dated one, and such runs are ordered among themselves by when they were
collected (their SHA256SUMS file's time), never by their hash.

Verification reads the files rather than trusting the writer, with the same function
`collect` uses (`nvcregen.results.archive.verify_archive`), as strictly as `sha256sum -c
--strict`: SHA256SUMS and every file in the run must be regular files (no symbolic link,
FIFO or device, listed or not), every line well formed and every path listed once, in
plain form, inside the run folder; every listed file must exist and match its sha256,
every file must be listed, and the four readable files must be among them. A site
folder's runs are its real subfolders: a symbolic link to a run elsewhere is not one.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from nvcregen.results.archive import SUMS, verify_archive

_DATED = re.compile(r"^(\d{4})(\d\d)(\d\d)T(\d\d)(\d\d)(\d\d)Z-")
_FINISHED = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
MAX_SUMMARY = 256 << 20  # summary.json is read for its time only below this size


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
        collected_at: When it was archived (its SHA256SUMS file's time), same form.

    """

    run_id: str
    path: Path
    problems: tuple[str, ...]
    finished_at: str | None = None
    collected_at: str = ""

    @property
    def order(self) -> tuple[int, str, str]:
        """Sort key, oldest first: undated runs by collection, then by measurement time."""
        if self.finished_at is not None:
            return (1, self.finished_at, self.run_id)
        return (0, self.collected_at, self.run_id)


@dataclass(frozen=True)
class Located:
    """The run to report on, and every run of its site folder (just it, for a run folder)."""

    run: Path
    runs: tuple[RunEntry, ...]


def is_run_folder(folder: Path) -> bool:
    """A folder that is (or claims to be) one archived run."""
    return (folder / SUMS).is_file() or (folder / "summary.json").is_file()


ORDER_NOTE = (
    "Runs are ordered by when their measurements finished (from the objects or the logs);"
    " runs whose objects and logs give no time come first, in the order they were collected."
)


def when_text(run: RunEntry) -> str:
    """When a run was measured, or collected when that is all that is known."""
    if run.finished_at is not None:
        return f"measured until {run.finished_at}"
    return "no measurement time: placed by when it was collected"


def run_sort_key(run_id: str) -> tuple[int, str]:
    """Order of run ids alone, oldest first: undated runs before dated ones, then by id."""
    return (1 if _DATED.match(run_id) else 0, run_id)


def entry(folder: Path, problems: tuple[str, ...]) -> RunEntry:
    """A run folder with its measurement and collection times."""
    return RunEntry(folder.name, folder, problems, measured_at(folder), _collected_at(folder))


def collected_at(folder: Path) -> str:
    """When a run was archived: its SHA256SUMS file's time, "" when it cannot be read."""
    return _collected_at(folder)


def measured_at(folder: Path) -> str | None:
    """When a run's measurements finished: summary.json's `finished_at`, or a dated id's."""
    try:
        summary = folder / "summary.json"
        if summary.stat().st_size <= MAX_SUMMARY:
            found = json.loads(summary.read_text(encoding="utf-8")).get("finished_at")
            if isinstance(found, str) and _FINISHED.match(found):
                return found
    except (OSError, ValueError, AttributeError, RecursionError):
        pass  # no usable time: the run id's, if dated (the file itself is checked later)
    dated = _DATED.match(folder.name)
    return "{}-{}-{}T{}:{}:{}Z".format(*dated.groups()) if dated else None


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
        return Located(results_dir, (entry(results_dir, tuple(verify(results_dir))),))
    children = sorted(
        (
            p
            for p in results_dir.iterdir()
            if p.is_dir() and not p.is_symlink() and not p.name.startswith(".")
        ),
        key=lambda p: p.name,  # the order shown is by when measurements finished, below
    )
    runs = [p for p in children if is_run_folder(p)]
    if not runs:
        sites = [p.name for p in children if any(is_run_folder(c) for c in p.iterdir())]
        hint = f"; it holds site folders ({', '.join(sites)}): give one" if sites else ""
        raise ReportError(
            f"{results_dir} is neither a run folder (no {SUMS}) nor a site folder of runs{hint}"
        )
    entries = sorted((entry(p, tuple(verify(p))) for p in runs), key=lambda e: e.order)
    return Located(entries[-1].path, tuple(entries))


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
