"""NVCRE mode: `node-health` runs judged from their saved pod logs (pure).

NVCRE records whether each node-health job exited 0; only the log says what `nvidia-smi`
showed. So the node-health run of an NVCRE site is judged from its pods' logs (saved under
`--from DIR/logs/`, as trainer mode's): each log names its node, a failing finding fails
that node alone (`failed`, not `suspect`), and the run is complete only when every planned
node has a log that finished: every node the pool names, or, for a selector pool, as many
distinct nodes as its `nodeCount` (a selector pool without a count can never be complete:
nothing says how many nodes should have answered). Without any log the run is incomplete,
whatever NVCRE's objects say: an exit status is no reading of a node's health. A node the
run did not judge whole (its log left a check unjudged, as a refused kernel log leaves its
Xid events, NVC825; its log unreadable; no log of a named node) is one of the run's
`unjudged_nodes`, which no other test's pass can clear.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from nvcregen.kindapi.registry import kind_of
from nvcregen.kinds.node.logs import read_node_health, unjudged_nodes, with_pool_majority
from nvcregen.plan.model import TestUnit
from nvcregen.results.logruns import LogRecord, RunLog
from nvcregen.results.models import FailedNode, RunState
from nvcregen.results.runs import RunResult, RunSet


def judge_node_health_logs(
    units: Sequence[TestUnit], runs: RunSet, logs: Sequence[RunLog]
) -> tuple[RunSet, tuple[LogRecord, ...]]:
    """The runs with each node-health run judged from the logs, and what each log held."""
    records: list[LogRecord] = []
    updated = list(runs.runs)
    problems = list(runs.problems)
    health = [u for u in units if kind_of(u.test).node_health]
    for index, run in enumerate(updated):
        unit = next(
            (u for u in health if (u.stage.name, u.test.name) == (run.stage, run.test)), None
        )
        if unit is None:
            continue
        named = frozenset(unit.pool.spec.nodes or ())
        mine = [_record(log, unit) for log in logs]  # collect kept only node-health logs
        mine = [r for r in mine if not r.hosts or not named or r.hosts[0] in named]
        records += mine
        updated[index] = _judged(run, unit, mine)
    if logs and not health:
        problems.append("node-health logs were given, but the site runs no node-health test")
    judged = with_pool_majority(units, logs, records)
    return RunSet(tuple(updated), runs.exports, tuple(problems)), judged


def _record(log: RunLog, unit: TestUnit) -> LogRecord:
    base: dict[str, Any] = {
        "path": log.path,
        "sha256": hashlib.sha256(log.data).hexdigest(),
        "stage": unit.stage.name,
        "test": unit.test.name,
        "run": log.name,
        "round": 1,
        "group": "",
        # NVCRE chooses the node; the log must still come from the node its pod ran on
        "nodes": (log.node,) if log.node else (),
        "pod_node": log.node,
    }
    text = log.data.decode("utf-8", errors="replace")
    return LogRecord.model_validate(read_node_health(text, base, unit))


def _judged(run: RunResult, unit: TestUnit, records: Sequence[LogRecord]) -> RunResult:
    if not records:
        note = "no node-health log was read: the nodes' health is not judged"
        message = "; ".join(m for m in (run.message, note) if m)
        update = {
            "state": RunState.IN_PROGRESS,
            "reason": "LogsMissing",
            "message": message,
            "unjudged_nodes": unjudged_nodes((), unit.pool.spec.nodes or ()),
        }
        return run.model_copy(update=update)
    failed = [r for r in records if r.status == "failed"]
    passed = {r.hosts[0] for r in records if r.status == "ok" and r.hosts}
    unread = [r for r in records if r.status not in ("ok", "failed")]
    seen = passed | {r.hosts[0] for r in failed if r.hosts}
    logged = seen | {n for r in unread for n in (r.nodes or r.hosts)}
    missing = _missing(unit, seen)
    if failed:
        state, reason = RunState.FAILED, "NodeHealthFailed"
        message = "; ".join(f"{r.hosts[0]}: {', '.join(r.errors)}" for r in failed)
    elif not missing and not unread:
        state, reason, message = RunState.SUCCEEDED, "LogsComplete", ""
    else:
        state, reason = RunState.IN_PROGRESS, "LogsIncomplete"
        message = "; ".join(
            [missing, *(f"{r.path}: {', '.join(r.errors or r.unjudged)}" for r in unread)]
        )
    nodes = tuple(
        FailedNode(name=r.hosts[0], reason="NodeHealthFailed", message="; ".join(r.errors))
        for r in failed
        if r.hosts
    )
    bad = {n.name for n in nodes}
    return run.model_copy(
        update={
            "state": state,
            "reason": reason,
            "message": message.strip("; "),
            "failed_nodes": tuple(run.failed_nodes) + nodes,
            "succeeded_nodes": tuple(sorted(passed - bad)),
            "unjudged_nodes": unjudged_nodes(
                (r for r in unread if not bad & set(r.nodes or r.hosts)),
                sorted(set(unit.pool.spec.nodes or ()) - logged),
            ),
        }
    )


def _missing(unit: TestUnit, seen: set[str]) -> str:
    """What is missing for the run to be complete, in words ("" when nothing is)."""
    if unit.pool.spec.nodes is not None:
        absent = sorted(set(unit.pool.spec.nodes) - seen)
        return f"no finished node-health log of {', '.join(absent)}" if absent else ""
    wanted = unit.pool.node_count
    if wanted is None:
        return (
            f"logs of {len(seen)} nodes, but pool {unit.pool.spec.name} is a selector pool with"
            " no nodeCount: nothing says how many nodes should have answered"
        )
    if len(seen) < wanted:
        return f"logs of {len(seen)} of the pool's {wanted} nodes (nodeCount)"
    return ""
