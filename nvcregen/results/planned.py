"""Node names against the site's plan, before they become a verdict, a retest or an API path.

A node name read back (a Workflow group, NVCRE's failed or succeeded nodes, an excluded
node, a verdict in an archive) is untrusted text. It is accepted only when it is a
Kubernetes node name (an RFC 1123 subdomain of at most 253 characters,
`core.kube.node_name_problem`) and a node the site's pools name. A stage on a selector
pool names no node, so a name its runs give is checked as a node name only (the rounds
are bound by model and count, NVC739); `quarantine` still touches none of them.

A refused name gets no node verdict: NVC750 names it, and the run that gave it fails.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from nvcregen.core import codes
from nvcregen.core.kube import node_name_problem
from nvcregen.core.terminal import one_line
from nvcregen.spec.v1alpha1 import Site

UNPLANNED = codes.NVC750.code


@dataclass(frozen=True)
class Plan:
    """The nodes a site's pools name, and the pools that select theirs by label."""

    nodes: frozenset[str]
    selector_pools: tuple[str, ...] = ()

    def refusal(self, name: object, *, by_list: bool = True) -> str | None:
        """Why `name` is refused (None when accepted).

        Args:
            name: The name as read.
            by_list: Whether it must be a node the pools name (False for a name a run
                on a selector pool gives: checked as a node name only).

        """
        problem = node_name_problem(name)
        if problem is not None:
            return problem
        if not by_list or name in self.nodes:
            return None
        text = f"{name} is not a node the site's pools name"
        if self.selector_pools:
            pools = ", ".join(self.selector_pools)
            text += f" (pool {pools} selects its nodes by label: no name of it is planned)"
        return text


def plan_of(site: Site) -> Plan:
    """The plan of a parsed site."""
    pools = site.spec.node_pools
    named = frozenset(n for p in pools for n in p.nodes or ())
    return Plan(named, tuple(p.name for p in pools if p.nodes is None))


def plan_of_data(data: Mapping[str, Any]) -> Plan:
    """The plan of a site's plain data (a file read back): only strings that are node names."""
    spec = data.get("spec")
    pools = spec.get("nodePools") if isinstance(spec, Mapping) else None
    named: set[str] = set()
    selectors: list[str] = []
    for pool in pools if isinstance(pools, list) else ():
        if not isinstance(pool, Mapping):
            continue
        nodes = pool.get("nodes")
        if not isinstance(nodes, list):
            selectors.append(one_line(str(pool.get("name", "?"))))
            continue
        named.update(n for n in nodes if isinstance(n, str) and node_name_problem(n) is None)
    return Plan(frozenset(named), tuple(selectors))


def pool_nodes(data: Mapping[str, Any]) -> dict[str, tuple[str, ...]]:
    """Each named pool's nodes, from a site's plain data (selector pools left out)."""
    spec = data.get("spec")
    pools = spec.get("nodePools") if isinstance(spec, Mapping) else None
    found: dict[str, tuple[str, ...]] = {}
    for pool in pools if isinstance(pools, list) else ():
        if isinstance(pool, Mapping) and isinstance(pool.get("nodes"), list):
            nodes = tuple(n for n in pool["nodes"] if isinstance(n, str))
            found[str(pool.get("name", ""))] = nodes
    return found


def shown(name: str) -> str:
    """A refused name as it may be printed: one line, escaped, at most 80 characters."""
    flat = one_line(name)
    return flat if len(flat) <= 80 else flat[:79] + "…"


def planned_tests(data: Mapping[str, Any], node: str) -> tuple[tuple[str, str], ...]:
    """Every (stage, test) the site's stages run on `node` (a stage's pool, else the first).

    From a site's plain data (a file read back): what is not a string is left out.
    """
    pools = pool_nodes(data)
    spec = data.get("spec")
    readiness = spec.get("readiness") if isinstance(spec, Mapping) else None
    stages = readiness.get("stages") if isinstance(readiness, Mapping) else None
    first = next(iter(_pool_names(data)), "")
    found: list[tuple[str, str]] = []
    for stage in stages if isinstance(stages, list) else ():
        if not isinstance(stage, Mapping) or not isinstance(stage.get("name"), str):
            continue
        pool = stage.get("pool") or first
        tests = stage.get("tests")
        if node in pools.get(str(pool), ()) and isinstance(tests, list):
            found += [(stage["name"], t) for t in tests if isinstance(t, str)]
    return tuple(dict.fromkeys(found))


def periodic_stages(data: Mapping[str, Any]) -> tuple[str, ...]:
    """The stages `readiness.periodic` runs again on its schedule (none without it)."""
    spec = data.get("spec")
    readiness = spec.get("readiness") if isinstance(spec, Mapping) else None
    periodic = readiness.get("periodic") if isinstance(readiness, Mapping) else None
    stages = periodic.get("stages") if isinstance(periodic, Mapping) else None
    return tuple(s for s in stages if isinstance(s, str)) if isinstance(stages, list) else ()


def _pool_names(data: Mapping[str, Any]) -> list[str]:
    """Every pool's name, in order (selector pools too)."""
    spec = data.get("spec")
    pools = spec.get("nodePools") if isinstance(spec, Mapping) else None
    return [
        str(p.get("name", ""))
        for p in (pools if isinstance(pools, list) else ())
        if isinstance(p, Mapping)
    ]
