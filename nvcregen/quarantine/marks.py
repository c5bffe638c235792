"""What quarantine sets on a node, and what it takes off again (pure).

A node that failed in a verified archive gets three things, all named for nvcregen:

- the label `nvcregen.io/quarantine=<site>`, so tenants' selectors and dashboards can
  leave it out (`!nvcregen.io/quarantine`);
- the taint `nvcregen.io/quarantine=<site>:NoSchedule`, so no new pod lands there unless
  it tolerates the taint (running pods stay: `NoExecute` would evict them, which is an
  operator's call, not a readiness tool's);
- the annotations `nvcregen.io/quarantine-run` (`<site>/<run>`: which archive did it),
  `nvcregen.io/quarantine-reason` (the verdict's first reason, cut and printable) and
  `nvcregen.io/quarantine-tests` (the tests that failed it, `<stage>/<test>, ...`: what a
  newer run must pass on the node before `--release` takes the mark off).

The tests are the run's own record: of the groups verdicts.json lists for the node, the
tests it failed alone or was suspect on (`results/nodetests.py`). The gate reads them
from the quarantining run's archive, which the mark names, not from the annotation: a mark
set before the annotation existed has the same tests, and an annotation edited on the
node moves nothing. A failed node whose verdict records no failing group (an archive
written by hand) needs a pass of every test the site's stages run on it (`tests_from`
"plan").

Release takes off exactly these, and only from a node whose run annotation names the same
archive: a node quarantined by another run is left as it is, and said so.

`Node.spec.taints` is an atomic list (`x-kubernetes-list-type: atomic`): an apply owns
it whole. So the applied list is the node's list as read, with nvcregen's taint added or
taken out, and the apply carries the `resourceVersion` it was read at: a taint another
controller adds in between makes the apply fail with 409 and be read again, never lost.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from nvcregen.core import codes
from nvcregen.core.terminal import one_line
from nvcregen.report.archive import ReadArchive
from nvcregen.results.findings import Finding
from nvcregen.results.nodes import NodeVerdict
from nvcregen.results.nodetests import TestKey, failing_tests
from nvcregen.results.planned import (
    periodic_stages,
    plan_of_data,
    planned_tests,
    pool_nodes,
    shown,
)

KEY = "nvcregen.io/quarantine"
RUN = "nvcregen.io/quarantine-run"
REASON = "nvcregen.io/quarantine-reason"
TESTS = "nvcregen.io/quarantine-tests"
EFFECT = "NoSchedule"
_REASON_CHARS = 200
_TESTS_CHARS = 1000


@dataclass(frozen=True)
class Mark:
    """What quarantine sets on one failed node."""

    node: str
    site: str
    run: str  # `<site>/<run id>`
    reason: str
    tests: tuple[TestKey, ...] = ()  # (stage, test) that failed it in `run`
    tests_from: str = "run"  # "run": its failing groups; "plan": none recorded (see above)

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
        """The annotations (the tests' only when there are any)."""
        found = {RUN: self.run, REASON: self.reason}
        return found | ({TESTS: tests_text(self.tests, self.tests_from)} if self.tests else {})


@dataclass(frozen=True)
class Refusal:
    """A node the archive holds back that quarantine will not touch, and why."""

    node: str  # as it may be printed (`planned.shown`)
    status: str
    why: str


@dataclass(frozen=True)
class Marks:
    """Every node an archive quarantines, the held-back nodes it leaves, those it refuses."""

    site: str
    run: str
    marks: tuple[Mark, ...]
    left: tuple[NodeVerdict, ...]  # suspect, excluded or untested: not proven faulty
    refused: tuple[Refusal, ...] = ()  # outside the plan, or failed on unbound evidence
    periodic: tuple[str, ...] = ()  # the stages readiness.periodic runs again (release hints)


def marks_of(archive: ReadArchive, site: Mapping[str, Any]) -> Marks:
    """The marks of every planned node the archive's verdicts name failed.

    A held-back node the site's pools do not name (or no node name at all) is refused,
    as is every node of a pool that failed whole on unbound evidence (`_unbound_pools`).

    Args:
        archive: The verified run.
        site: The site it was judged against (`report.judgedsite`): its plan.

    """
    name = archive.summary.site
    run = f"{name}/{archive.summary.run_id}"
    plan = plan_of_data(site)
    held = [n for n in archive.verdicts.nodes if n.status != "cleared"]
    refused = [
        Refusal(shown(n.node), n.status, why)
        for n in held
        for why in [plan.refusal(n.node)]
        if why is not None
    ]
    planned = [n for n in held if plan.refusal(n.node) is None]
    failed = [n for n in planned if n.status == "failed"]
    unbound = _unbound_pools(archive, site, failed) | _foreign(archive, failed)
    refused += [Refusal(n.node, n.status, unbound[n.node]) for n in failed if n.node in unbound]
    marks = tuple(_mark(n, name, run, site) for n in failed if n.node not in unbound)
    left = tuple(n for n in planned if n.status != "failed")
    return Marks(name, run, marks, left, tuple(refused), periodic_stages(site))


def _mark(node: NodeVerdict, site_name: str, run: str, site: Mapping[str, Any]) -> Mark:
    """A failed node's mark, with the tests that failed it (else every test planned on it)."""
    reason = printable(_first(node))
    tests = failing_tests(node.node, node.runs)
    if tests:
        return Mark(node.node, site_name, run, reason, tests)
    return Mark(node.node, site_name, run, reason, planned_tests(site, node.node), "plan")


def tests_text(tests: tuple[TestKey, ...], tests_from: str = "run") -> str:
    """The tests as the annotation holds them: `<stage>/<test>, ...`, printable, cut whole.

    Tests the run did not record (`tests_from` "plan") are said to be the site's.
    """
    named = [printable(f"{stage}/{test}") for stage, test in tests]
    text, shown_ = "", 0
    for item in named:
        more = f", {item}" if text else item
        if len(text) + len(more) > _TESTS_CHARS:
            break
        text, shown_ = text + more, shown_ + 1
    if shown_ < len(named):
        text += f" and {len(named) - shown_} more"
    return f"not recorded; every test the site runs on it: {text}" if tests_from == "plan" else text


def _unbound_pools(
    archive: ReadArchive, site: Mapping[str, Any], failed: list[NodeVerdict]
) -> dict[str, str]:
    """The failed nodes of each pool whose every node failed only on unbound evidence.

    A node failed on unbound evidence (NVC730-734: another host, GPU model or rank count
    than the plan's; NVC750) when every group it failed alone in carries such a finding. One
    such node may be a wrong node; a whole pool of them is a wrong site or a collection
    from elsewhere (the pool's GPU model misstated, say): no node of it is quarantined.
    """
    index = _unbound_index(archive)
    by_node = {n.node: [f for fs in _only_unbound(n, index) for f in fs] for n in failed}
    refused: dict[str, str] = {}
    for pool, nodes in pool_nodes(site).items():
        if not nodes or not all(by_node.get(n) for n in nodes):
            continue
        codes = sorted({f.code for n in nodes for f in by_node[n]})
        first = by_node[nodes[0]][0].message
        why = (
            f"every node of pool {pool} failed only on evidence not bound to the plan"
            f" ({', '.join(codes)}),"
            f" likely the site or the collection rather than {len(nodes)} faulty node(s)"
            f" (the first: {printable(first)}); correct the site, or collect from the right"
            " cluster, and collect again"
        )
        refused.update(dict.fromkeys(nodes, why))
    return refused


# Unbound evidence that says nothing about the node in whose slot it was found: another
# host's ranks (NVC730), another rank count (NVC732), a node the pool does not name
# (NVC733), no device list (NVC734). Another GPU model (NVC731) is about the node itself.
NOT_ITS_OWN = frozenset(c.code for c in (codes.NVC730, codes.NVC732, codes.NVC733, codes.NVC734))


def _foreign(archive: ReadArchive, failed: list[NodeVerdict]) -> dict[str, str]:
    """Failed nodes whose every failure is evidence that is not their own (found by review).

    A log saved in a node's slot from another host fails that node's run (NVC730), but
    nothing in it measured the node: it is retested, never tainted.
    """
    index = _unbound_index(archive, NOT_ITS_OWN)
    found: dict[str, str] = {}
    for node in failed:
        about = _only_unbound(node, index)
        if about:
            codes = sorted({f.code for fs in about for f in fs})
            found[node.node] = (
                f"its failures are evidence that is not its own ({', '.join(codes)}: "
                f"{printable(about[0][0].message)}); nothing measured the node: retest it "
                "(nvcregen retest) rather than quarantine it"
            )
    return found


_Index = dict[tuple[str, str, str], list[Finding]]


def _unbound_index(archive: ReadArchive, only: frozenset[str] | None = None) -> _Index:
    """The failing unbound findings (of the codes `only`, else all) by stage, test, group.

    Indexed once, so judging 1,024 failed nodes does not scan every finding for each.
    """
    index: _Index = {}
    for f in archive.verdicts.findings:
        if f.kind == "unbound" and f.word == "fail" and (only is None or f.code in only):
            index.setdefault((f.stage, f.test, f.group), []).append(f)
    return index


def _only_unbound(node: NodeVerdict, index: _Index) -> list[list[Finding]]:
    """For each run the node failed alone in, the unbound findings about it.

    Empty unless every such run has some: the node failed only on evidence not bound to it.
    """
    alone = [r for r in node.runs if r.word == "fail" and len(r.nodes) <= 1]
    about = [
        index.get((r.stage, r.test, r.group), [])
        + (index.get((r.stage, r.test, ""), []) if r.group else [])
        for r in alone
    ]
    return about if alone and all(about) else []


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
    return not missing(node, mark)


def missing(node: dict[str, Any], mark: Mark) -> list[str]:
    """The parts of the mark the node lacks: `taint`, `label`, `annotations`."""
    labels, notes = _meta(node, "labels"), _meta(node, "annotations")
    parts = {
        "taint": any(_ours(t, mark.site) for t in taints_of(node)),
        "label": labels.get(KEY) == mark.site,
        "annotations": all(notes.get(k) == v for k, v in mark.annotations.items()),
    }
    return [part for part, there in parts.items() if not there]


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
