"""Findings about evidence refused or missing from a run (pure; issue #31).

- `refused` (NVC745-747): each measurement `results/admissible.py` refused, in its group
  and round: its run and group are incomplete;
- `missing` (NVC748): a group the run's Workflow names that no valid measurement holds,
  or a node of the stage's pool that no group of the run holds (NVCRE ran no group on
  it, or its groups were removed from the export). Runs whose test measures nothing
  (DCGM) and runs never found (already incomplete) are not asked.
"""

from __future__ import annotations

from nvcregen.core import codes
from nvcregen.plan.model import TestUnit
from nvcregen.results.findings import Finding
from nvcregen.results.runs import RunResult
from nvcregen.results.words import Word

MISSING = codes.NVC748.code


def refused(run: RunResult) -> list[Finding]:
    """One finding per refused measurement of a run."""
    nodes = {g.name: g.nodes for g in run.groups}
    return [
        Finding(
            code=r.code,
            kind="refused",
            word=Word.INCOMPLETE,
            stage=run.stage,
            test=run.test,
            group=r.group,
            round=r.iteration,
            source=r.ref.name,
            nodes=r.nodes or nodes.get(r.group, ()),
            message=f"{r.ref.kind} {r.ref.name}: {r.why}, refused as evidence",
        )
        for r in run.refused
    ]


def missing(run: RunResult, unit: TestUnit) -> list[Finding]:
    """Groups and planned nodes of a measuring run that no valid measurement holds."""
    if unit.test.measurement == "none" or run.source is None:
        return []
    measured = [*run.bandwidth, *run.goodput]
    held = {m.group for m in measured}
    named = {r.group for r in run.refused}  # refused rounds are findings of their own
    base = {"code": MISSING, "kind": "missing", "word": Word.INCOMPLETE}
    accounted = held | named  # once, not per group
    found = [
        Finding(
            **base,
            stage=run.stage,
            test=run.test,
            group=g.name,
            nodes=g.nodes,
            message=f"no valid measurement of group {g.name}"
            + (f" ({', '.join(g.nodes)})" if g.nodes else ""),
        )
        for g in run.groups
        if g.name not in accounted
    ]
    whole = len(held) == 1 and run.scope != "intra-node" and not any(m.nodes for m in measured)
    if unit.grouping is not None or whole:
        return found  # fabric rounds leave nodes out by design; one unnamed group is the pool
    covered = {n for m in [*measured, *run.refused] for n in m.nodes}
    covered |= {n for f in found for n in f.nodes}
    left = {*run.excluded_nodes, *(f.name for f in run.failed_nodes)}
    nodes = [n for n in unit.pool.spec.nodes or () if n not in covered and n not in left]
    found += [
        Finding(
            **base,
            stage=run.stage,
            test=run.test,
            nodes=(node,),
            message=f"node {node} of pool {unit.pool.spec.name} is in no measured group",
        )
        for node in nodes
    ]
    return found
