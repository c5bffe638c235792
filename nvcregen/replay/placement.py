"""Binding pods to nodes: which nodes a pod may use and whether they have room (pure).

Only extended resources (names with a `/`: GPUs, RDMA NICs) are counted against a node;
cpu, memory and pod counts are not modelled. Pods are placed first-fit over nodes sorted
by name, so the same tree always gives the same placement.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from nvcregen.plan.facts import Node
from nvcregen.replay.model import PodSet, Workload
from nvcregen.replay.selectors import Constraint, Term

Free = dict[str, dict[str, int]]


def counted(resource: str) -> bool:
    """Whether a node's capacity bounds this resource (extended resources only)."""
    return "/" in resource


@dataclass
class Cluster:
    """The nodes and what is free on each; `place` and `release` change it.

    `memo` remembers which nodes each pod constraint allows, and `index` which nodes
    carry each label (and name): a constraint naming its nodes (a hostname, a name field,
    `nodeNames`) is tried on those nodes only, not on the whole fleet. `fresh` shares both.
    """

    nodes: Sequence[Node]
    free: Free = field(default_factory=dict)
    memo: dict[tuple[Constraint, tuple[tuple[str, str], ...]], tuple[Node, ...]] = field(
        default_factory=dict
    )
    index: NodeIndex | None = None

    def __post_init__(self) -> None:
        self.nodes = tuple(sorted(self.nodes, key=lambda n: n.name))
        if not self.free:
            self.free = {n.name: dict(n.capacity) for n in self.nodes}
        if self.index is None:
            self.index = NodeIndex(self.nodes)

    def fresh(self) -> Cluster:
        """The same nodes, all free, sharing what is known about constraints."""
        return Cluster(self.nodes, memo=self.memo, index=self.index)

    def eligible(self, podset: PodSet, node_labels: Mapping[str, str]) -> tuple[Node, ...]:
        """The nodes a podset's pods may run on (and that carry its flavor's labels)."""
        labels = tuple(sorted(node_labels.items()))
        key = (podset.constraint, labels)
        found = self.memo.get(key)
        if found is None:
            assert self.index is not None  # set by __post_init__
            found = tuple(
                n
                for n in self.index.possible(podset.constraint, labels)
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


class NodeIndex:
    """Nodes (in name order) by label and by name, to narrow a constraint's candidates.

    `possible` returns a superset of the nodes a constraint allows, in the same order:
    the fewest of the nodes with one required label value, the nodes named by
    `nodeNames`, or those an `In` requirement of every term names; else every node.
    """

    def __init__(self, nodes: Sequence[Node]) -> None:
        self.nodes = tuple(nodes)
        self.called: dict[str, list[int]] = {}
        self.labelled: dict[tuple[str, str], list[int]] = {}
        for position, node in enumerate(self.nodes):
            self.called.setdefault(node.name, []).append(position)
            for pair in node.labels.items():
                self.labelled.setdefault(pair, []).append(position)

    def possible(self, constraint: Constraint, labels: Sequence[tuple[str, str]]) -> Sequence[Node]:
        """Every node that may satisfy `constraint` and carry `labels`, in name order.

        Each option is a union of position lists, sized without being built; only the
        smallest is built, so a rule every node meets costs nothing per constraint.
        """
        options = [[self.labelled.get(pair, [])] for pair in (*constraint.selector, *labels)]
        if constraint.names is not None:
            options.append([self.called.get(n, []) for n in constraint.names])
        by_terms = self._by_terms(constraint.terms)
        if by_terms is not None:
            options.append(by_terms)
        if not options:
            return self.nodes
        smallest = min(options, key=_size)
        if len(smallest) == 1:
            return [self.nodes[i] for i in smallest[0]]
        return [self.nodes[i] for i in sorted({i for part in smallest for i in part})]

    def _by_terms(self, terms: Sequence[Term]) -> list[list[int]] | None:
        """The nodes some term names with an `In` requirement; None when a term names none."""
        found: list[list[int]] = []
        for term in terms:
            named = [
                [self.labelled.get((r.key, v), []) for v in r.values]
                for r in term.labels
                if r.operator == "In"
            ]
            named += [
                [self.called.get(v, []) for v in r.values]
                for r in term.fields
                if r.operator == "In" and r.key == "metadata.name"
            ]
            if not named:
                return None
            fewest = min(named, key=_size)
            found += fewest
        return found if terms else None


def _size(parts: list[list[int]]) -> int:
    return sum(len(part) for part in parts)


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
