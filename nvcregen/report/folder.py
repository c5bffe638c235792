"""Find the run a report is about and verify it against its SHA256SUMS.

A results folder is either one run (`results/<site>/<run-id>/`, holding SHA256SUMS or
summary.json) or a site folder holding runs; of a site folder the newest run is
reported, and every run in it is listed. Run ids start with the latest time found in
the objects (`20261014T130100Z-...`), so the newest is the greatest id; `undated-...`
runs count as older than any dated one.

Verification reads the files rather than trusting the writer, with the same function
`collect` uses (`nvcregen.results.archive.verify_archive`), as strictly as `sha256sum -c
--strict`: SHA256SUMS and every file in the run must be regular files (no symbolic link,
FIFO or device, listed or not), every line well formed and every path listed once, in
plain form, inside the run folder; every listed file must exist and match its sha256,
every file must be listed, and the four readable files must be among them. A site
folder's runs are its real subfolders: a symbolic link to a run elsewhere is not one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from nvcregen.results.archive import SUMS, verify_archive

_DATED = re.compile(r"^\d{8}T\d{6}Z-")


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
    """One run folder of a site folder and whether it verifies."""

    run_id: str
    path: Path
    problems: tuple[str, ...]


@dataclass(frozen=True)
class Located:
    """The run to report on, and every run of its site folder (just it, for a run folder)."""

    run: Path
    runs: tuple[RunEntry, ...]


def is_run_folder(folder: Path) -> bool:
    """A folder that is (or claims to be) one archived run."""
    return (folder / SUMS).is_file() or (folder / "summary.json").is_file()


def run_sort_key(run_id: str) -> tuple[int, str]:
    """Order of run ids, oldest first: undated runs before dated ones, then by id."""
    return (1 if _DATED.match(run_id) else 0, run_id)


def locate(results_dir: Path) -> Located:
    """The run to report on: RESULTS_DIR itself, or the newest run of a site folder.

    Raises:
        ReportError: When the folder is neither a run nor a site folder with runs.

    """
    if not results_dir.is_dir():
        raise ReportError(f"{results_dir} is not a folder")
    if is_run_folder(results_dir):
        entry = RunEntry(results_dir.name, results_dir, tuple(verify(results_dir)))
        return Located(results_dir, (entry,))
    children = sorted(
        (
            p
            for p in results_dir.iterdir()
            if p.is_dir() and not p.is_symlink() and not p.name.startswith(".")
        ),
        key=lambda p: run_sort_key(p.name),
    )
    runs = [p for p in children if is_run_folder(p)]
    if not runs:
        sites = [p.name for p in children if any(is_run_folder(c) for c in p.iterdir())]
        hint = f"; it holds site folders ({', '.join(sites)}): give one" if sites else ""
        raise ReportError(
            f"{results_dir} is neither a run folder (no {SUMS}) nor a site folder of runs{hint}"
        )
    entries = tuple(RunEntry(p.name, p, tuple(verify(p))) for p in runs)
    return Located(runs[-1], entries)


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
