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
- `untested`: no group that finished held it, or a group of a test that it passed in no
  other group did not finish: incomplete evidence (a round missing, evidence that
  stands for another run too, rounds copied) clears no node; nor does a round refused as
  evidence or a group or node no valid measurement holds (NVC745-NVC748 name the node),
  whatever else passed.

A finding about the evidence (`results/findings.py`) that does not pass counts against
the group it names, or every group of its run, whether or not a threshold names the
test: a node whose log was another node's is never cleared by it. A node a run read but
could not judge one of its checks of (`unjudged_nodes`: a node-health log whose kernel
log was refused, NVC825) is `untested` too: whatever else it passed, a node is cleared
only when every check of it was judged.

`failed` and `suspect` nodes fail; `excluded` and `untested` ones are incomplete; only
`cleared` nodes pass. The report opens with the nodes to hold back (all but cleared).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from nvcregen.results.findings import Finding, decisive
from nvcregen.results.models import Finality, Measurement, StatusModel
from nvcregen.results.planned import UNPLANNED, plan_of, shown
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
    scope: str = ""
    test: str
    group: str = ""
    nodes: tuple[str, ...] = ()
    word: Word
    why: str = ""
    code: str = ""  # the finding that made it, for evidence refused or missing


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
    site: Site,
    runs: RunSet,
    thresholds: GroupWords,
    rounds: int,
    findings: Sequence[Finding] = (),
) -> tuple[NodeVerdict, ...]:
    """Every node of the plan (and a selector pool's nodes its runs name), failed first.

    A name a run gives becomes a verdict only when it is a node name and a node the
    site's pools name (any node name, for a stage on a selector pool): `planned.py`;
    `refused_nodes` gives the finding of each name refused. A finding that does not pass
    and names nodes (evidence refused or missing) is a group of those nodes with the
    finding's word.
    """
    members = _stage_nodes(site)
    words = _with_findings(thresholds, findings)
    groups = [g for run in runs.runs for g in _groups(run, words, rounds, members)]
    groups += [_found(f, runs) for f in decisive(findings) if f.nodes]
    excluded = {n: r for run in runs.runs for n in run.excluded_nodes for r in [_excluded(run)]}
    unjudged: dict[str, list[tuple[str, str, str]]] = {}
    for run in runs.runs:
        for node in run.unjudged_nodes:
            unjudged.setdefault(node.name, []).append(
                (run.stage, run.test, f"not judged in {run.stage} / {run.test}: "
                 f"{node.message or node.reason}")
            )  # fmt: skip
    refused = _refusals(site, runs, groups)
    seen = sorted(({n for g in groups for n in g.nodes} | set(excluded)) - set(refused))
    names = list(dict.fromkeys([*plan_nodes(site), *seen]))
    held: dict[str, list[NodeRun]] = {}  # each node's groups, found in one pass
    for g in groups:
        for n in dict.fromkeys(g.nodes):
            held.setdefault(n, []).append(g)
    verdicts = [
        _node(name, held.get(name, []), excluded.get(name), unjudged.get(name, []))
        for name in names
    ]
    return tuple(sorted(verdicts, key=lambda v: ORDER.index(v.status)))


def _with_findings(thresholds: GroupWords, findings: Sequence[Finding]) -> GroupWords:
    """The groups' words with every finding that does not pass (group "": the whole run).

    A finding that names its nodes (evidence refused or missing, NVC745-NVC748) counts
    against those nodes alone (`_found`), not against its group or run; a name outside the
    plan (NVC750) against no node: it fails its run, never the planned nodes beside it.
    """
    found: GroupWords = {key: list(words) for key, words in thresholds.items()}
    for f in decisive(findings):
        if f.nodes or not f.group_wide:  # group_wide: NVC750 joins no group (findings.py)
            continue
        found.setdefault((f.stage, f.test, f.group), []).append((f.word, f.reason().message))
    return found


def refused_nodes(site: Site, runs: RunSet) -> tuple[Finding, ...]:
    """A finding (NVC750) for each name the runs give that gets no verdict, first seen first."""
    members = _stage_nodes(site)
    groups = [g for run in runs.runs for g in _groups(run, {}, 1, members)]
    return tuple(_refusals(site, runs, groups).values())


