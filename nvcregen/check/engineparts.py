"""What `check` asks of a GitOps engine: its own checks of a site's tree, in its package.

A GitOps engine whose objects carry rules of their own (Argo CD's AppProjects permit what
their Applications apply: NVC680) holds its checks in its package
(`engines/gitops/<engine>/check.py`, `CHECKS`), found through the registry
(`engineapi.registry.parts`) and asked through `TreeChecks`; the render gate and
`nvcregen check` run every engine's on each site's objects and name no engine's objects.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeGuard, runtime_checkable

from nvcregen.catalog.charts import ChartEntry
from nvcregen.check.crossref import Located
from nvcregen.check.findings import Finding
from nvcregen.engineapi.registry import GITOPS, parts

PART = "check"  # the module of an engine's package holding its checks


@dataclass(frozen=True)
class Layered:
    """An object of a site's output, the layer (first folder) it is in, and its file."""

    layer: str
    located: Located


@runtime_checkable
class TreeChecks(Protocol):
    """A GitOps engine's checks of one site's objects (one cluster)."""

    def check(
        self, objects: Sequence[Layered], charts: Mapping[str, ChartEntry]
    ) -> Iterator[tuple[str, Finding]]:
        """Each finding with its file; `charts` what each chart version installs."""
        ...


def is_tree_checks(found: object) -> TypeGuard[TreeChecks]:
    """Whether an engine's `CHECKS` checks a site's tree."""
    return isinstance(found, TreeChecks)


def engine_findings(
    objects: Iterable[Layered], charts: Mapping[str, ChartEntry]
) -> Iterator[tuple[str, Finding]]:
    """Every registered GitOps engine's findings on one site's objects, in registry order."""
    listed = list(objects)
    for checks in parts(GITOPS, PART, "CHECKS", is_tree_checks):
        yield from checks.check(listed, charts)
