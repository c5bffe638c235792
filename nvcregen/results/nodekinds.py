"""What `results` and `collect` ask of a kind whose logs are judged node by node (`node_health`).

Such a kind (node-health: `nvidia-smi` and the kernel log of each node) holds, in its
package's `nodes` module, a `NODES` (`NodeJudge`): which logs are its own, the nodes a run
did not judge whole, the pool's majority read across every log once each was judged
alone, and NVCRE mode's runs judged from their saved pod logs. The functions below ask
every such kind among the registered ones (or the plan's units), so that `logruns.py`
and `collect` never import a kind (`kindapi/registry.py` finds the module by name).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol, TypeGuard, runtime_checkable

from nvcregen.kindapi.registry import KINDS, kind_of, part_of
from nvcregen.plan.model import TestUnit
from nvcregen.results.logrecords import LogRecord, RunLog
from nvcregen.results.models import FailedNode
from nvcregen.results.runs import RunSet


@runtime_checkable
class NodeJudge(Protocol):
    """A node-by-node kind's judging beyond one log (`nodes.NODES`)."""

    def is_log(self, data: bytes) -> bool:
        """Whether a saved or served log is one of this kind's (its begin marker)."""
        ...

    def unjudged(
        self, records: Iterable[LogRecord], missing: Iterable[str]
    ) -> tuple[FailedNode, ...]:
        """The nodes a run did not judge whole (and the `missing` ones), each with why."""
        ...

    def with_pool_majority(
        self, units: Sequence[TestUnit], logs: Sequence[RunLog], records: Sequence[LogRecord]
    ) -> tuple[LogRecord, ...]:
        """The records, this kind's warned where a node differs from its pool's majority."""
        ...

    def judge_nvcre_logs(
        self, units: Sequence[TestUnit], runs: RunSet, logs: Sequence[RunLog]
    ) -> tuple[RunSet, tuple[LogRecord, ...]]:
        """NVCRE mode: the runs with this kind's judged from their saved pod logs."""
        ...


def judges_nodes(found: object) -> TypeGuard[NodeJudge]:
    """Whether a kind's `nodes.NODES` is a `NodeJudge`."""
    return isinstance(found, NodeJudge)


def node_judge_of(kind: str) -> NodeJudge:
    """The node judge of a kind that says it judges node by node.

    Raises:
        ValueError: The kind holds none (a bug of the kind: `node_health` says it does).

    """
    found = part_of(kind, "nodes", "NODES", judges_nodes)
    if found is None:
        raise ValueError(f"the kind {kind} judges node by node and holds no nodes.NODES")
    return found


def _judges(kinds: Iterable[str]) -> list[NodeJudge]:
    """The node judges of the kinds named, each once, in registry order."""
    named = set(kinds)
    return [node_judge_of(k) for k, kind in KINDS.items() if k in named and kind.node_health]


def is_node_log(data: bytes) -> bool:
    """Whether a log is one of any node-by-node kind's (`collect` reads only those)."""
    return any(judge.is_log(data) for judge in _judges(KINDS))


def with_pool_majority(
    units: Sequence[TestUnit], logs: Sequence[RunLog], records: Sequence[LogRecord]
) -> tuple[LogRecord, ...]:
    """The records, each node-by-node kind's of the plan read across its pool (NVC818)."""
    judged = tuple(records)
    for judge in _judges(kind_of(u.test).name for u in units):
        judged = judge.with_pool_majority(units, logs, judged)
    return judged


def judge_nvcre_logs(
    units: Sequence[TestUnit], runs: RunSet, logs: Sequence[RunLog]
) -> tuple[RunSet, tuple[LogRecord, ...]]:
    """NVCRE mode: the runs with each node-by-node kind's judged from its saved pod logs."""
    records: tuple[LogRecord, ...] = ()
    for judge in _judges(kind_of(u.test).name for u in units):
        runs, found = judge.judge_nvcre_logs(units, runs, logs)
        records += found
    return runs, records


def unjudged_nodes(
    kind: str, records: Iterable[LogRecord], missing: Mapping[str, None]
) -> tuple[FailedNode, ...]:
    """A node-by-node kind's nodes its run did not judge whole (`logruns.py`)."""
    return node_judge_of(kind).unjudged(records, missing)
