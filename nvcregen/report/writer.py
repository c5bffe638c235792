"""`nvcregen report RESULTS_DIR --out DIR`: verify the archive, then write the page and summary.

    locate   -> the run folder (RESULTS_DIR, or the newest run of a site folder)
    verify   -> every file against SHA256SUMS; a run that does not verify is refused
    read     -> summary.json, verdicts.json, provenance.json, bandwidth.csv (with
                `--sanitize`, rewritten first: `sanitize.py`)
    write    -> DIR/index.html and DIR/summary.md, each replaced atomically; with
                `--sanitize` also DIR/bandwidth.csv and DIR/summary.json, sanitized

The output depends only on the archive: no clock is read, and the same archive gives
the same bytes.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from nvcregen.core.atomicfile import FileWriteError, write_file
from nvcregen.report.archive import read_archive, read_texts
from nvcregen.report.folder import Located, ReportError, RunEntry, verified_run
from nvcregen.report.historyview import history_of, markdown_lines
from nvcregen.report.markdown import summary_markdown
from nvcregen.report.page import build_page, render_page
from nvcregen.report.sanitize import sanitize_texts, sanitizer
from nvcregen.report.tables import evidence_lines

PAGE = "index.html"
SUMMARY = "summary.md"
EXPORTS = ("bandwidth.csv", "summary.json")


@dataclass(frozen=True)
class Report:
    """What was written, from which run, and the run's overall verdict."""

    run: Path
    files: tuple[Path, ...]
    site: str
    run_id: str
    word: str
    signature: str = ""
    evidence: tuple[str, ...] = ()
    findings: tuple[str, ...] = ()  # folders holding a run listed already (NVC756)


def write_report(results_dir: Path, out_dir: Path, *, sanitize: bool = False) -> Report:
    """Verify the run RESULTS_DIR names and write its page and summary into `out_dir`.

    With `sanitize`, internal addresses, host names and registries are replaced by stable
    placeholders everywhere, and the sanitized bandwidth.csv and summary.json are written
    beside the page for publishing.

    Raises:
        ReportError: When no run is found, the run does not verify, a file cannot be
            read as collect writes it, or the output cannot be written.

    """
    located = verified_run(results_dir)
    if out_dir.resolve().is_relative_to(located.run.resolve()):
        raise ReportError(f"--out {out_dir} is inside the archive, which would then not verify")
    raw = read_texts(located.run)
    clean = sanitize_texts(raw) if sanitize else raw
    archive = read_archive(located.run, clean)
    earlier = [r for r in located.runs if r.order <= _entry(located).order]
    history = history_of(earlier).history if len(earlier) > 1 else None
    if sanitize and history is not None:  # the groups name nodes, earlier runs' too
        history = history.renamed(sanitizer(raw).extended(history.node_names()))
    lines = markdown_lines(history) if history is not None else []
    texts = {
        PAGE: render_page(build_page(archive, located.runs, history, located.findings)),
        SUMMARY: summary_markdown(archive, located.runs, lines, located.findings),
    }
    if sanitize:
        texts |= {name: clean[name] for name in EXPORTS}
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ReportError(f"cannot write the report into {out_dir}: {exc}") from exc
    try:
        files = tuple(write_file(out_dir / name, text) for name, text in texts.items())
    except FileWriteError as exc:
        raise ReportError(str(exc)) from exc
    s = archive.summary
    return Report(
        located.run,
        files,
        s.site,
        s.run_id,
        s.verdict,
        archive.signature,
        tuple(evidence_lines(archive)),
        located.findings,
    )


def _entry(located: Located) -> RunEntry:
    return next(r for r in located.runs if r.path == located.run)
