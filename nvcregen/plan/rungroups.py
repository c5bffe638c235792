"""The node groups a test's runs cover, one run each per round (pure).

Trainer mode writes a TrainJob per group (a pair test's pairs too), and `results` places
a run's log by its group's index; both read the groups here, from the plan alone.
"""

from __future__ import annotations

from nvcregen.plan.model import TestUnit


def node_groups(unit: TestUnit) -> list[tuple[str, ...]]:
    """The node groups a test runs on: fabric groups, `nodesPerJob` named nodes each, or one.

    Fabric groups come from the stage's `groups`; one unnamed group serves a selector pool.
    Nodes left over after the last full group are not tested, as with NVCRE.
    """
    if unit.grouping is not None:
        return list(unit.grouping.groups)
    nodes = unit.pool.spec.nodes
    if nodes is None:
        return [()]
    size = unit.nodes_per_job
    return [tuple(nodes[i : i + size]) for i in range(0, len(nodes) - size + 1, size)]
