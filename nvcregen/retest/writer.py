"""`nvcregen retest RESULTS_DIR [--out FILE]`: read the archive, pair, write the site.

locate, verify -> the run (as `report` does: a run folder, or a site folder's newest)
site           -> the site file the run was judged against (provenance.json), whose
                  sha256 must still match: a changed site would retest other nodes
pair           -> suspects with cleared nodes (`pairs.py`); failed nodes need none
write          -> the retest site, compiled in memory first, then written (never over
                  an existing file) and compiled again from its file with every site
                  of its project, as `nvcregen validate` does, so that it is also
                  checked against the sites of its cluster (NVC690); a file that does
                  not pass is removed again, and nothing is said to be written
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nvcregen.chain.sites import SITES_DIR
from nvcregen.core.terminal import one_line
from nvcregen.engineapi.registry import DEFAULT_READINESS, READINESS
from nvcregen.report.archive import ReadArchive, read_archive
from nvcregen.report.folder import ReportError, verified_run
from nvcregen.report.judgedsite import judged_site
from nvcregen.results.nodes import NodeVerdict
from nvcregen.results.planned import plan_of_data, shown
from nvcregen.retest.narrow import write_narrowed
from nvcregen.retest.pairs import RetestPlan, failing_tests, plan_retest
from nvcregen.retest.rails import RailError, RailTarget, pool_hcas, rail_lines, rail_target
from nvcregen.retest.railsite import alone_data, alone_header, switch_ports
from nvcregen.retest.sitefile import (
    RetestError,
    budget_line,
    budget_of,
    compile_retest,
    retest_data,
    write_checked,
)

NVCRE_NOTE = (
    "NVCRE mode: two nodes is the floor of NVCRE's `diagnose` test scale (minGroupSize 2),"
    " so a failing pair cannot be split further by NVCRE; these pairs take its place."
)


@dataclass(frozen=True)
class Retest:
    """What `retest` found and wrote (`path` None when there is nothing to retest)."""

    path: Path | None
    lines: tuple[str, ...]


def write_retest(
    results_dir: Path, out: Path | None, site: Path | None, root: Path, rail: str | None = None
) -> Retest:
    """Write the retest site of an archived run (with `rail`, of that failing rail only).

    Raises:
        ReportError: When the archive cannot be found, verified or read.
        RetestError: When the site file is missing or changed, the retest site does not
            render, `out` exists, or `rail` is no rail that failed in the run (NVC792).

    """
    archive = read_archive(verified_run(results_dir).run)
    original = site or root / archive.provenance.site.file
    data = _original(archive, original)
    planned, refused = _planned(archive, data)
    ports, hcas = switch_ports(data, root), pool_hcas(data)
    if rail is not None:  # the rail's own node, alone, or paired as a suspect
        chosen = _rail(rail, planned, hcas)
        if chosen.alone:
            return _write_alone(archive, data, chosen, ports, (out, root, original))
        planned = [chosen.node, *(n for n in planned if n.status == "cleared")]
    else:
        narrowed = write_narrowed(archive, planned, data, out, root, original)  # a fabric
        if narrowed is not None:
            return Retest(narrowed[0], (*narrowed[1], *refused))
    pool_of = {
        n: str(p["name"]) for p in reversed(data["spec"]["nodePools"]) for n in p.get("nodes") or ()
    }
    plan = plan_retest(planned, pool_of)
    rails = rail_lines(plan, {n.node: n for n in planned}, hcas, ports)
    notes = [*_notes(plan, pool_of), *rails, *refused]
    if not plan.batches:
        return Retest(
            None, ("no suspect node to pair with a cleared one: nothing to retest", *notes)
        )
    new = retest_data(data, plan, pool_of)
    budget = budget_line(budget_of(new, root), new)
    header = _header(archive, plan, budget, new, pool_of)
    target = out or root / SITES_DIR / f"{new['metadata']['name']}.yaml"
    if target.exists():
        raise RetestError(f"{target} exists: give another --out, or remove it first")
    written = compile_retest(new, header, root, str(target))
    write_checked(target, written.text, original, root)
    pairs = [f"{p.suspect} with {p.cleared}" for b in plan.batches for p in b.pairs]
    batches = (
        f" ({len(plan.batches)} batches, one after the other)" if len(plan.batches) > 1 else ""
    )
    return Retest(target, (f"retest {written.name}: {'; '.join(pairs)}{batches}", budget, *notes))


def _rail(text: str, planned: list[NodeVerdict], hcas: dict[str, tuple[str, ...]]) -> RailTarget:
    try:
        return rail_target(text, planned, hcas)
    except RailError as exc:
        raise RetestError(str(exc)) from exc


def _write_alone(
    archive: ReadArchive,
    data: dict[str, Any],
    target: RailTarget,
    ports: Callable[[str, str], str],
    where: tuple[Path | None, Path, Path],
) -> Retest:
    """`--rail` of a node that failed alone: its tests naming the rail, on it alone."""
    out, root, original = where
    new, tests = alone_data(data, target)
    budget = budget_line(budget_of(new, root), new)
    node, port = target.node.node, ports(target.node.node, target.hca)
    header = alone_header(archive.summary.site, archive.summary.run_id, target, port)
    target_path = out or root / SITES_DIR / f"{new['metadata']['name']}.yaml"
    if target_path.exists():
        raise RetestError(f"{target_path} exists: give another --out, or remove it first")
    written = compile_retest(new, header, root, str(target_path))
    write_checked(target_path, written.text, original, root)
    runs = ", ".join(f"{stage} / {test}" for stage, test in tests)
    line = f"retest {written.name}: rail {node} {target.hca}{port}: {runs} on {node} alone"
    return Retest(target_path, (line + " (every rail of the node)", budget))


def _planned(archive: ReadArchive, data: dict[str, Any]) -> tuple[list[NodeVerdict], list[str]]:
    """The node verdicts of nodes the site's pools name, and a line for each other name.

    A name outside the plan, or no node name at all, is never written into a site file
    (not even its header): it is named in what `retest` prints, escaped, and left out.
    """
    plan = plan_of_data(data)
    kept: list[NodeVerdict] = []
    refused: list[str] = []
    for node in archive.verdicts.nodes:
        why = plan.refusal(node.node)
        if why is None:
            kept.append(node)
        elif node.status != "cleared":
            refused.append(f"{shown(node.node)} ({node.status}): refused, not retested: {why}")
    return kept, refused


def _original(archive: ReadArchive, path: Path) -> dict[str, Any]:
    try:
        return judged_site(archive, path)
    except ReportError as exc:
        raise RetestError(str(exc)) from exc


def site_cluster(archive: ReadArchive, root: Path) -> str:
    """The site's `spec.cluster` from the file provenance.json names, else the site name."""
    try:
        data = _original(archive, root / archive.provenance.site.file)
    except RetestError:
        return archive.summary.site
    return str(data["spec"].get("cluster") or archive.summary.site)


