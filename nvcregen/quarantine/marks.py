"""What quarantine sets on a node, and what it takes off again (pure).

A node that failed in a verified archive gets three things, all named for nvcregen:

- the label `nvcregen.io/quarantine=<site>`, so tenants' selectors and dashboards can
  leave it out (`!nvcregen.io/quarantine`);
- the taint `nvcregen.io/quarantine=<site>:NoSchedule`, so no new pod lands there unless
  it tolerates the taint (running pods stay: `NoExecute` would evict them, which is an
  operator's call, not a readiness tool's);
- the annotations `nvcregen.io/quarantine-run` (`<site>/<run>`: which archive did it)
  and `nvcregen.io/quarantine-reason` (the verdict's first reason, cut and printable).

Release takes off exactly these, and only from a node whose run annotation names the same
archive: a node quarantined by another run is left as it is, and said so.

`Node.spec.taints` is an atomic list (`x-kubernetes-list-type: atomic`): an apply owns
it whole. So the applied list is the node's list as read, with nvcregen's taint added or
taken out, and the apply carries the `resourceVersion` it was read at: a taint another
controller adds in between makes the apply fail with 409 and be read again, never lost.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from nvcregen.core.terminal import one_line
from nvcregen.report.archive import Archive, NodeVerdict

KEY = "nvcregen.io/quarantine"
RUN = "nvcregen.io/quarantine-run"
REASON = "nvcregen.io/quarantine-reason"
EFFECT = "NoSchedule"
_REASON_CHARS = 200


@dataclass(frozen=True)
class Mark:
    """What quarantine sets on one failed node."""

    node: str
    site: str
    run: str  # `<site>/<run id>`
    reason: str

    @property
    def taint(self) -> dict[str, str]:
        """The taint, as `spec.taints` holds it."""
        return {"key": KEY, "value": self.site, "effect": EFFECT}

    @property
    def labels(self) -> dict[str, str]:
        """The label."""
        return {KEY: self.site}

    @property
    def annotations(self) -> dict[str, str]:
        """The annotations."""
        return {RUN: self.run, REASON: self.reason}


@dataclass(frozen=True)
class Marks:
    """Every node an archive quarantines, and the held-back nodes it leaves alone."""

    site: str
    run: str
    marks: tuple[Mark, ...]
    left: tuple[NodeVerdict, ...]  # suspect, excluded or untested: not proven faulty


def marks_of(archive: Archive) -> Marks:
    """The marks of every node the archive's verdicts name failed."""
    site = archive.summary.site
    run = f"{site}/{archive.summary.run_id}"
    failed = [n for n in archive.verdicts.nodes if n.status == "failed"]
    left = tuple(n for n in archive.verdicts.nodes if n.status not in {"failed", "cleared"})
    marks = tuple(Mark(n.node, site, run, printable(_first(n))) for n in failed)
    return Marks(site, run, marks, left)


def _first(node: NodeVerdict) -> str:
    return node.reasons[0] if node.reasons else "failed in the readiness run"


def printable(text: str) -> str:
    """Text fit for an annotation and a terminal: one line (`core.terminal.one_line`), cut."""
    flat = " ".join(one_line(text).split())
    return flat if len(flat) <= _REASON_CHARS else flat[: _REASON_CHARS - 1] + "…"


def _ours(taint: Any, site: str) -> bool:
    return (
        isinstance(taint, dict)
        and taint.get("key") == KEY
        and taint.get("effect") == EFFECT
        and taint.get("value") == site
    )


def taints_of(node: dict[str, Any]) -> list[Any]:
    """The node's taints as read (an absent or malformed list is empty)."""
    found = (node.get("spec") or {}).get("taints") if isinstance(node, dict) else None
    return list(found) if isinstance(found, list) else []


def _meta(node: dict[str, Any], field: str) -> dict[str, Any]:
    found = (node.get("metadata") or {}).get(field)
    return found if isinstance(found, dict) else {}


def carries_any(node: dict[str, Any], mark: Mark) -> bool:
    """Whether any part of the mark is still on the node."""
    notes = _meta(node, "annotations")
    return (
        any(_ours(t, mark.site) for t in taints_of(node))
        or _meta(node, "labels").get(KEY) == mark.site
        or any(k in notes for k in mark.annotations)
    )


def is_marked(node: dict[str, Any], mark: Mark) -> bool:
    """Whether the node already carries every part of this mark."""
    labels, notes = _meta(node, "labels"), _meta(node, "annotations")
    return (
        any(_ours(t, mark.site) for t in taints_of(node))
        and labels.get(KEY) == mark.site
        and all(notes.get(k) == v for k, v in mark.annotations.items())
    )


def marked_by(node: dict[str, Any]) -> str | None:
    """The run that quarantined the node, when nvcregen did."""
    found = _meta(node, "annotations").get(RUN)
    return str(found) if found is not None else None


def set_body(node: dict[str, Any], mark: Mark) -> dict[str, Any]:
    """The apply that sets the mark: the taints as read plus nvcregen's, at their version."""
    kept = [t for t in taints_of(node) if not _ours(t, mark.site)]
    return _body(node, mark.node, [*kept, mark.taint], mark.labels, mark.annotations)


def release_body(node: dict[str, Any], mark: Mark) -> dict[str, Any]:
    """The apply that releases: the taints as read less nvcregen's, nothing else.

    Its label and annotations are left out; the server removes them when nvcregen alone
    owns them. The taint list is always applied, empty when nothing else is left: another
    controller may have written the list since, and then owns it, so leaving the list out
    would keep nvcregen's taint.
    """
    kept = [t for t in taints_of(node) if not _ours(t, mark.site)]
    return _body(node, mark.node, kept, {}, {})


def _body(
    node: dict[str, Any],
    name: str,
    taints: list[Any],
    labels: dict[str, str],
    annotations: dict[str, str],
) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name}
    version = (node.get("metadata") or {}).get("resourceVersion")
    if isinstance(version, str) and version:
        metadata["resourceVersion"] = version
    if labels:
        metadata["labels"] = labels
    if annotations:
        metadata["annotations"] = annotations
    body: dict[str, Any] = {"apiVersion": "v1", "kind": "Node", "metadata": metadata}
    body["spec"] = {"taints": taints}
    return body
