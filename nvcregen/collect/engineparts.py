"""What `collect` asks of a readiness engine beyond its traits, found in the engine's package.

An engine whose results are not NVCRE's objects collects them itself: its package's
`collect` module holds `COLLECTOR` (trainer mode: its runs' pod logs). An engine that
makes node-health runs of its own holds `NODE_LOGS` there, the reader of their logs
(NVCRE: the TrainJobs it creates). `collect` finds both through the registry
(`engineapi.registry.part_of`) and imports no engine's module.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Protocol, TypeGuard, runtime_checkable

from nvcregen.cluster.client import Cluster
from nvcregen.collect.model import CollectOptions, CollectOutcome, LoadedSite
from nvcregen.engineapi.protocol import ReadinessEngine
from nvcregen.engineapi.registry import part_of
from nvcregen.results.liveobjects import Obj
from nvcregen.results.logruns import RunLog
from nvcregen.spec.v1alpha1 import Site

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


@runtime_checkable
class NodeLogs(Protocol):
    """The reader of the logs of the node-health runs an engine makes itself."""

    def runs_created(self, owners: Iterable[Obj], tests: Iterable[str]) -> dict[str, datetime]:
        """When each node-health test's oldest run of the site's objects `owners` was made.

        A run made before it belongs to an earlier collection: its log is no evidence.
        """
        ...

    def read(
        self,
        site: Site,
        since: Mapping[str, datetime],
        namespaces: Iterable[str],
        cluster: Cluster,
        options: CollectOptions,
    ) -> tuple[list[RunLog], list[str]]:
        """The logs of the runs of each test made since `since`, and notes on those without.

        Raises:
            ApiCallError: A read that cannot be completed.

        """
        ...


def is_node_logs(found: object) -> TypeGuard[NodeLogs]:
    """Whether an engine's `NODE_LOGS` reads node-health logs."""
    return isinstance(found, NodeLogs)


def node_logs(engine: ReadinessEngine) -> NodeLogs | None:
    """The reader of the engine's own node-health runs; None when it makes none."""
    return part_of(engine, PART, "NODE_LOGS", is_node_logs)
