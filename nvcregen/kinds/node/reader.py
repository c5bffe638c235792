"""The log a `node-health` test prints: one node's outputs between markers.

```
@@nvcregen-node-health begin node=gpu-node-07
@@nvcregen-node-health section=xml
<?xml version="1.0" ?> ... (nvidia-smi -q -x)
@@nvcregen-node-health section=kernel
[ 12.3] NVRM: Xid (PCI:0000:18:00): 79, ... (kernel NVRM lines, when readable)
@@nvcregen-node-health end
```

The node name is the one the pod ran on (`spec.nodeName`, through the downward API);
it is checked as a Kubernetes node name before it names anything. Sections are read by
the same parsers as loose files, and their spans point at the log's own lines.

The kernel section is the only place a node-health log shows Xid events, so a kernel
log the pod could not read (`dmesg` refused where `kernel.dmesg_restrict=1`: the script's
`[nvcregen] dmesg refused` line, or dmesg's own error, `dmesg: read kernel buffer failed:
Operation not permitted` or busybox's `dmesg: klogctl: ...`) and a log without a
kernel section leave the node's Xid events unjudged (NVC825), never silently clean.
"""

from __future__ import annotations

import dataclasses
import re

from nvcregen.core.errors import Span
from nvcregen.core.terminal import one_line
from nvcregen.ingest.limits import MAX_LINE
from nvcregen.ingest.lines import strip_prefix
from nvcregen.ingest.models import IngestFormatError
from nvcregen.kinds.node.models import UNJUDGED_XID, GpuFacts, NodeFacts, Unjudged
from nvcregen.kinds.node.smitext import parse_node_csv, parse_node_text
from nvcregen.kinds.node.smixml import parse_node_xml
from nvcregen.kinds.node.xid import parse_xids

MARK = "@@nvcregen-node-health"
SECTIONS = ("xml", "text", "csv", "kernel")
_BEGIN = re.compile(rf"^{MARK} begin node=(?P<node>[a-z0-9]([-a-z0-9.]{{0,251}}[a-z0-9])?)$")
_SECTION = re.compile(rf"^{MARK} section=(?P<section>[a-z]+)$")
_END = re.compile(rf"^{MARK} end\b")
REFUSED = "[nvcregen] dmesg refused"  # what the script prints when the kernel log is closed
# the script's line (its detail after the first colon), or dmesg's own error: util-linux's
# `dmesg: read kernel buffer failed: ...`, busybox's `dmesg: klogctl: ...`
_REFUSALS = (
    re.compile(rf"{re.escape(REFUSED)}[^:]*:?\s*(?P<detail>.*)$"),
    re.compile(r"(?<![\w-])(?P<detail>dmesg: (?:read kernel buffer failed|klogctl)\b.*)$"),
)
XID_HINT = (
    "the pod may not read the kernel log (kernel.dmesg_restrict=1): run the node-health pod"
    " with CAP_SYSLOG or privileged (its namespace then needs the privileged Pod Security"
    " level), or read the node's kernel log as root (`journalctl -k` or `dmesg`, its NVRM"
    " lines) and give it to `nvcregen ingest node` beside this log, in a folder named for"
    " the node; until its Xid events are read the node is not cleared"
)


def is_node_health_log(text: str) -> bool:
    """Whether the text holds a node-health begin marker."""
    return f"{MARK} begin" in text


