"""The next retest round of a site whose pool has a fabric: bisection over leaves.

For a pool placed by the site's inventory, the archive's groups (which failed, which
passed) are folded into suspect nodes and suspect links (`fabric.localise`), and the
next round's groups are written as a site: one pool and stage per group, running the
first test that failed, each group inside one leaf while nodes are suspect (halves of a leaf's
suspects, a lone suspect beside a cleared node of its leaf), then cleared nodes under
the leaves of suspect links. Run it, collect it, and retest again from that archive
until `retest` names the node or link. Sites without a fabric keep the pairs of
`pairs.py`.

Runs of one node (node-health, an intra-node stage) cross no NIC and no uplink: passing
one clears no node of a fabric failure, and a node that failed one is named already
(quarantine it): it runs in no retest group, and a failing group that held it is
explained by it. A narrowing round's own lone suspect (stage `narrowN`, run intra-node
when its leaf has no cleared node) counts as any group does.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from nvcregen.catalog.load import load_catalog
from nvcregen.core.terminal import one_line
from nvcregen.fabric.inventory import MAX_BYTES, Inventory
from nvcregen.fabric.inventoryfile import read_inventory
from nvcregen.fabric.localise import Group, learn, next_round
from nvcregen.fabric.names import shown
from nvcregen.kindapi.registry import kind_of
from nvcregen.report.archive import ReadArchive
from nvcregen.results.nodes import NodeRun, NodeVerdict
from nvcregen.retest.sitefile import (
    budget_line,
    budget_of,
    compile_retest,
    finish_retest,
    write_checked,
)
from nvcregen.spec.bounded import read_limited
from nvcregen.spec.load import load_document
from nvcregen.spec.v1alpha1 import PoolFabric

Data = dict[str, Any]
MAX_GROUPS = 32  # a site has at most 32 stages
_NARROW_STAGE = re.compile(r"narrow[0-9]+")  # the stages `narrowed_data` writes


@dataclass(frozen=True)
class Narrowing:
    """The next round: its groups, the (stage, test) failures they retest, what is named."""

    groups: tuple[Group, ...]
    tests: tuple[tuple[str, str], ...]
    named: str | None
    pool: str
    health: tuple[str, ...] = ()  # nodes that failed a run of one node: never retested


def node_tests() -> frozenset[str]:
    """The catalog's node-health tests (one node, no fabric)."""
    return frozenset(n for n, t in load_catalog().tests.items() if kind_of(t).node_health)


def narrow(
    nodes: list[NodeVerdict],
    data: Data,
    inventory: Inventory,
    single: frozenset[str] | None = None,
) -> Narrowing | None:
    """The next round for the first pool with a fabric; None when no pool has one.

    Args:
        nodes: The archive's node verdicts.
        data: The site.
        inventory: The site's inventory (the nodes' leaves).
        single: The tests that run one node at a time in any stage (default: the
            catalog's node-health tests).

    """
    pool = next((p for p in data["spec"]["nodePools"] if "fabric" in p and p.get("nodes")), None)
    if pool is None:
        return None
    levels = PoolFabric.model_validate(pool.get("fabric") or {}).levels
    members = [str(n) for n in pool["nodes"]]
    leaf = {
        n: inventory.nodes[n].fabric[levels.leaf]
        for n in members
        if n in inventory.nodes and levels.leaf in inventory.nodes[n].fabric
    }
    inside = set(members)
    single = node_tests() if single is None else single

    def alone(run: NodeRun) -> bool:  # one node, no fabric crossed
        return run.test in single or (
            run.scope == "intra-node" and not _NARROW_STAGE.fullmatch(run.stage)
        )

    lost = [(v.node, r.test) for v in nodes for r in v.runs if alone(r) and r.word == "fail"]
    health = tuple(sorted({node for node, _ in lost} & inside))
    why = ", ".join(sorted({test for node, test in lost if node in inside}))
    results: dict[Group, bool] = {}
    tests: list[tuple[str, str]] = []
    bad = set(health)
    seen: set[tuple[str, str, str, tuple[str, ...], str]] = set()
    for verdict in nodes:
        for run in verdict.runs:  # a group's run is listed under each of its members
            key = (run.stage, run.test, run.group, run.nodes or (verdict.node,), run.word)
            if key in seen:
                continue
            seen.add(key)
            group = tuple(n for n in run.nodes if n in inside) or (verdict.node,)
            failed = run.word == "fail"
            if alone(run) or (failed and not bad.isdisjoint(group)):
                continue
            results[group] = results.get(group, False) or failed
            if failed:
                tests.append((run.stage, run.test))
    learnt = learn(None, sorted(results.items()), leaf)
    known = replace(
        learnt,
        suspects=tuple(n for n in learnt.suspects if n not in health),
        cleared=learnt.cleared - set(health),
    )
    named = known.named()
    if named == "nothing" and health:
        named = f"node {shown(health)} (failed {why} alone)"
    groups = tuple(next_round(known, leaf, [n for n in members if n not in health]))
    found = tuple(dict.fromkeys(tests))
    return Narrowing(groups, found, named, str(pool["name"]), health)


