"""A `node-health` test's log judged as `nvcregen ingest node` judges it (pure).

The log names its node; it must be the node the run was pinned to. Every failing finding
(an error) becomes one of the record's errors, so the run fails and names the node as
failed (not suspect: the node was alone in its run); warnings are kept as warnings. The
pool's `expect` (and its GPU count) is the configuration a node must not drift from.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nvcregen.ingest import IngestFormatError
from nvcregen.ingest.node_expect import expectations_for
from nvcregen.ingest.node_files import merge
from nvcregen.ingest.node_health import node_findings
from nvcregen.ingest.node_log import parse_node_health_log
from nvcregen.ingest.node_models import NodeFacts
from nvcregen.plan.model import TestUnit

KIND = "node"


def read_node_health(text: str, base: Mapping[str, Any], unit: TestUnit) -> dict[str, Any]:
    """The fields of a `LogRecord` for one node-health log (`status` ok, failed or no-data)."""
    path = str(base["path"])
    try:
        pairs = parse_node_health_log(text, path)
    except IngestFormatError as exc:
        return {**base, "kind": KIND, "status": "no-data", "errors": (str(exc),)}
    node = pairs[0][0]
    planned = tuple(base.get("nodes") or ())
    if planned and node not in planned:
        message = f"the log is from node {node}, but the run was pinned to {', '.join(planned)}"
        return {**base, "kind": KIND, "status": "no-data", "errors": (message,)}
    facts: list[NodeFacts] = [f for _, f in pairs]
    report = merge(node, facts)
    source = f"pool {unit.pool.spec.name}"
    expected = expectations_for(unit.pool.spec, unit.pool.gpus_per_node, source)
    where = {k: v for f in facts for k, v in f.where.items()}
    findings = node_findings(report, where, expected)
    errors = tuple(f"{f.code} {f.message}" for f in findings if f.fails)
    warnings = tuple(f"{f.code} {f.message}" for f in findings if not f.fails) + report.notes
    versions = (report.driver,) if report.driver else ()
    status = "failed" if errors else "ok"
    return {
        **base,
        "kind": KIND,
        "status": status,
        "errors": errors,
        "warnings": warnings,
        "versions": versions,
        "hosts": (node,),
    }