def parse_node_health_log(text: str, file: str) -> list[tuple[str, NodeFacts]]:
    """The node named by the begin marker, and the facts of each of its sections.

    Raises:
        IngestFormatError: A begin marker with an invalid node name, an unknown section, no
            end marker (the test was cut short), or no nvidia-smi section.

    """
    raws = text.splitlines()
    lines = [strip_prefix(line) for line in raws]
    node: str | None = None
    current: str | None = None
    start = 0
    body: list[str] = []
    found: list[NodeFacts] = []
    ended = False
    for number, line in enumerate(lines, start=1):
        if not line.startswith(MARK):
            if current is not None:
                body.append(line)
            continue
        if current is not None:
            found += _section(current, body, file, start, raws[start - 1 : number - 1])
        body, current = [], None
        if (begin := _BEGIN.match(line)) is not None:
            if node is not None:
                raise IngestFormatError(
                    f"line {number}: a second begin marker; one log holds one node"
                )
            node = begin["node"]
        elif (section := _SECTION.match(line)) is not None:
            if node is None or section["section"] not in SECTIONS:
                raise IngestFormatError(
                    f"line {number}: section {section['section']!r} outside a node or unknown"
                )
            current, start = section["section"], number + 1
        elif _END.match(line):
            ended = True
            break
        elif line.startswith(f"{MARK} begin"):
            raise IngestFormatError(f"line {number}: a begin marker without a valid node name")
        else:
            raise IngestFormatError(f"line {number}: unreadable {MARK} marker")
    return _complete(node, ended, found, file)


def _complete(
    node: str | None, ended: bool, found: list[NodeFacts], file: str
) -> list[tuple[str, NodeFacts]]:
    if node is None:
        raise IngestFormatError(f"no valid `{MARK} begin node=NAME` marker")
    if not ended:
        raise IngestFormatError(
            f"node {node}: no end marker; the test stopped before it printed everything"
        )
    if not any(f.form != "log" for f in found):
        raise IngestFormatError(
            f"node {node}: no nvidia-smi section (did nvidia-smi run in the image?)"
        )
    if not any(f.form == "log" for f in found):
        cause = "the log has no kernel section (the test's script printed none)"
        found.append(NodeFacts(file=file, form="log", unjudged=(_xid_unjudged(cause, file),)))
    return [(node, facts) for facts in found]


def _xid_unjudged(cause: str, file: str, line: int = 1, column: int = 1) -> Unjudged:
    return Unjudged(UNJUDGED_XID, "Xid events", cause, XID_HINT, Span(file, line, column))


def _kernel(body: list[str], raws: list[str], file: str, start: int) -> NodeFacts:
    """The kernel section: its Xid events, or why they could not be read (NVC825).

    A refusal is looked for in the lines as printed (`raws`): launcher prefixes are not
    taken off, since `dmesg: ` and `klogctl: ` read as host labels would be.
    """
    for number, raw in enumerate(raws, start=start):
        line = raw[:MAX_LINE]
        found = next((m for p in _REFUSALS if (m := p.search(line)) is not None), None)
        if found is not None:
            detail = one_line(found["detail"].strip())[:200]
            cause = f"dmesg was refused ({detail})" if detail else "dmesg was refused"
            at = _xid_unjudged(cause, file, number, found.start() + 1)
            return NodeFacts(file=file, form="log", unjudged=(at,))
    text = "\n".join(body) + "\n"
    return NodeFacts(file=file, form="log", xids=tuple(parse_xids(text, file, start)), kernel=True)


def _section(kind: str, body: list[str], file: str, start: int, raws: list[str]) -> list[NodeFacts]:
    if kind == "kernel":
        return [_kernel(body, raws, file, start)]
    text = "\n".join(body) + "\n"
    if not text.strip():
        return []
    if kind == "xml":
        facts = parse_node_xml(text.lstrip("\n"), file)
        start += len(text) - len(text.lstrip("\n"))
    elif kind == "text":
        facts = parse_node_text(text, file)
    else:
        facts = parse_node_csv(text, file)
    return [_shifted(facts, start - 1)]


def _shifted(facts: NodeFacts, by: int) -> NodeFacts:
    """The facts with every span moved down `by` lines (a section's place in the log)."""

    def move(where: dict[str, Span]) -> dict[str, Span]:
        return {k: dataclasses.replace(s, line=s.line + by) for k, s in where.items()}

    gpus: tuple[GpuFacts, ...] = tuple(
        dataclasses.replace(g, where=move(g.where)) for g in facts.gpus
    )
    unjudged = tuple(
        dataclasses.replace(u, span=dataclasses.replace(u.span, line=u.span.line + by))
        for u in facts.unjudged
    )
    return dataclasses.replace(facts, gpus=gpus, where=move(facts.where), unjudged=unjudged)
