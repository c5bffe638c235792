"""`nvcregen quarantine --format patch`: the applies as YAML an operator reviews and applies.

Each node is read (as `--apply` reads it) and its patch is the body `--apply` would send:
a Node with only what nvcregen owns, the label, the annotations and `spec.taints`, at the
`resourceVersion` read. `spec.taints` is an atomic list, owned whole by whoever applied
it last, so a patch that named only nvcregen's taint would take every other taint off
the node: the patch carries the node's taints as read, with nvcregen's added (or, with
`--release`, taken out), and the `resourceVersion` makes the apply fail with a conflict
if the node changed in between, rather than drop a taint added since; run it again then.
That is why the format needs `--context`: a node not read has no patch.

The output is a multi-document YAML stream for
`kubectl apply --server-side --field-manager=nvcregen -f -`; what it leaves out (nodes
not failed, refused, missing, another run's) is said in comments at its top, so the
stream is still only patches. Where another manager owns the taint list (the node
controller, `kubectl taint`), kubectl reports a conflict on `.spec.taints`: the patch
holds that list as read, and `--force-conflicts` takes it over, as `--apply` does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from nvcregen.cluster.client import Cluster
from nvcregen.cluster.retry import RetryPolicy
from nvcregen.core.kube import node_name_problem
from nvcregen.core.terminal import one_line
from nvcregen.emit.canonical import dump_yaml
from nvcregen.quarantine.apply import FIELD_MANAGER, POLICY, StopError, read_node
from nvcregen.quarantine.marks import (
    Mark,
    Marks,
    carries_any,
    is_marked,
    marked_by,
    release_body,
    set_body,
)
from nvcregen.results.planned import shown

APPLY_COMMAND = f"kubectl apply --server-side --field-manager={FIELD_MANAGER} -f -"


@dataclass(frozen=True)
class Patch:
    """One node's patch, or why it has none (`body` None)."""

    node: str
    body: dict[str, Any] | None
    note: str = ""  # said in the header: `already set`, `missing`, ...
    failed: bool = False  # a node the run names failed that gets no patch (exit 1)

    @property
    def written(self) -> bool:
        """Whether the stream holds a patch for the node."""
        return self.body is not None


def node_patches(
    cluster: Cluster, marks: Marks, *, release: bool, policy: RetryPolicy = POLICY
) -> list[Patch]:
    """Each mark's node read, and the apply `--apply` would send for it, in the archive's order.

    As `apply_marks` decides: a node already marked still gets its patch (applying it
    changes nothing); `--release` writes none for a node no mark of this site is on or
    that another run quarantined. The first node the API cannot answer for stops the
    reads: it and the nodes after it get no patch.
    """
    found: list[Patch] = [
        Patch(shown(m.node), None, f"refused: {why}", failed=True)
        for m in marks.marks
        for why in [node_name_problem(m.node)]
        if why
    ]
    todo = [m for m in marks.marks if not node_name_problem(m.node)]
    for index, mark in enumerate(todo):
        try:
            node = read_node(cluster, policy, mark.node)
        except StopError as stop:
            found.append(Patch(mark.node, None, f"not read: {stop}", failed=True))
            after = todo[index + 1 :]
            found += [
                Patch(m.node, None, "not read: a node before it was not", failed=True)
                for m in after
            ]
            break
        found.append(_patch(node, mark, marks.run, release=release))
    return found


def _patch(node: dict[str, Any] | None, mark: Mark, run: str, *, release: bool) -> Patch:
    if node is None:
        return Patch(mark.node, None, "missing: no such node in the cluster", failed=True)
    if not release:
        note = "already set: applying it changes nothing" if is_marked(node, mark) else ""
        return Patch(mark.node, set_body(node, mark), note)
    owner = marked_by(node)
    if owner is None and not carries_any(node, mark):
        return Patch(mark.node, None, "not marked: nothing to release")
    if owner is not None and owner != run:
        return Patch(mark.node, None, f"other run: quarantined by {owner}, left as it is")
    return Patch(mark.node, release_body(node, mark))


def as_patch(marks: Marks, patches: Sequence[Patch], *, release: bool) -> str:
    """The patches as one YAML stream, what it leaves out said in comments at its top."""
    what = "release" if release else "quarantine"
    header = [
        f"{marks.run}: {what} as server-side applies, for review; apply with",
        f"  {APPLY_COMMAND}",
        "Each patch holds only nvcregen's label, annotations and taint, and the node's",
        "other taints as read: spec.taints is an atomic list that an apply sets whole.",
        "metadata.resourceVersion is the node's as read: if the node changed since, the",
        "apply fails with a conflict; run nvcregen quarantine --format patch again.",
        "A conflict on .spec.taints: another manager owns the list; this patch holds it as",
        "read, and --force-conflicts takes it over (as nvcregen quarantine --apply does).",
    ]
    header += [f"{p.node}: {p.note}" for p in patches if p.note]
    header += [
        f"{n.node} ({n.status}): not quarantined, not proven faulty (retest it first)"
        for n in marks.left
    ]
    header += [f"{r.node} ({r.status}): refused, no patch: {r.why}" for r in marks.refused]
    if not any(p.written for p in patches):
        header.append("no patch: nothing to apply")
    comments = "".join(f"# {one_line(line)}\n" for line in header)  # one line each
    docs = [dump_yaml(p.body) for p in patches if p.body is not None]
    return comments + "---\n".join(docs)
