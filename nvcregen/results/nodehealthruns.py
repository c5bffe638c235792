"""NVCRE mode: `node-health` runs judged from their saved pod logs (pure).

NVCRE records whether each node-health job exited 0; only the log says what `nvidia-smi`
showed. So the node-health run of an NVCRE site is judged from its pods' logs (saved under
`--from DIR/logs/`, as trainer mode's): each log names its node, a failing finding fails
that node alone (`failed`, not `suspect`), and the run is complete only when every planned
node has a log that finished. Without any log the run stays as NVCRE's objects say, with
a message that its nodes' health was not read.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from nvcregen.plan.model import TestUnit
from nvcregen.results.logruns import LogRecord, RunLog
from nvcregen.results.models import FailedNode, RunState
from nvcregen.results.nodehealth import read_node_health, with_pool_majority
from nvcregen.results.runs import RunResult, RunSet

MARK = b"@@nvcregen-node-health begin"


def is_node_health(log: RunLog) -> bool:
    """Whether a saved log is a node-health test's (it holds the begin marker)."""
    return MARK in log.data


def judge_node_health_logs(
    units: Sequence[TestUnit], runs: RunSet, logs: Sequence[RunLog]
) -> tuple[RunSet, tuple[LogRecord, ...]]:
    """The runs with each node-health run judged from the logs, and what each log held."""
    records: list[LogRecord] = []
    updated = list(runs.runs)
    problems = list(runs.problems)
    health = [u for u in units if u.test.node is not None]
    for index, run in enumerate(updated):
        unit = next(
            (u for u in health if (u.stage.name, u.test.name) == (run.stage, run.test)), None
        )
        if unit is None:
            continue
        mine = [_record(log, unit) for log in logs if is_node_health(log)]
        mine = [r for r in mine if not r.hosts or r.hosts[0] in (unit.pool.spec.nodes or r.hosts)]
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
    }
    text = log.data.decode("utf-8", errors="replace")
    return LogRecord.model_validate(read_node_health(text, base, unit))


def _judged(run: RunResult, unit: TestUnit, records: Sequence[LogRecord]) -> RunResult:
    if not records:
        note = "no node-health log was read: the nodes' health is not judged"
        return run.model_copy(update={"message": "; ".join(m for m in (run.message, note) if m)})
    failed = [r for r in records if r.status == "failed"]
    passed = {r.hosts[0] for r in records if r.status == "ok" and r.hosts}
    unread = [r for r in records if r.status not in ("ok", "failed")]
    planned = set(unit.pool.spec.nodes or passed | {r.hosts[0] for r in failed if r.hosts})
    seen = passed | {r.hosts[0] for r in failed if r.hosts}
    if failed:
        state, reason = RunState.FAILED, "NodeHealthFailed"
        message = "; ".join(f"{r.hosts[0]}: {', '.join(r.errors)}" for r in failed)
    elif planned <= seen and not unread:
        state, reason, message = RunState.SUCCEEDED, "LogsComplete", ""
    else:
        state, reason = RunState.IN_PROGRESS, "LogsIncomplete"
        missing = sorted(planned - seen)
        message = f"no finished node-health log of {', '.join(missing)}" if missing else ""
        message = "; ".join([message, *(f"{r.path}: {', '.join(r.errors)}" for r in unread)])
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
        }
    )
