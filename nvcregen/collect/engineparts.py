"""What `collect` asks of a readiness engine beyond its traits, found in the engine's package.

An engine whose results are not NVCRE's objects collects them itself: its package's
`collect` module holds `COLLECTOR` (trainer mode: its runs' pod logs). `collect` finds
it through the registry (`engineapi.registry.part_of`) and imports no engine's module.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, TypeGuard, runtime_checkable

from nvcregen.collect.model import CollectOptions, CollectOutcome, LoadedSite
from nvcregen.engineapi.protocol import ReadinessEngine
from nvcregen.engineapi.registry import part_of

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

PART = "collect"  # the module of an engine's package holding what collect asks of it


@runtime_checkable
class OwnCollector(Protocol):
    """An engine that collects, judges and archives its site's results itself."""

    def collect(
        self, loaded: LoadedSite, options: CollectOptions, key: Ed25519PrivateKey | None
    ) -> CollectOutcome:
        """Collect, judge and archive one site's results (`collect.collector.collect`)."""
        ...


def is_own_collector(found: object) -> TypeGuard[OwnCollector]:
    """Whether an engine's `COLLECTOR` collects a site."""
    return isinstance(found, OwnCollector)


def own_collector(engine: ReadinessEngine) -> OwnCollector | None:
    """The engine's own collector; None when its results are NVCRE's objects."""
    return part_of(engine, PART, "COLLECTOR", is_own_collector)
