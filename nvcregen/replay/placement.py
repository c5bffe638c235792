"""Binding pods to nodes: which nodes a pod may use and whether they have room (pure).

Only extended resources (names with a `/`: GPUs, RDMA NICs) are counted against a node;
cpu, memory and pod counts are not modelled. Pods are placed first-fit over nodes sorted
by name, so the same tree always gives the same placement.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from nvcregen.replay.facts import Node
from nvcregen.replay.model import PodSet, Workload
from nvcregen.replay.selectors import Constraint

Free = dict[str, dict[str, int]]


def counted(resource: str) -> bool:
    """Whether a node's capacity bounds this resource (extended resources only)."""
    return "/" in resource


@dataclass
class Cluster:
    """The nodes and what is free on each; `place` and `release` change it.

    `memo` remembers which nodes each pod constraint allows; `fresh` shares it.
    """

    nodes: Sequence[Node]
    free: Free = field(default_factory=dict)
    memo: dict[tuple[Constraint, tuple[tuple[str, str], ...]], tuple[Node, ...]] = field(
        default_factory=dict
    )

    def __post_init__(self) -> None:
        self.nodes = tuple(sorted(self.nodes, key=lambda n: n.name))
        if not self.free:
            self.free = {n.name: dict(n.capacity) for n in self.nodes}

    def fresh(self) -> Cluster:
        """The same nodes, all free, sharing what is known about constraints."""
        return Cluster(self.nodes, memo=self.memo)

    def eligible(self, podset: PodSet, node_labels: Mapping[str, str]) -> tuple[Node, ...]:
        """The nodes a podset's pods may run on (and that carry its flavor's labels)."""
        labels = tuple(sorted(node_labels.items()))
        key = (podset.constraint, labels)
        found = self.memo.get(key)
        if found is None:
            found = tuple(
                n
                for n in self.nodes
                if podset.constraint.allows(n) and all(n.labels.get(k) == v for k, v in labels)
            )
            self.memo[key] = found
        return found

    def fits(self, workload: Workload, node_labels: Mapping[str, str]) -> bool:
        """Whether the workload could be placed now (nothing changes)."""
        bindings = self.place(workload, node_labels)
        if bindings is not None:
            self.release(bindings)
        return bindings is not None

    def place(
        self, workload: Workload, node_labels: Mapping[str, str] | None = None
    ) -> list[tuple[str, dict[str, int]]] | None:
        """Bind every pod of a workload at once, or none (returns the bindings or None)."""
        taken: list[tuple[str, dict[str, int]]] = []
        for podset in workload.podsets:
            want = {r: a for r, a in podset.requests.items() if counted(r)}
            candidates = self.eligible(podset, node_labels or {})
            # First fit, resumed where the last pod went: nodes skipped had no room, and
            # taking only lessens room, so the scan is linear in candidates, not quadratic.
            start = 0
            for _ in range(podset.count):
                start = next(
                    (
                        i
                        for i in range(start, len(candidates))
                        if _room(self.free[candidates[i].name], want)
                    ),
                    -1,
                )
                if start < 0:
                    self.release(taken)
                    return None
                node = candidates[start]
                _take(self.free[node.name], want)
                taken.append((node.name, want))
        return taken

    def release(self, bindings: Sequence[tuple[str, Mapping[str, int]]]) -> None:
        """Give back what `place` took."""
        for name, want in bindings:
            for resource, amount in want.items():
                self.free[name][resource] = self.free[name].get(resource, 0) + amount


def _room(free: Mapping[str, int], want: Mapping[str, int]) -> bool:
    return all(free.get(r, 0) >= a for r, a in want.items())


def _take(free: dict[str, int], want: Mapping[str, int]) -> None:
    for resource, amount in want.items():
        free[resource] = free.get(resource, 0) - amount


def candidate_nodes(
    workload: Workload, cluster: Cluster, node_labels: Mapping[str, str]
) -> frozenset[str]:
    """Every node some GPU pod of the workload may bind to."""
    return frozenset(
        n.name
        for p in workload.podsets
        if any(counted(r) for r in p.requests)
        for n in cluster.eligible(p, node_labels)
    )