def _refusals(site: Site, runs: RunSet, groups: Sequence[NodeRun]) -> dict[str, Finding]:
    origins = [(n, g.stage, g.test, g.group) for g in groups for n in g.nodes]
    origins += [(n, run.stage, run.test, "") for run in runs.runs for n in run.excluded_nodes]
    plan, selected = plan_of(site), _selector_stages(site)
    refused: dict[str, Finding] = {}
    for name, stage, test, group in origins:
        if name in refused:
            continue
        why = plan.refusal(name, by_list=stage not in selected)
        if why is not None:
            refused[name] = _unplanned(name, stage, test, group, why)
    return refused


def _selector_stages(site: Site) -> frozenset[str]:
    """The stages whose pool selects its nodes by label (names none)."""
    selectors = {p.name for p in site.spec.node_pools if p.nodes is None}
    first = site.spec.node_pools[0].name if site.spec.node_pools else ""
    return frozenset(s.name for s in site.spec.readiness.stages if (s.pool or first) in selectors)


def _unplanned(name: str, stage: str, test: str, group: str, why: str) -> Finding:
    text = (
        f"no verdict for {shown(name)}: {why}; a node outside the plan is never"
        " quarantined or retested (check that the results are this site's, or add the node"
        " to a pool if it belongs there)"
    )
    return Finding(code=UNPLANNED, kind="unbound", word=Word.FAIL, stage=stage, test=test,
                   group=group, message=text)  # fmt: skip


def _stage_nodes(site: Site) -> dict[str, tuple[str, ...]]:
    """The nodes each stage's pool names (none for a selector pool)."""
    pools = {p.name: tuple(p.nodes or ()) for p in site.spec.node_pools}
    first = site.spec.node_pools[0].name if site.spec.node_pools else ""
    return {s.name: pools.get(s.pool or first, ()) for s in site.spec.readiness.stages}


def _found(finding: Finding, runs: RunSet) -> NodeRun:
    scope = next(
        (r.scope for r in runs.runs if (r.stage, r.test) == (finding.stage, finding.test)), ""
    )
    why = f"{finding.code}: {finding.message}"
    return NodeRun(
        stage=finding.stage,
        scope=scope,
        test=finding.test,
        group=finding.group,
        nodes=finding.nodes,
        word=finding.word,
        why=why,
        code=finding.code,
    )


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
        # One unnamed group is the stage's pool only where one job spans it (inter-node);
        # an intra-node group is one node, which an unnamed one cannot tell (review).
        spans = len(names) == 1 and run.scope != "intra-node"
        nodes = members[0].nodes or (whole if spans else ())
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
    whole_run = thresholds.get((run.stage, run.test, ""), [])
    word = worst([Word.PASS, *(w for w, _ in whole_run)])
    why = "; ".join(dict.fromkeys(text for w, text in whole_run if w is word)) or "passed"
    found += [
        NodeRun(**base, nodes=(name,), word=word, why=why)
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
    if group:
        whys += thresholds.get((run.stage, run.test, ""), [])  # about the whole run
    word = worst([w for w, _ in whys])
    return word, "; ".join(dict.fromkeys(text for w, text in whys if w is word)) or "passed"


def _node(
    name: str,
    groups: Sequence[NodeRun],
    excluded: str | None,
    unjudged: Sequence[tuple[str, str, str]],
) -> NodeVerdict:
    """One node's verdict from the groups that hold it.

    `groups` are found once for every node by `judge_nodes`; `unjudged` gives
    (stage, test, why) of each check of the node that was not judged.
    """
    mine = list(groups)
    alone = [g for g in mine if g.word is Word.FAIL and len(g.nodes) == 1]
    passed = {(g.stage, g.test) for g in mine if g.word is Word.PASS}
    shared = [
        g
        for g in mine
        if g.word is Word.FAIL and len(g.nodes) > 1 and (g.stage, g.test) not in passed
    ]
    unfinished = [
        g for g in mine if g.word is Word.INCOMPLETE and (g.code or (g.stage, g.test) not in passed)
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
    elif unfinished or unjudged:
        status = "untested"
        told = {(stage, test) for stage, test, _ in unjudged}  # said once, as not judged
        reasons = [why for _, _, why in unjudged]
        reasons += [
            f"incomplete in {_where(g)}: {g.why}"
            for g in unfinished
            if (g.stage, g.test) not in told
        ]
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
