"""Set or release quarantine marks on live nodes (`nvcregen quarantine --apply/--release`).

Each node is read (`GET /api/v1/nodes/<name>`), then written with one server-side apply
(`PATCH ...?fieldManager=nvcregen&force=true`, `application/apply-patch+yaml`) that
carries the `resourceVersion` it was read at (see `marks.py` for why the taint list needs
it). A 409 answer (the node changed since it was read) reads it again, up to `REREADS`
times. The answer of every write is read back: a mark is set, or gone, only when the
server's copy of the node says so.

Nodes are handled in the archive's order and the first node the API cannot answer for
stops the run: the nodes after it are reported as not attempted. Running the same command
again finishes the job: a node already marked (or already released) is not written.
`force=true` lets the apply take over the atomic taint list; it is never needed for the
label and annotations, which are nvcregen's own keys.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import quote

from nvcregen.cluster.client import Answer, Cluster, ServerUnreachableError
from nvcregen.cluster.retry import RetryPolicy, send_retried
from nvcregen.core.kube import node_name_problem
from nvcregen.quarantine.marks import (
    Mark,
    Marks,
    carries_any,
    is_marked,
    marked_by,
    missing,
    printable,
    release_body,
    set_body,
)
from nvcregen.results.planned import shown

FIELD_MANAGER = "nvcregen"
APPLY_PATCH = "application/apply-patch+yaml"
REREADS = 3
POLICY = RetryPolicy(attempts=4, backoff=0.5, max_retry_after=10.0, restarts=0)

Action = Literal[
    "set",
    "already set",
    "released",
    "not marked",
    "other run",
    "missing",
    "failed",
    "refused",
    "not attempted",
]
FINE: frozenset[str] = frozenset({"set", "already set", "released", "not marked", "other run"})


@dataclass(frozen=True)
class Outcome:
    """What happened on one node."""

    node: str
    action: Action
    detail: str = ""


class StopError(Exception):
    """The API could not answer for a node; the run stops there (its text says why)."""


def apply_marks(
    cluster: Cluster, marks: Marks, *, release: bool, policy: RetryPolicy = POLICY
) -> list[Outcome]:
    """Set (or release) every mark; one outcome per node, in the archive's order.

    A mark whose node is no node name is refused, first, before any request is sent
    (`marks_of` refuses them already; this keeps any other caller from sending one into
    a path).
    """
    bad = {m.node: why for m in marks.marks for why in [node_name_problem(m.node)] if why}
    outcomes = [Outcome(shown(node), "refused", why) for node, why in bad.items()]
    todo: Iterator[Mark] = (m for m in marks.marks if m.node not in bad)
    for mark in todo:
        try:
            outcomes.append(_one(cluster, policy, mark, marks.run, release=release))
        except StopError as stop:
            outcomes.append(Outcome(mark.node, "failed", str(stop)))
            outcomes.extend(Outcome(m.node, "not attempted") for m in todo)
    return outcomes


def _one(cluster: Cluster, policy: RetryPolicy, mark: Mark, run: str, *, release: bool) -> Outcome:
    for _ in range(REREADS):
        node = read_node(cluster, policy, mark.node)
        if node is None:
            return Outcome(mark.node, "missing", "no such node in the cluster")
        if release:
            owner = marked_by(node)
            if owner is None and not carries_any(node, mark):
                return Outcome(mark.node, "not marked")
            # no run annotation but this site's mark: released, as the mark names this site
            # (another site's quarantine of the node replaces the single run annotation)
            if owner is not None and owner != run:
                return Outcome(mark.node, "other run", f"quarantined by {owner}")
            body = release_body(node, mark)
        else:
            if is_marked(node, mark):
                return Outcome(mark.node, "already set")
            body = set_body(node, mark)
        answer = _write(cluster, policy, mark.node, body)
        if answer.status == 409:
            continue  # changed since read: read again
        if answer.status != 200 or not isinstance(answer.body, dict):
            raise StopError(_refusal("apply", answer))
        return _confirmed(answer.body, mark, release=release)
    raise StopError(f"the node changed under every one of {REREADS} applies (409 Conflict)")


def _confirmed(node: dict[str, Any], mark: Mark, *, release: bool) -> Outcome:
    if release:
        if carries_any(node, mark):
            return Outcome(
                mark.node, "failed", "part of the mark stays: another field manager owns it"
            )
        return Outcome(mark.node, "released")
    lacking = missing(node, mark)
    if lacking:
        text = f"the server's copy lacks the {' and the '.join(lacking)} after the apply"
        return Outcome(mark.node, "failed", text)
    return Outcome(mark.node, "set")


def _path(name: str) -> str:
    return f"/api/v1/nodes/{quote(name, safe='')}"


def read_node(cluster: Cluster, policy: RetryPolicy, name: str) -> dict[str, Any] | None:
    """The node as the API returns it; None when there is no such node (StopError: no answer)."""
    answer = _send(cluster, policy, "GET", name)
    if answer.status == 404:
        return None
    if answer.status != 200 or not isinstance(answer.body, dict):
        raise StopError(_refusal("read", answer))
    return answer.body


def _write(cluster: Cluster, policy: RetryPolicy, name: str, body: dict[str, Any]) -> Answer:
    query = (("fieldManager", FIELD_MANAGER), ("force", "true"))
    return _send(cluster, policy, "PATCH", name, query, body, content_type=APPLY_PATCH)


def _send(
    cluster: Cluster,
    policy: RetryPolicy,
    method: str,
    name: str,
    query: tuple[tuple[str, str], ...] = (),
    body: dict[str, Any] | None = None,
    *,
    content_type: str | None = None,
) -> Answer:
    try:
        return send_retried(
            cluster, policy, method, _path(name), query, body, content_type=content_type
        )
    except ServerUnreachableError as exc:
        raise StopError(f"no answer from {cluster.host}: {exc.reason or exc}") from exc


def _refusal(what: str, answer: Answer) -> str:
    message = answer.body.get("message") if isinstance(answer.body, dict) else None
    said = f": {printable(str(message))}" if message else ""
    return f"{what} refused: HTTP {answer.status}{said}"
