"""What the readiness layer asks of a readiness engine: its objects, found in its package.

Each readiness engine's package holds the objects that run a site's plan with it
(`engines/readiness/<engine>/objects.py`, `OBJECTS`), found through the registry
(`engineapi.registry.part_of`) and asked through `ReadinessObjects`: the compiler
(`compile/layers.py`) names no engine and writes none of an engine's runs itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, TypeGuard, runtime_checkable

from nvcregen.core.manifest import Manifest
from nvcregen.engineapi.protocol import ReadinessEngine
from nvcregen.engineapi.registry import required_part
from nvcregen.plan.model import TestUnit
from nvcregen.spec.v1alpha1 import Site

PART = "objects"  # the module of an engine's package holding its objects


@runtime_checkable
class ReadinessObjects(Protocol):
    """One readiness engine's objects running a planned site's tests (pure)."""

    def readiness(self, site: Site, test_units: Sequence[TestUnit]) -> list[Manifest]:
        """The readiness layer: every test's runs (or what the engine expands into them)."""
        ...

    def periodic(self, site: Site, test_units: Sequence[TestUnit]) -> list[Manifest]:
        """The periodic layer of `readiness.periodic`: [] where the engine has none."""
        ...

    def preview(self, readiness: Sequence[Manifest]) -> list[Manifest]:
        """What the engine will make of the `readiness` layer's objects, for review ([])."""
        ...


def is_objects(found: object) -> TypeGuard[ReadinessObjects]:
    """Whether an engine's `OBJECTS` writes a readiness layer."""
    return isinstance(found, ReadinessObjects)


def readiness_objects(engine: ReadinessEngine) -> ReadinessObjects:
    """The engine's writer of readiness objects.

    Raises:
        LookupError: The engine's package holds none (every registered engine has one).

    """
    return required_part(engine, PART, "OBJECTS", is_objects, "writes no readiness objects")
