"""`retest --rail NODE/HCA` of a node that failed alone: its node's own tests again, alone.

A loopback rail (`rdma-rails`) or a port's counters (`link-counters`) fail their node
alone: nothing a partner could explain, so `retest` pairs it with no one. Once the rail
is repaired, the operator re-runs it: a site of one pool (the node) and, per original
stage, a stage of one node a job running the tests whose failure named the rail. The
rail is not a unit the plan schedules, so every rail of the node runs again; the output
says which one failed. Everything else is the retest site's (`sitefile.finish_retest`).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from functools import cache
from pathlib import Path

from nvcregen.core.errors import Span, has_errors
from nvcregen.core.terminal import one_line
from nvcregen.fabric.inventory import Inventory
from nvcregen.fabric.railnames import cabled
from nvcregen.retest.rails import RailTarget, names_rail
from nvcregen.retest.sitefile import Data, finish_retest
from nvcregen.validate.fabric import read_named_inventory

SITE_FILE = "site.yaml"  # what the retest site is called until it is written


def alone_data(original: Data, target: RailTarget) -> tuple[Data, list[tuple[str, str]]]:
    """The retest site's data, and the (stage, test) it runs on the node, alone."""
    node = target.node
    tests = [
        (run.stage, run.test)
        for run in node.runs
        if run.word == "fail" and run.nodes == (node.node,)
        and names_rail(run.why, node.node, target.hca)
    ]  # fmt: skip
    tests = list(dict.fromkeys(tests)) or [
        (r.stage, r.test) for r in node.runs if r.word == "fail" and r.nodes == (node.node,)
    ]
    data = copy.deepcopy(original)
    spec = data["spec"]
    pool = copy.deepcopy(next(p for p in spec["nodePools"] if node.node in (p.get("nodes") or ())))
    pool["name"], pool["nodes"] = "retest-1", [node.node]
    stages = {s["name"]: s for s in spec["readiness"]["stages"]}
    origins = list(dict.fromkeys(stage for stage, _ in tests))
    new_stages = []
    for k, stage in enumerate(origins, 1):
        new: Data = {"name": "retest1" if len(origins) == 1 else f"retest1-{k}",
                     "scope": "intra-node", "pool": "retest-1"}  # fmt: skip
        new["tests"] = [t for s, t in tests if s == stage]
        for key in ("timeoutPerJob", "pinTransport"):
            if key in stages[stage]:
                new[key] = stages[stage][key]
        new_stages.append(new)
    spec["nodePools"], spec["readiness"]["stages"] = [pool], new_stages
    return finish_retest(data), tests


def alone_header(archive_site: str, run_id: str, target: RailTarget, port: str) -> str:
    """The retest site's header: what it re-runs, and why alone."""
    lines = [
        "yaml-language-server: $schema=../schemas/site.v1alpha1.json",
        f"Retest of site {archive_site}, run {run_id}, written by `nvcregen retest --rail`.",
        f"Rail {target.node.node} {target.hca}{port} failed alone (its node's own test):",
        "the node runs that test again, alone, once the rail is repaired. Every rail of the",
        "node is measured again; a rail is not a unit the plan schedules.",
        "It installs nothing of its own on the cluster (see `nvcregen retest`).",
    ]
    return "\n".join(one_line(line) for line in lines)  # the archive's text, escaped


def switch_ports(data: Data, root: Path) -> Callable[[str, str], str]:
    """` (leaf-07 Ethernet1/12)` of a node's HCA where the site's inventory knows it.

    The inventory file the site names is read on the first call only (most retests name
    no rail), by the loader every site's inventory is read with, not by loading and
    planning the site. One it refuses names no port (the retest site's own compile
    reports why).
    """

    @cache
    def inventory() -> Inventory | None:
        named = data["spec"].get("inventory")
        if not isinstance(named, str):
            return None
        found, diagnostics = read_named_inventory(named, root, Span(SITE_FILE))
        return None if has_errors(diagnostics) else found

    return lambda node, hca: cabled(inventory(), node, hca)
