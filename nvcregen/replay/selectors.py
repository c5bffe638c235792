"""Which nodes a pod may run on, and how much it asks of them (pure).

A `Constraint` is what kube-scheduler (and Kueue's flavor and topology assignment) reads
from a pod: `nodeSelector`, required node affinity (terms OR-ed, requirements AND-ed,
`matchFields` on `metadata.name`), and NVCRE's `target.nodeNames`. Resource amounts are
integers: millicores for cpu, bytes for memory, counts for everything else.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Any

from nvcregen.core.fields import list_at, mapping_at
from nvcregen.core.quantity import whole_units
from nvcregen.plan.facts import Node


@dataclass(frozen=True)
class Requirement:
    """One node selector requirement: `key operator values`."""

    key: str
    operator: str
    values: tuple[str, ...] = ()

    def holds(self, labels: Mapping[str, str]) -> bool:
        """Whether labels (or, for a field, `{"metadata.name": name}`) satisfy it."""
        value = labels.get(self.key)
        if self.operator == "In":
            return value in self.values
        if self.operator == "NotIn":
            return value not in self.values
        if self.operator == "Exists":
            return value is not None
        if self.operator == "DoesNotExist":
            return value is None
        return _compares(self.operator, value, self.values)


@dataclass(frozen=True)
class Term:
    """One node selector term: label requirements and `metadata.name` field requirements."""

    labels: tuple[Requirement, ...] = ()
    fields: tuple[Requirement, ...] = ()


@dataclass(frozen=True)
class Constraint:
    """Every rule of one pod about its node; the empty constraint allows any node."""

    selector: tuple[tuple[str, str], ...] = ()
    terms: tuple[Term, ...] = ()
    names: frozenset[str] | None = None

    @cached_property
    def _hash(self) -> int:
        return hash((self.selector, self.terms, self.names))

    def __hash__(self) -> int:
        return self._hash

    def allows(self, node: Node) -> bool:
        """Whether the pod may run on this node."""
        labels = node.labels
        if any(labels.get(key) != value for key, value in self.selector):
            return False
        if self.names is not None and node.name not in self.names:
            return False
        fields = {"metadata.name": node.name}
        return not self.terms or any(
            all(r.holds(labels) for r in t.labels) and all(r.holds(fields) for r in t.fields)
            for t in self.terms
        )

    def allows_flavor(self, node_labels: Mapping[str, str]) -> bool:
        """Kueue's flavor match: only the rules on keys the flavor's nodeLabels name count."""
        keys = node_labels.keys()
        if any(node_labels[k] != v for k, v in self.selector if k in keys):
            return False
        kept = [[r for r in t.labels if r.key in keys] for t in self.terms]
        return not kept or any(all(r.holds(node_labels) for r in t) for t in kept)

    def also(self, other: Constraint) -> Constraint:
        """Both constraints at once (terms of the later one replace the earlier's)."""
        names = self.names if other.names is None else other.names
        if self.names is not None and other.names is not None:
            names = self.names & other.names
        return Constraint(
            tuple(dict([*self.selector, *other.selector]).items()),
            other.terms or self.terms,
            names,
        )


def pod_constraint(pod_spec: Mapping[str, Any]) -> Constraint:
    """The constraint of a pod spec: `nodeSelector` and required node affinity."""
    selector = mapping_at(pod_spec, "nodeSelector") or {}
    required = ("affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution")
    listed = list_at(pod_spec, *required, "nodeSelectorTerms")
    terms = tuple(_term(t) for t in listed if isinstance(t, dict))
    return Constraint(tuple((str(k), str(v)) for k, v in selector.items()), terms)


def target_constraint(target: Mapping[str, Any]) -> Constraint:
    """NVCRE's `target`: nodeSelector AND matchExpressions AND nodeNames (nvcre-api.md 1.1)."""
    selector = mapping_at(target, "nodeSelector") or {}
    expressions = _requirements(target.get("matchExpressions"))
    names = list_at(target, "nodeNames")
    return Constraint(
        tuple((str(k), str(v)) for k, v in selector.items()),
        (Term(expressions),) if expressions else (),
        frozenset(str(n) for n in names) if names else None,
    )


def _term(term: Mapping[str, Any]) -> Term:
    return Term(_requirements(term.get("matchExpressions")), _requirements(term.get("matchFields")))


def _requirements(items: Any) -> tuple[Requirement, ...]:
    return tuple(
        Requirement(
            str(i.get("key")), str(i.get("operator")), tuple(map(str, list_at(i, "values")))
        )
        for i in (items if isinstance(items, list) else [])
        if isinstance(i, dict)
    )


def _compares(operator: str, value: str | None, values: tuple[str, ...]) -> bool:
    """`Gt` and `Lt`: the label is an integer above (below) the one value."""
    try:
        number, bound = int(value or ""), int(values[0])
    except (ValueError, IndexError):
        return False
    return number > bound if operator == "Gt" else operator == "Lt" and number < bound


def quantity(resource: str, value: Any) -> int:
    """A resource amount as an integer: cpu in millicores, anything else in whole units.

    Raises:
        ValueError: the value is not a Kubernetes quantity this model reads.

    """
    amount = _amount(resource == "cpu", str(value).strip())
    if amount is None:
        raise ValueError(f"not a quantity: {value!r}")
    return amount


@lru_cache(maxsize=4096)
def _amount(millis: bool, text: str) -> int | None:
    """`quantity` of a text, None if it is none; remembered: a fleet repeats a few amounts."""
    try:
        return whole_units(text, millis=millis)
    except ValueError:
        return None


def requests_of(resources: Mapping[str, Any] | None) -> dict[str, int]:
    """A container's requests (limits stand in where requests are absent, as the API does)."""
    limits = mapping_at(resources, "limits") or {}
    merged = {**limits, **(mapping_at(resources, "requests") or {})}
    found: dict[str, int] = {}
    for name, value in merged.items():
        try:
            amount = quantity(str(name), value)
        except ValueError:
            continue
        if amount:
            found[str(name)] = amount
    return found


def add(*parts: Mapping[str, int]) -> dict[str, int]:
    """The sum of resource amounts."""
    total: dict[str, int] = {}
    for part in parts:
        for name, amount in part.items():
            total[name] = total.get(name, 0) + amount
    return total


def scaled(requests: Mapping[str, int], count: int) -> dict[str, int]:
    """`count` pods' worth of requests."""
    return {name: amount * count for name, amount in requests.items()}


def fits(requests: Mapping[str, int], free: Mapping[str, int], counted: Iterable[str]) -> bool:
    """Whether every counted resource requested is within what is free."""
    return all(requests.get(name, 0) <= free.get(name, 0) for name in counted if requests.get(name))
