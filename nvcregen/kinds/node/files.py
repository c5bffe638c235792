"""`nvcregen ingest node`: read nvidia-smi outputs and kernel logs into per-node reports.

Files are grouped into nodes by their folder (a capture folder holds one node's XML,
text, CSV and kernel log), except a node-health test's log, which names its node in its
begin marker and carries its sections between markers (`node_log.py`). Of one node's
forms the XML is read first; the text and CSV forms fill the facts it lacks. A file over
`MAX_BYTES` (a pipe or a device read no further than one byte past it), or one that is
none of these forms, is an NVC800 error at the file.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from nvcregen.core.errors import Diagnostic, Severity, Span
from nvcregen.ingest.capped import TooLargeError, read_capped, too_large
from nvcregen.ingest.models import IngestFormatError, Json
from nvcregen.kinds.node.expect import NodeInventory, for_node
from nvcregen.kinds.node.health import Expectations, majority_findings, node_findings
from nvcregen.kinds.node.models import (
    UNJUDGED_XID,
    UNREADABLE,
    GpuFacts,
    NodeFacts,
    NodeReport,
    Unjudged,
)
from nvcregen.kinds.node.reader import is_node_health_log, parse_node_health_log
from nvcregen.kinds.node.smitext import BANNER, looks_like_csv, parse_node_csv, parse_node_text
from nvcregen.kinds.node.smixml import looks_like_xml, parse_node_xml
from nvcregen.kinds.node.xid import has_nvrm, parse_xids

CODE = UNREADABLE
MAX_BYTES = 16 * 1024 * 1024  # an 8-GPU `-q -x` is about 250 KB; a kernel log excerpt less
_RANK = {"xml": 0, "text": 1, "csv": 2, "log": 3}
HINT = (
    "give `nvidia-smi -q -x` (best), `nvidia-smi -q`, a `--query-gpu` CSV, kernel log lines"
    " with `NVRM:`, or a node-health test's log"
)
TOO_LARGE = (
    "an 8-GPU `nvidia-smi -q -x` is about 250 KB: give the output itself, not a stream or"
    " device that never ends"
)


@dataclass(frozen=True)
class NodeIngest:
    """Every node read, and the files that could not be."""

    nodes: tuple[NodeReport, ...]
    diagnostics: tuple[Diagnostic, ...] = ()

    @property
    def exit_code(self) -> int:
        """2 when a file, or a value in one, was unreadable; 1 when a node has a finding."""
        if self.diagnostics or any(f.code == CODE for n in self.nodes for f in n.findings):
            return 2
        return 1 if any(node.findings for node in self.nodes) else 0

    def to_json(self) -> Json:
        """The `--format json` form."""
        return {
            "nodes": [node.to_json() for node in self.nodes],
            "unreadable": [d.to_json() for d in self.diagnostics],
        }


def read_node_file(text: str, file: str) -> list[tuple[str | None, NodeFacts]]:
    """One file's facts: `(node name or None, facts)` pairs (several for a test's log).

    Raises:
        IngestFormatError: None of the forms `nvcregen ingest node` reads.

    """
    if is_node_health_log(text):
        return [(name, facts) for name, facts in parse_node_health_log(text, file)]
    if looks_like_xml(text):
        return [(None, parse_node_xml(text, file))]
    if BANNER in text:
        return [(None, parse_node_text(text, file))]
    if looks_like_csv(text):
        return [(None, parse_node_csv(text, file))]
    if has_nvrm(text):
        xids = tuple(parse_xids(text, file))
        return [(None, NodeFacts(file=file, form="log", xids=xids, kernel=True))]
    raise IngestFormatError(
        "not nvidia-smi output: no nvidia_smi_log XML, NVSMI LOG banner, --query-gpu header "
        "or NVRM line"
    )


def ingest_nodes(
    paths: Sequence[Path],
    expected: Expectations | None = None,
    inventory: NodeInventory | None = None,
) -> NodeIngest:
    """Read every file, group by node, merge the forms and judge each node.

    With the site's inventory, each node's expectations are filled from its entry.
    """
    groups: dict[str, list[NodeFacts]] = {}
    diagnostics: list[Diagnostic] = []
    for path in paths:
        name = str(path)
        try:
            text = read_capped(path, MAX_BYTES).decode("utf-8", errors="replace")
            pairs = read_node_file(text, name)
        except TooLargeError as exc:
            diagnostics.append(_error(name, too_large(exc, "a node's file"), TOO_LARGE))
            continue
        except OSError as exc:
            diagnostics.append(_error(name, f"cannot read the file: {exc.strerror or exc}"))
            continue
        except IngestFormatError as exc:
            diagnostics.append(_error(name, str(exc), HINT))
            continue
        for node, facts in pairs:
            key = node or _folder(path)
            if facts.form != "log" and any(f.form == facts.form for f in groups.get(key, [])):
                key = f"{key}/{path.stem}"
            groups.setdefault(key, []).append(facts)
    reports = [merge(node, group) for node, group in sorted(groups.items())]
    judged = [
        dataclasses.replace(
            r, findings=node_findings(r, _where(groups[r.node]), _of(expected, r.node, inventory))
        )
        for r in reports
    ]
    extra = majority_findings(judged, expected)
    judged = [
        dataclasses.replace(r, findings=r.findings + tuple(extra.get(r.node, ()))) for r in judged
    ]
    return NodeIngest(tuple(judged), tuple(diagnostics))


def _of(
    expected: Expectations | None, node: str, inventory: NodeInventory | None
) -> Expectations | None:
    return None if expected is None else for_node(expected, node, inventory)


def merge(node: str, group: Sequence[NodeFacts]) -> NodeReport:
    """One node's report from its forms: the best form's facts, gaps filled from the rest."""
    ordered = sorted(group, key=lambda f: (_RANK[f.form], f.file))
    smi = [f for f in ordered if f.form != "log"]
    gpus: list[GpuFacts] = list(smi[0].gpus) if smi else []
    for other in smi[1:]:
        by_index = {g.index: g for g in other.gpus}
        gpus = [_fill(gpu, by_index.get(gpu.index)) for gpu in gpus]
    return NodeReport(
        node=node,
        files=tuple(f.file for f in ordered),
        driver=next((f.driver for f in smi if f.driver), None),
        cuda=next((f.cuda for f in smi if f.cuda), None),
        attached_gpus=next((f.attached_gpus for f in smi if f.attached_gpus is not None), None),
        gpus=tuple(gpus),
        xids=tuple(event for f in ordered for event in f.xids),
        findings=(),
        unjudged=_unjudged(ordered),
    )


def _unjudged(group: Sequence[NodeFacts]) -> tuple[Unjudged, ...]:
    """What no form of the node judged: Xid events count as read where any form read them."""
    kernel = any(f.kernel for f in group)
    return tuple(u for f in group for u in f.unjudged if not (kernel and u.code == UNJUDGED_XID))


def _fill(gpu: GpuFacts, other: GpuFacts | None) -> GpuFacts:
    if other is None:
        return gpu
    missing = {
        name: getattr(other, name)
        for name in GpuFacts.__dataclass_fields__
        if name not in ("where", "index", "bus_id")
        and getattr(gpu, name) is None
        and getattr(other, name) is not None
    }
    if not missing:
        return gpu
    where = {**{k: v for k, v in other.where.items() if k in missing}, **gpu.where}
    return dataclasses.replace(gpu, where=where, **missing)


def _where(group: Sequence[NodeFacts]) -> dict[str, Span]:
    where: dict[str, Span] = {}
    for facts in sorted(group, key=lambda f: _RANK[f.form], reverse=True):
        where.update(facts.where)
    return where


def _folder(path: Path) -> str:
    parent = path.resolve().parent.name if path.parent == Path() else path.parent.name
    return parent or path.stem


def _error(file: str, message: str, hint: str = "") -> Diagnostic:
    return Diagnostic(Span(file), Severity.ERROR, CODE, message, hint=hint)
