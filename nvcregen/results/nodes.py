"""Nodes in every verdict: what the runs say about each node of the plan (pure).

Every run is made of groups of nodes (one node for a single-node run, `nodesPerJob` for
a multi-node one), and each group passed, failed or did not finish. A node is then:

- `failed`: it failed alone: a group of just this node failed (a single-node run, a
  DCGM diagnostic), or NVCRE named it as a failed node;
- `suspect`: it was in a failing group of several nodes and passed no group of the same
  test: the failure may be this node's, or its partner's, or the link between them.
  Only a retest that pairs it with a cleared node can tell (`nvcregen retest`);
- `excluded`: a run left it out, with the Workflow's reason;
- `cleared`: it passed a group that would have exposed it, and is none of the above;
- `untested`: no group that finished held it, or a run read it but could not judge one of
  its checks (`unjudged_nodes`: a node-health log whose kernel log was refused, NVC825):
  whatever else it passed, a node is cleared only when every check of it was judged.

`failed` and `suspect` nodes fail; `excluded` and `untested` ones are incomplete; only
`cleared` nodes pass. The report opens with the nodes to hold back (all but cleared).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from nvcregen.results.models import Finality, Measurement, StatusModel
from nvcregen.results.runs import RunResult, RunSet
from nvcregen.results.words import Word, worst
from nvcregen.spec.v1alpha1 import Site

_SHOWN = 3
GroupWords = dict[tuple[str, str, str], list[tuple[Word, str]]]
"""Per (stage, test, group): the words and messages of its threshold verdicts but pass."""
NodeStatus = Literal["failed", "suspect", "excluded", "untested", "cleared"]
ORDER: tuple[NodeStatus, ...] = ("failed", "suspect", "excluded", "untested", "cleared")
_WORDS = {
    "failed": Word.FAIL,
    "suspect": Word.FAIL,
    "excluded": Word.INCOMPLETE,
    "untested": Word.INCOMPLETE,
    "cleared": Word.PASS,
}


class NodeRun(StatusModel):
    """One group of one run that held a node, and how it ended."""

    stage: str
    scope: str
    test: str
    group: str = ""
    nodes: tuple[str, ...] = ()
    word: Word
    why: str = ""


class NodeVerdict(StatusModel):
    """One node: its status, the verdict that follows, why, and every group it was in."""

    node: str
    status: NodeStatus
    word: Word
    reasons: tuple[str, ...] = ()
    runs: tuple[NodeRun, ...] = ()

    @property
    def held_back(self) -> bool:
        """Whether the node should not enter service on these results."""
        return self.status != "cleared"


def plan_nodes(site: Site) -> list[str]:
    """The nodes the site names, pool by pool (selector pools name none)."""
    return list(dict.fromkeys(n for pool in site.spec.node_pools for n in pool.nodes or ()))


def judge_nodes(
    site: Site, runs: RunSet, thresholds: GroupWords, rounds: int
) -> tuple[NodeVerdict, ...]:
    """Every node of the plan (and any other node a run names), failed nodes first."""
    members = _stage_nodes(site)
    groups = [g for run in runs.runs for g in _groups(run, thresholds, rounds, members)]
    excluded = {n: r for run in runs.runs for n in run.excluded_nodes for r in [_excluded(run)]}
    unjudged: dict[str, list[str]] = {}
    for run in runs.runs:
        for node in run.unjudged_nodes:
            unjudged.setdefault(node.name, []).append(
                f"not judged in {run.stage} / {run.test}: {node.message or node.reason}"
            )
    seen = [n for g in groups for n in g.nodes] + list(excluded)
    names = list(dict.fromkeys([*plan_nodes(site), *sorted(set(seen))]))
    verdicts = [_node(name, groups, excluded.get(name), unjudged.get(name, [])) for name in names]
    return tuple(sorted(verdicts, key=lambda v: ORDER.index(v.status)))


def _stage_nodes(site: Site) -> dict[str, tuple[str, ...]]:
    """The nodes each stage's pool names (none for a selector pool)."""
    pools = {p.name: tuple(p.nodes or ()) for p in site.spec.node_pools}
    first = site.spec.node_pools[0].name if site.spec.node_pools else ""
    return {s.name: pools.get(s.pool or first, ()) for s in site.spec.readiness.stages}


def _excluded(run: RunResult) -> str:
    why = run.exclusion_reason or "no reason given"
    return f"excluded from {run.stage} / {run.test}: {why}"


