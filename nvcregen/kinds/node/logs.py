"""A `node-health` test's log judged as `nvcregen ingest node` judges it (pure).

The log names its node; it must be the node the run was pinned to. Every failing finding
(an error) becomes one of the record's errors, so the run fails and names the node as
failed (not suspect: the node was alone in its run); warnings are kept as warnings. A
check the log could not judge (its kernel log refused, NVC825; a value too long to read,
NVC800) makes the record `unjudged` unless the node failed: the node is not cleared. The
pool's `expect` (and its GPU count), filled per node from the site's inventory where it
states nothing, is the configuration a node must not drift from.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from nvcregen.ingest import IngestFormatError
from nvcregen.kindapi.registry import kind_of
from nvcregen.kinds.node.expect import NodeInventory, expectations_for, for_node
from nvcregen.kinds.node.files import merge
from nvcregen.kinds.node.health import Expectations, majority_findings, node_findings
from nvcregen.kinds.node.models import NodeFacts, NodeReport
from nvcregen.kinds.node.reader import parse_node_health_log
from nvcregen.plan.model import TestUnit
from nvcregen.results.kindlogs import KindRead
from nvcregen.results.logrecords import LogRecord, RunLog
from nvcregen.results.models import FailedNode

KIND = "node"


@functools.lru_cache(maxsize=4096)
def _parsed(text: str, path: str) -> tuple[tuple[str, NodeFacts], ...] | str:
    """A log's (node, facts) pairs, or why it cannot be read: parsed once a log.

    A log is judged once a node-health test and read again for its pool's majority
    (NVC818); its facts are frozen, so every reader shares one parse.
    """
    try:
        return tuple(parse_node_health_log(text, path))
    except IngestFormatError as exc:
        return str(exc)


def read_node_health(text: str, base: Mapping[str, Any], unit: TestUnit) -> dict[str, Any]:
    """A `LogRecord`'s fields for one node-health log: status ok, failed, unjudged or no-data."""
    path = str(base["path"])
    pairs = _parsed(text, path)
    if isinstance(pairs, str):
        return {**base, "kind": KIND, "status": "no-data", "errors": (pairs,)}
    node = pairs[0][0]
    planned = tuple(base.get("nodes") or ())
    if planned and node not in planned:
        message = f"the log is from node {node}, but the run was pinned to {', '.join(planned)}"
        return {**base, "kind": KIND, "status": "no-data", "errors": (message,)}
    facts: list[NodeFacts] = [f for _, f in pairs]
    report = merge(node, facts)
    expected = node_expectations(unit, node)
    where = {k: v for f in facts for k, v in f.where.items()}
    findings = node_findings(report, where, expected)
    errors = tuple(f"{f.code} {f.message}" for f in findings if f.fails)
    warnings = tuple(f"{f.code} {f.message}" for f in findings if not f.fails and not f.unjudged)
    unjudged = tuple(f"{f.code} {f.message} (hint: {f.hint})" for f in findings if f.unjudged)
    versions = (report.driver,) if report.driver else ()
    status = "failed" if errors else "unjudged" if unjudged else "ok"
    return {
        **base,
        "kind": KIND,
        "status": status,
        "errors": errors,
        "warnings": warnings,
        "unjudged": unjudged,
        "versions": versions,
        "hosts": (node,),
    }


def unjudged_nodes(
    records: Iterable[LogRecord], missing: Iterable[str] = ()
) -> tuple[FailedNode, ...]:
    """The nodes a node-health run did not judge whole, each with why: never cleared by it.

    A record neither `ok` nor `failed` (a check unjudged, a log unreadable, cut short or
    from another node) names its node: the one the run was pinned to or the pod ran on,
    else the one the log names. `missing` are planned nodes without any log.
    """
    found = [
        FailedNode(
            name=node,
            reason="NodeHealthUnjudged" if r.status == "unjudged" else "NodeHealthUnread",
            message="; ".join(r.unjudged or r.errors) or r.status,
        )
        for r in records
        if r.status not in ("ok", "failed") and not r.job_failed
        for node in (r.nodes or r.hosts)
    ]
    found += [
        FailedNode(name=node, reason="NodeHealthMissing", message="no finished node-health log")
        for node in missing
    ]
    return tuple(found)


def node_expectations(unit: TestUnit, node: str) -> Expectations:
    """What one node of the unit's pool must run: the pool's statement, then its inventory's."""
    return for_node(_expected(unit), node, _inventory(unit))


def _expected(unit: TestUnit) -> Expectations:
    source = f"pool {unit.pool.spec.name}"
    products = (*unit.pool.product_labels, *unit.pool.hardware.product_labels)
    return expectations_for(unit.pool.spec, unit.pool.gpus_per_node, source, products)


def _inventory(unit: TestUnit) -> NodeInventory | None:
    pool = unit.pool
    if pool.inventory is None:
        return None
    return NodeInventory(pool.inventory_file, pool.inventory, pool.spec.gpus_per_node is not None)


def _report(log: RunLog) -> NodeReport | None:
    pairs = _parsed(log.data.decode("utf-8", errors="replace"), log.path)
    if isinstance(pairs, str):
        return None
    return merge(pairs[0][0], [f for _, f in pairs])


def with_pool_majority(
    units: Sequence[TestUnit], logs: Sequence[RunLog], records: Sequence[LogRecord]
) -> tuple[LogRecord, ...]:
    """The records, node-health ones warned (NVC818) where the node differs from its pool.

    A node differs when it is not with the strict majority of its pool's nodes in a fact
    the pool does not state (driver, CUDA, VBIOS, GPU count, product): one pass over every
    test's logs, after each log was judged alone.
    """
    by_path = {log.path: log for log in logs}  # a packed log: the section of each test
    sections = {(log.path, hashlib.sha256(log.data).hexdigest()): log for log in logs if log.pod}
    found: dict[tuple[str, str], dict[str, list[str]]] = {}
    for unit in (u for u in units if kind_of(u.test).node_health):
        mine = [r for r in records if (r.stage, r.test) == (unit.stage.name, unit.test.name)]
        reports = [
            report
            for r in mine
            if r.kind == KIND
            and (log := sections.get((r.path, r.sha256)) or by_path.get(r.path)) is not None
            and (report := _report(log))
        ]
        extra = majority_findings(reports, _expected(unit))
        found[(unit.stage.name, unit.test.name)] = {
            node: [f"{f.code} {f.message}" for f in findings] for node, findings in extra.items()
        }
    updated = []
    for record in records:
        extra_warnings = found.get((record.stage, record.test), {}).get(
            record.hosts[0] if record.hosts else "", []
        )
        if record.kind == KIND and extra_warnings:
            warnings = (*record.warnings, *extra_warnings)
            updated.append(record.model_copy(update={"warnings": warnings}))
        else:
            updated.append(record)
    return tuple(updated)


class NodeHealthLogs:
    """The node-health kind's log reader (`results/kindlogs.py`'s `LogReader`)."""

    def read(
        self, text: str, base: Mapping[str, Any], unit: TestUnit, *, names_itself: bool, offset: int
    ) -> KindRead:
        """The record of one node-health log, judged node by node (`read_node_health`)."""
        return KindRead(LogRecord.model_validate(read_node_health(text, base, unit)))


READER = NodeHealthLogs()
