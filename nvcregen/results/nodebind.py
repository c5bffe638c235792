"""A trainer-mode log bound to its run by the node its begin line names (pure).

The script of every kind that says so (`TestKind.begin_line`) prints `@@nvcregen-<name>
begin node=N pod=P start=T` before its tool's output (`ingest.beginline`; DCGM's,
burn-in's, nvbandwidth's, the rails' and link counters' scripts, each under its own
mark). The node must be the one the Job is pinned to (and, when the log was read from a
cluster, the pod's `spec.nodeName`): a log naming another node was not produced by this
run. It is foreign evidence, NVC730 (fail, as an NCCL log whose ranks ran on another
host): its run fails, its node is neither cleared nor failed by its diagnostics, and
quarantine leaves the node to be retested (its failure is not its own). A begin line
that does not read is the same: the log names no run.

A log with no begin line, of a kind whose older renders printed none
(`TestKind.unmarked_before`: DCGM's), is read as before, bound to its slot by its Job's
name alone: a note says so (NVC739, never a failure). Its healthy JSON names neither
host nor time, so two nodes can print the same bytes; each is then incomplete by NVC740
(`copies.py`), as before.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from nvcregen.core import codes
from nvcregen.ingest.beginline import begin_line
from nvcregen.kindapi.registry import KINDS
from nvcregen.results.findings import Finding
from nvcregen.results.logrecords import LogRecord
from nvcregen.results.words import Word

FOREIGN = "foreign"
UNBOUND = codes.NVC730.code
UNNAMED = codes.NVC739.code
_UNREAD = ("no-data", "disordered")  # a log not read names no node for want of a line


def bind_node_log(
    text: str,
    base: Mapping[str, Any],
    *,
    names_itself: bool = False,
    offset: int = 0,
    mark: str,
) -> tuple[str, ...] | str:
    """The node a log names under `mark` (none for an older log), or why it is not its run's.

    `names_itself`: the run's exported Job gives its pod `NODE_NAME` and `POD_NAME`, so its
    script prints the begin line; a log without it is not that Job's (a line deleted to
    pass another node's log off as this one's: found by review). `offset` is the line of
    the log `text` starts after (a packed run's section), so a line is named in the log.
    """
    begin = begin_line(text, mark)
    if begin is None and names_itself:
        return (
            f"{UNBOUND}: {base['path']}: no `{mark} begin node=...` line, which this run's Job"
            " prints: the log is not its own"
        )
    if begin is None:
        return ()
    if isinstance(begin, str):
        return f"{UNBOUND}: {base['path']}: {begin}: the log names no run"
    planned: Sequence[str] = tuple(base.get("nodes") or ())
    pod_node = str(base.get("pod_node") or "")
    if planned and begin.node not in planned:
        expected = f"the Job is pinned to {', '.join(planned)}"
    elif pod_node and begin.node != pod_node:
        expected = f"the API scheduled its pod on {pod_node}"
    else:
        return (begin.node,)
    return (
        f"{UNBOUND}: {base['path']}:{begin.line + offset}: the log is from node {begin.node}"
        f" (pod {begin.pod}, started {begin.start}), but {expected}: another run's evidence"
    )


def prints_begin(job: Mapping[str, Any] | None) -> bool:
    """Whether an exported Job's containers get `NODE_NAME` (its script names its node)."""
    spec = (job or {}).get("spec")
    template = spec.get("template") if isinstance(spec, dict) else None
    pod = template.get("spec") if isinstance(template, dict) else None
    containers = pod.get("containers") if isinstance(pod, dict) else None
    return any(
        isinstance(c, dict)
        and any(isinstance(e, dict) and e.get("name") == "NODE_NAME" for e in c.get("env") or [])
        for c in containers or []
    )


def begin_findings(records: Iterable[LogRecord]) -> list[Finding]:
    """NVC730 for each foreign log, naming its slot's node; NVC739 once a test.

    The note is one per test for all its logs that name no node, not one per log.
    """
    found = []
    unnamed: dict[tuple[str, str], list[LogRecord]] = {}
    for r in records:
        if not _bound(r.kind):
            continue
        if r.status == FOREIGN:
            message = r.errors[0].removeprefix(f"{UNBOUND}: ") if r.errors else FOREIGN
            found.append(_finding(r, UNBOUND, "unbound", Word.FAIL, message, per_log=True))
        elif _unmarked_before(r.kind) and not r.hosts and r.status not in _UNREAD:
            unnamed.setdefault((r.stage, r.test), []).append(r)
    for logs in unnamed.values():
        first = logs[0].path + (f" and {len(logs) - 1} more" if len(logs) > 1 else "")
        mark = _unmarked_before(logs[0].kind)
        message = (
            f"{len(logs)} {logs[0].kind.upper()} log(s) ({first}) have no `{mark} begin"
            " node=...` line (an older render's script): each is bound to its node by its"
            " Job's name only;"
            " render, apply and run again to bind them by node"
        )
        found.append(_finding(logs[0], UNNAMED, "bound", Word.PASS, message, per_log=False))
    return found


def _finding(
    r: LogRecord, code: str, kind: str, word: Word, message: str, *, per_log: bool
) -> Finding:
    where = {"group": r.group, "round": r.round, "source": r.run, "nodes": r.nodes}
    return Finding.model_validate(
        {
            "code": code,
            "kind": kind,
            "word": word,
            "stage": r.stage,
            "test": r.test,
            "message": message,
            **(where if per_log else {}),
        }
    )


def _unmarked_before(kind: str) -> str | None:
    """The begin mark of a kind whose older renders' logs print none (NVC739), else None."""
    known = KINDS.get(kind)
    return None if known is None else known.unmarked_before


def _bound(kind: str) -> bool:
    """Whether a kind's logs are bound to their node by a begin line (its kind's trait)."""
    known = KINDS.get(kind)
    return known is not None and known.begin_line
