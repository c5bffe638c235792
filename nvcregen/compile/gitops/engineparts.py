"""What the GitOps layer asks of a GitOps engine: its objects, found in the engine's package.

Each GitOps engine's package holds the objects that apply a site's folders with it
(`engines/gitops/<engine>/objects.py`, `OBJECTS`), found through the registry
(`engineapi.registry.part_of`) and asked through `GitOpsObjects`: the compiler
(`layer.py`, `shards.py`, `compile/layers.py`) names no engine and writes none of an
engine's objects itself.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol, TypeGuard, runtime_checkable

from nvcregen.catalog.charts import ChartEntry
from nvcregen.catalog.engines import EngineFacts
from nvcregen.compile.gitops.steps import Step
from nvcregen.core.errors import Diagnostic
from nvcregen.core.manifest import Manifest
from nvcregen.engineapi.protocol import GitOpsEngine
from nvcregen.engineapi.registry import required_part
from nvcregen.spec.positions import Document
from nvcregen.spec.v1alpha1 import Site

PART = "objects"  # the module of an engine's package holding its objects


@runtime_checkable
class GitOpsObjects(Protocol):
    """One GitOps engine's objects applying a site's output layers (pure)."""

    def layer(
        self,
        site: Site,
        present: list[str],
        layers: Sequence[Manifest],
        charts: Mapping[str, ChartEntry],
    ) -> list[Manifest]:
        """The GitOps layer applying the `present` layers (in order) of a site with a repoURL.

        `layers` are those layers' manifests (what they hold, where the engine's units
        must allow it); `charts` what each chart version installs.
        """
        ...

    def problems(self, site: Site, doc: Document, url: str) -> list[Diagnostic]:
        """What the engine's source refuses or cannot follow of `spec.gitops` (repoURL `url`)."""
        ...

    def platform(self, site: Site) -> list[Manifest]:
        """What the platform layer carries for the engine (its health checks' config)."""
        ...

    def chain(
        self, site: Site, gitops: Sequence[Manifest], steps: Sequence[Step]
    ) -> list[Manifest]:
        """The GitOps layer with whatever makes the readiness steps apply one after another."""
        ...

    def shards(
        self,
        manifests: Sequence[Manifest],
        site: Site,
        source_file: str,
        folders: Mapping[str, list[Manifest]],
        facts: EngineFacts,
    ) -> list[Manifest]:
        """The site's objects with every readiness unit within the engine's limits.

        `folders` are the readiness layer's objects by folder (`shardpack.readiness_folders`).
        """
        ...


def is_objects(found: object) -> TypeGuard[GitOpsObjects]:
    """Whether an engine's `OBJECTS` writes a GitOps layer."""
    return isinstance(found, GitOpsObjects)


def objects_of(engine: GitOpsEngine) -> GitOpsObjects:
    """The engine's writer of GitOps objects.

    Raises:
        LookupError: The engine's package holds none (every registered engine has one).

    """
    return required_part(engine, PART, "OBJECTS", is_objects, "writes no GitOps objects")