def _groups(
    run: RunResult, thresholds: GroupWords, rounds: int, stage_nodes: dict[str, tuple[str, ...]]
) -> list[NodeRun]:
    """The groups of one run: measured groups, failed and succeeded nodes.

    A group whose members the results do not name is the stage's whole pool (less the
    excluded nodes) when it is the run's only group, as NVCRE's full-scale runs are; with
    several such groups no node can be placed, and none is judged by them.
    """
    base = {"stage": run.stage, "scope": run.scope, "test": run.test}
    found: list[NodeRun] = []
    measured: list[Measurement] = [*run.bandwidth, *run.goodput]
    names = list(dict.fromkeys(m.group for m in measured))
    whole = tuple(n for n in stage_nodes.get(run.stage, ()) if n not in run.excluded_nodes)
    for name in names:
        members = [m for m in measured if m.group == name]
        nodes = members[0].nodes or (whole if len(names) == 1 else ())
        if not nodes:
            continue
        word, why = _group_word(run, name, members, thresholds, rounds)
        found.append(NodeRun(**base, group=name, nodes=nodes, word=word, why=why))
    for node in run.failed_nodes:
        why = f"{node.reason}: {node.message}" if node.message else node.reason
        found.append(NodeRun(**base, nodes=(node.name,), word=Word.FAIL, why=why))
    for node in run.unjudged_nodes:
        why = f"{node.reason}: {node.message}" if node.message else node.reason
        found.append(NodeRun(**base, nodes=(node.name,), word=Word.INCOMPLETE, why=why))
    # NVCRE's succeeded nodes count where nvcregen measured no group holding them (a
    # DCGM category): NVCRE does not judge transports or per-size bounds, nvcregen does
    judged = {n for g in found for n in g.nodes} | {n.name for n in run.failed_nodes}
    found += [
        NodeRun(**base, nodes=(name,), word=Word.PASS, why="passed")
        for name in run.succeeded_nodes
        if name not in judged
    ]
    return found


def _group_word(
    run: RunResult,
    group: str,
    members: Sequence[Measurement],
    thresholds: GroupWords,
    rounds: int,
) -> tuple[Word, str]:
    """How one group ended: its rounds' finality, transport and every threshold on it."""
    whys: list[tuple[Word, str]] = []
    for m in members:
        if m.finality is Finality.NOT_EVALUATED:
            whys.append((Word.FAIL, f"round {m.iteration}: {m.reason}"))
        elif m.finality is Finality.PROVISIONAL:
            whys.append((Word.INCOMPLETE, f"round {m.iteration}: {m.reason}"))
        other = sorted(set(getattr(m, "transports", ())) - {run.expected_transport or ""})
        if run.expected_transport and other:
            whys.append((Word.FAIL, f"round {m.iteration} ran over {', '.join(other)}"))
    final = sum(m.finality is Finality.FINAL for m in members)
    if final < rounds and not whys:
        whys.append((Word.INCOMPLETE, f"{final} of {rounds} rounds final"))
    whys += thresholds.get((run.stage, run.test, group), [])
    word = worst([w for w, _ in whys])
    return word, "; ".join(dict.fromkeys(text for w, text in whys if w is word)) or "passed"


def _node(
    name: str, groups: Sequence[NodeRun], excluded: str | None, unjudged: Sequence[str]
) -> NodeVerdict:
    mine = [g for g in groups if name in g.nodes]
    alone = [g for g in mine if g.word is Word.FAIL and len(g.nodes) == 1]
    passed = {(g.stage, g.test) for g in mine if g.word is Word.PASS}
    shared = [
        g
        for g in mine
        if g.word is Word.FAIL and len(g.nodes) > 1 and (g.stage, g.test) not in passed
    ]
    status: NodeStatus
    if alone:
        status, reasons = "failed", [f"failed alone in {_where(g)}: {g.why}" for g in alone]
    elif shared:
        status = "suspect"
        reasons = [f"only in failing groups of {_where(g)} with {_others(g, name)}: {g.why}"
                   for g in shared]  # fmt: skip
    elif excluded is not None:
        status, reasons = "excluded", [excluded]
    elif unjudged:
        status, reasons = "untested", list(unjudged)
    elif passed:
        status = "cleared"
        where = [_where(g) for g in mine if g.word is Word.PASS]
        more = f" and {len(where) - _SHOWN} more" if len(where) > _SHOWN else ""
        reasons = [f"passed {len(where)} group(s): {', '.join(where[:_SHOWN])}{more}"]
    else:
        status, reasons = "untested", ["no finished run held it"]
    return NodeVerdict(
        node=name, status=status, word=_WORDS[status], reasons=tuple(reasons), runs=tuple(mine)
    )


def _where(group: NodeRun) -> str:
    text = f"{group.stage} / {group.test}"
    return f"{text} {group.group}" if group.group else text


def _others(group: NodeRun, name: str) -> str:
    return ", ".join(n for n in group.nodes if n != name)