def narrowed_data(original: Data, found: Narrowing) -> Data:
    """The original site with one pool and one stage per group of the next round."""
    data = copy.deepcopy(original)
    spec = data["spec"]
    template = next(p for p in spec["nodePools"] if p["name"] == found.pool)
    stages = {s["name"]: s for s in spec["readiness"]["stages"]}
    pools, new_stages = [], []
    for number, group in enumerate(found.groups, 1):
        pool = copy.deepcopy(template)
        pool["name"] = f"narrow-{number}"
        pool["nodes"] = list(group)
        pools.append(pool)
        for stage_name, test in found.tests[:1] or ():
            stage: Data = {"name": f"narrow{number}", "pool": pool["name"], "tests": [test]}
            stage["scope"] = "inter-node" if len(group) > 1 else "intra-node"
            if len(group) > 1:
                stage["nodesPerJob"] = len(group)
            for key in ("timeoutPerJob", "pinTransport"):
                if key in stages.get(stage_name, {}):
                    stage[key] = stages[stage_name][key]
            new_stages.append(stage)
    spec["nodePools"] = pools
    spec["readiness"]["stages"] = new_stages
    return finish_retest(data)


def write_narrowed(
    archive: ReadArchive,
    nodes: Sequence[NodeVerdict],
    data: Data,
    out: Path | None,
    root: Path,
    original: Path,
) -> tuple[Path | None, tuple[str, ...]] | None:
    """Write the next narrowing round of a fabric site; None when the site has no fabric.

    `nodes` are the archive's node verdicts of the nodes the site names (`writer._planned`).

    Returns:
        The file written (None when the fault is already named, or nothing can tell)
        and the lines to print.

    """
    named = data["spec"].get("inventory")
    if not isinstance(named, str):
        return None
    inventory = _inventory(root / named)
    if inventory is None:
        return None
    found = narrow(list(nodes), data, inventory)
    if found is None:
        return None
    if found.named is not None:
        return None, (f"named: {found.named}; nothing left to retest",)
    if not found.groups or len(found.groups) > MAX_GROUPS or not found.tests:
        return None  # the pairs of pairs.py take over
    new = narrowed_data(data, found)
    header = _header(archive, found, budget_line(budget_of(new, root), new))
    target = out or root / "sites" / f"{new['metadata']['name']}.yaml"
    if target.exists():
        from nvcregen.retest.sitefile import RetestError

        raise RetestError(f"{target} exists: give another --out, or remove it first")
    written = compile_retest(new, header, root, str(target))
    write_checked(target, written.text, original, root)  # renders beside the project's sites
    listed = "; ".join(f"[{shown(g)}]" for g in found.groups)
    lines = [f"retest {written.name}: {len(found.groups)} groups: {listed}"]
    if found.health:
        lines.append(f"failed alone, not retested (quarantine): {shown(found.health)}")
    return target, tuple(lines)


def _inventory(path: Path) -> Inventory | None:
    try:
        raw = read_limited(path, MAX_BYTES)  # a regular file, at most MAX_BYTES read
    except OSError:
        return None
    if raw is None:
        return None
    doc, _ = load_document(raw, path.name, max_bytes=MAX_BYTES)
    return read_inventory(doc)[0] if doc is not None else None


def _header(archive: ReadArchive, found: Narrowing, budget: str) -> str:
    s = archive.summary
    lines = [
        "yaml-language-server: $schema=../schemas/site.v1alpha1.json",
        f"Narrowing retest of site {s.site}, run {s.run_id}, written by `nvcregen retest`.",
        "The pool has a fabric: suspects are retested inside their leaf (no uplink crossed,",
        "so only a node can fail), halves at a time; then cleared nodes under the leaves of",
        "suspect links. Collect this run and retest again until the fault is named.",
        "",
    ]
    lines += [f"Pool narrow-{n}: {' '.join(g)}" for n, g in enumerate(found.groups, 1)]
    return "\n".join(one_line(line) for line in [*lines, "", budget])  # the archive's, escaped
