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
given alone, outside a site folder, has none. A newer run is evidence only for its own
site: one of another site (NVC782), or judged against another site file than the
quarantining run was (NVC783, where both record its sha256), is no evidence, and a
refusal names it with both sites. Of each newer run only what decides is read
(`results/judgednodes.py`: its site, site file and node statuses), never the whole
archive. `--node` narrows the release to named nodes.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from nvcregen.core import codes
from nvcregen.quarantine.marks import Marks, Refusal
from nvcregen.report.folder import Located, ReportError, RunEntry, is_run_folder, locate
from nvcregen.results.archivemodel import ArchiveFileError
from nvcregen.results.judgednodes import JudgedNodes, judged_nodes

OTHER_SITE = codes.NVC782.code
OTHER_SITE_FILE = codes.NVC783.code


@dataclass(frozen=True)
class Evidence:
    """The newer runs of a site: verified ones with their node verdicts, and the rest."""

    verified: tuple[tuple[str, dict[str, str]], ...]  # (run id, node -> status), oldest first
    unverified: tuple[str, ...]  # newer run ids that do not verify or are refused
    foreign: tuple[str, ...] = ()  # findings: newer runs of another site or site file

    def judged(self, node: str) -> tuple[str, str] | None:
        """The newest verified run that judges `node`, and its status there; None if none."""
        return self._newest.get(node)

    @functools.cached_property
    def _newest(self) -> dict[str, tuple[str, str]]:
        """Each node's newest verdict, from one pass over the runs (oldest first)."""
        newest: dict[str, tuple[str, str]] = {}
        for run_id, statuses in self.verified:
            newest |= {node: (run_id, status) for node, status in statuses.items()}
        return newest


NAMED = 3  # runs a refusal names; it is written once per held node


def newer_runs(run_dir: Path, site: str, site_sha256: str = "") -> Evidence:
    """The runs of `run_dir`'s site folder measured after it (`locate`'s order).

    Args:
        run_dir: The quarantining run's folder.
        site: Its site's name: a newer run of another is no evidence (NVC782).
        site_sha256: The sha256 of the site file it was judged against: a newer run that
            records another is no evidence either (NVC783); "" checks no file.

    """
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
    foreign: list[str] = []
    for entry in later:
        if entry.problems:
            unverified.append(entry.run_id)
            continue
        try:
            judged = judged_nodes(entry.path)
        except (ArchiveFileError, OSError):  # verified, yet not what collect writes
            unverified.append(entry.run_id)
            continue
        other = _other_site(entry.run_id, judged, site, site_sha256)
        if other:
            foreign.append(other)
        else:
            verified.append((entry.run_id, judged.statuses))
    return Evidence(tuple(verified), tuple(unverified), tuple(foreign))


def _other_site(run_id: str, judged: JudgedNodes, site: str, site_sha256: str) -> str:
    """Why a newer run is no evidence for `site`'s quarantine; "" when it is its site's."""
    if judged.site != site:
        return (
            f"error[{OTHER_SITE}]: {run_id} is a run of site {judged.site!r}, not of"
            f" {site!r} (the quarantine's): no evidence for this site's nodes (hint: a run"
            " copied into another site's folder; move it back)"
        )
    if site_sha256 and judged.site_sha256 and judged.site_sha256 != site_sha256:
        return (
            f"error[{OTHER_SITE_FILE}]: {run_id} was judged against site file sha256"
            f" {judged.site_sha256[:12]}, not {site_sha256[:12]} as the quarantine was (its"
            " pools or thresholds may differ): no evidence for this quarantine (hint: collect"
            " its logs again with the quarantine's site file, or quarantine from a run of"
            " this one)"
        )
    return ""


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
            f" ({_some(evidence.unverified)} do not verify or are refused)"
            if evidence.unverified
            else ""
        )
        others = "".join(f"; {why}" for why in evidence.foreign[:NAMED])
        if len(evidence.foreign) > NAMED:
            others += f"; and {len(evidence.foreign) - NAMED} more runs of another site or file"
        return (
            f"no verified run newer than {run} judges it{skipped}: retest it "
            f"(`nvcregen retest`, or wait for a periodic run), collect, then release{others}"
        )
    run_id, status = judged
    if status != "cleared":
        return f"the newest run that judges it, {run_id}, holds it {status}: it stays held"
    return None


def _some(run_ids: Sequence[str]) -> str:
    """The first NAMED run ids, and how many more: a refusal is repeated for every node."""
    named = ", ".join(run_ids[:NAMED])
    return named + (f" and {len(run_ids) - NAMED} more" if len(run_ids) > NAMED else "")
