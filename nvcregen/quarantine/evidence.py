"""The gate before a node returns to service: `quarantine --release` needs newer evidence.

A quarantined node is released only when a run of the same site, newer than the run that
quarantined it (measured later, by the site folder's order: `report.folder.locate`), that
verifies against its SHA256SUMS and is not refused (NVC755), judges it `cleared`: a
retest or a periodic run. Of several newer runs the newest that judges the node decides,
so a node cleared once and failed again since stays held. Otherwise the node is refused,
nothing is sent for it, and the refusal names the evidence missing:

- no newer run judges the node (none collected, or none that verifies: say which);
- the newest newer run that judges it holds it `failed`, `suspect`, or otherwise.

The newer runs are the sibling folders of the quarantining run (its site folder); a run
given alone, outside a site folder, has none. `--node` narrows the release to named nodes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from nvcregen.quarantine.marks import Marks, Refusal
from nvcregen.report.archive import read_archive
from nvcregen.report.folder import Located, ReportError, RunEntry, is_run_folder, locate


@dataclass(frozen=True)
class Evidence:
    """The newer runs of a site: verified ones with their node verdicts, and the rest."""

    verified: tuple[tuple[str, dict[str, str]], ...]  # (run id, node -> status), oldest first
    unverified: tuple[str, ...]  # newer run ids that do not verify or are refused

    def judged(self, node: str) -> tuple[str, str] | None:
        """The newest verified run that judges `node`, and its status there; None if none."""
        for run_id, statuses in reversed(self.verified):
            if node in statuses:
                return run_id, statuses[node]
        return None


def newer_runs(run_dir: Path) -> Evidence:
    """The runs of `run_dir`'s site folder measured after it (`locate`'s order)."""
    site_folder = run_dir.parent
    if is_run_folder(site_folder):
        return Evidence((), ())
    try:
        located: Located = locate(site_folder)
    except ReportError:
        return Evidence((), ())
    ids = [r.path.resolve() for r in located.runs]
    try:
        at = ids.index(run_dir.resolve())
    except ValueError:  # a copy of a run listed under its own name (NVC756)
        return Evidence((), ())
    later: Sequence[RunEntry] = located.runs[at + 1 :]
    verified: list[tuple[str, dict[str, str]]] = []
    unverified: list[str] = []
    for entry in later:
        if entry.problems:
            unverified.append(entry.run_id)
            continue
        archive = read_archive(entry.path)
        statuses = {v.node: str(v.status) for v in archive.verdicts.nodes}
        verified.append((entry.run_id, statuses))
    return Evidence(tuple(verified), tuple(unverified))


def gate_release(marks: Marks, evidence: Evidence, nodes: Sequence[str] = ()) -> Marks:
    """The marks a release may take off: each node's newer evidence clears it.

    `nodes` (from `--node`) narrows the release; a named node the run did not quarantine
    is refused too.
    """
    own = {m.node for m in marks.marks}
    wanted = set(nodes) or own
    refused = list(marks.refused)
    refused += [
        Refusal(node, "not quarantined", f"{marks.run} did not quarantine it")
        for node in sorted(set(nodes) - own)
    ]
    kept = []
    for mark in marks.marks:
        if mark.node not in wanted:
            continue
        why = _missing(mark.node, marks.run, evidence)
        if why is None:
            kept.append(mark)
        else:
            refused.append(Refusal(mark.node, "quarantined", why))
    return replace(marks, marks=tuple(kept), refused=tuple(refused))


def _missing(node: str, run: str, evidence: Evidence) -> str | None:
    """What evidence a release of `node` lacks; None when a newer verified run clears it."""
    judged = evidence.judged(node)
    if judged is None:
        skipped = (
            f" ({', '.join(evidence.unverified)} do not verify or are refused)"
            if evidence.unverified
            else ""
        )
        return (
            f"no verified run newer than {run} judges it{skipped}: retest it "
            "(`nvcregen retest`, or wait for a periodic run), collect, then release"
        )
    run_id, status = judged
    if status != "cleared":
        return f"the newest run that judges it, {run_id}, holds it {status}: it stays held"
    return None