def _notes(plan: RetestPlan, pool_of: dict[str, str]) -> list[str]:
    notes = [
        f"{n.node} failed alone, no retest needed: {'; '.join(n.reasons)}" for n in plan.failed
    ]
    by_pool: dict[str, list[str]] = {}
    for node in plan.unpaired:
        by_pool.setdefault(pool_of.get(node, ""), []).append(node)
    for pool, nodes in by_pool.items():
        where = f"pool {pool} has no cleared node" if pool else "not a node of the site's pools"
        notes.append(
            f"{', '.join(nodes)}: suspect, not retested: {where} to pair"
            f" {'it' if len(nodes) == 1 else 'them'} with (retest beside a node known to be good)"
        )
    return notes


def _header(
    archive: ReadArchive,
    plan: RetestPlan,
    budget: str,
    data: dict[str, Any],
    pool_of: dict[str, str],
) -> str:
    s = archive.summary
    lines = [
        "yaml-language-server: $schema=../schemas/site.v1alpha1.json",
        f"Retest of site {s.site}, run {s.run_id}, written by `nvcregen retest`.",
        "Each suspect node (only in failing groups of several nodes) runs the tests it failed",
        "again in a group of two, the smallest a multi-node test runs, beside a cleared node",
        "(one that passed them): failing again names the suspect, passing clears it.",
        "",
    ]
    why = {n.node: n for n in archive.verdicts.nodes}
    for number, batch in enumerate(plan.batches, 1):
        lines.append(f"Pool retest-{number}, in pairs:")
        for pair in batch.pairs:
            tests = ", ".join(
                f"{stage} / {test}" for stage, test in failing_tests(why[pair.suspect])
            )
            lines.append(f"  {pair.suspect} (suspect in {tests}) with {pair.cleared} (cleared)")
    lines += ["", *_wrapped(budget)]
    if len(plan.batches) > 1:
        lines += _wrapped(
            f"More suspects than cleared nodes in a pool: {len(plan.batches)} batches, each a"
            " stage of its own, run one after the other, reusing the cleared nodes."
        )
    lines += [
        "It installs nothing of its own on the cluster: the original site's namespace,",
        "collector account, NVCRE, Trainer, JobSet, Kueue and LocalQueue, and Argo CD health",
        "checks are used as they are (nvcre.managed, dependencies.*.managed: false).",
    ]
    lines += [f"No retest: {note}" for note in _notes(plan, pool_of)]
    engine = READINESS.get(str(data["spec"]["readiness"].get("engine", DEFAULT_READINESS)))
    if engine is not None and engine.installs_nvcre:
        lines += _wrapped(NVCRE_NOTE)
    return "\n".join(one_line(line) for line in lines)  # the archive's text, escaped


def _wrapped(text: str, width: int = 86) -> Sequence[str]:
    words, lines, line = text.split(), [], ""
    for word in words:
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}".strip()
    return [*lines, line] if line else lines
