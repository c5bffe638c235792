"""The node-health kind's judging beyond one log (`results/nodekinds.py`'s `NodeJudge`)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from nvcregen.kinds.node import logs
from nvcregen.kinds.node.nvcreruns import judge_node_health_logs
from nvcregen.kinds.node.reader import MARK
from nvcregen.plan.model import TestUnit
from nvcregen.results.logrecords import LogRecord, RunLog
from nvcregen.results.models import FailedNode
from nvcregen.results.runs import RunSet


class NodeHealthJudge:
    """Its logs by their marker, its unjudged nodes, its pool's majority, NVCRE mode's runs."""

    def is_log(self, data: bytes) -> bool:
        """Whether a log holds the script's begin marker (`reader.MARK`)."""
        return f"{MARK} begin".encode() in data

    def unjudged(
        self, records: Iterable[LogRecord], missing: Iterable[str]
    ) -> tuple[FailedNode, ...]:
        """The nodes a run did not judge whole (`logs.unjudged_nodes`)."""
        return logs.unjudged_nodes(records, missing)

    def with_pool_majority(
        self, units: Sequence[TestUnit], logs_: Sequence[RunLog], records: Sequence[LogRecord]
    ) -> tuple[LogRecord, ...]:
        """The records, node-health ones warned where a node differs from its pool (NVC818)."""
        return logs.with_pool_majority(units, logs_, records)

    def judge_nvcre_logs(
        self, units: Sequence[TestUnit], runs: RunSet, logs_: Sequence[RunLog]
    ) -> tuple[RunSet, tuple[LogRecord, ...]]:
        """NVCRE mode's node-health runs judged from their saved pod logs (`nvcreruns.py`)."""
        return judge_node_health_logs(units, runs, logs_)


NODES = NodeHealthJudge()
