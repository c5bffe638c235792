"""Replay one site's tree: read it, admit, gate and time it, and judge it (pure).

`replay_site` is the one entry point: `nvcregen check` calls it on the files of each
site folder, the render gate on the objects in memory before anything is written,
`nvcregen plan` and `diff` for the timeline. docs/design/0008-replay.md says what the
model covers and what it leaves out.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from nvcregen.catalog.engines import engine_facts
from nvcregen.plan.facts import PlanFacts
from nvcregen.replay.checks import judge
from nvcregen.replay.context import Context, Key
from nvcregen.replay.gating import Gating, Step
from nvcregen.replay.gitopsmodel import bare_gating, read_units
from nvcregen.replay.kueue import Admission, Queues, admit, read_queues
from nvcregen.replay.model import Problem, Run, TreeObject
from nvcregen.replay.placement import Cluster
from nvcregen.replay.runs import read_runs
from nvcregen.replay.simulate import Timeline
from nvcregen.replay.units import gitops_units, unit_problems

PREVIEW = "preview"


@dataclass(frozen=True)
class Replay:
    """A site's tree, replayed.

    Attributes:
        facts: What came from the site.
        runs: The runs, expanded into workloads.
        gating: Their steps.
        queues: The tree's Kueue objects.
        expected: The clock with expected durations.
        worst: The clock with every workload to its timeout.
        problems: What the replay found, in file order.

    """

    facts: PlanFacts
    runs: tuple[Run, ...]
    gating: Gating
    queues: Queues
    expected: Timeline
    worst: Timeline
    problems: tuple[Problem, ...]


def replay_site(objects: Sequence[TreeObject], facts: PlanFacts) -> Replay:
    """Replay the objects of one site folder (its `preview/` is never applied: skipped).

    Besides the runs, each GitOps unit is held against what its engine can hold (NVC677).
    """
    ctx = replay_context(objects, facts)
    engines = engine_facts()
    units = unit_problems(gitops_units(objects, facts.root, engines), engines)
    problems = tuple(sorted((*judge(ctx), *units), key=lambda p: (p.file, p.code, p.message)))
    return Replay(facts, ctx.runs, ctx.gating, ctx.queues, ctx.expected, ctx.worst, problems)


def replay_context(objects: Sequence[TreeObject], facts: PlanFacts) -> Context:
    """The replayed tree every check reads: runs, steps, admissions; clocks when read."""
    applied = [o for o in objects if not o.path.startswith(f"{PREVIEW}/")]
    runs = read_runs(applied, facts)
    gating = read_gating(applied, runs, facts)
    queues = read_queues(applied)
    admissions = {
        (r, b, w): admit(workload, run.source.namespace, queues, facts)
        for r, run in enumerate(runs)
        for b, batch in enumerate(run.batches)
        for w, workload in enumerate(batch.workloads)
    }
    cluster = Cluster(facts.nodes)
    blocked = frozenset(
        key for key, a in admissions.items() if a.refusal or not _fits(runs, key, a, cluster)
    )
    return Context(facts, tuple(runs), gating, queues, admissions, blocked, cluster)


def _fits(runs: Sequence[Run], key: Key, admission: Admission, cluster: Cluster) -> bool:
    run, batch, index = key
    return cluster.fits(runs[run].batches[batch].workloads[index], admission.node_labels)


def read_gating(objects: Sequence[TreeObject], runs: Sequence[Run], facts: PlanFacts) -> Gating:
    """The steps of a tree: the first engine's units reading the site, else its waves.

    Engines are tried in registry order (`gitopsmodel.read_units`): Flux's Kustomizations,
    else Argo CD's Applications.
    A run no GitOps object of the tree applies is a step of its own, after nothing.
    """
    found = read_units(objects, facts.root)
    if found:
        _, model, held = found
        gating = model.gating(objects, runs, held, facts)
    else:
        return bare_gating(objects, runs)
    loose = [r for r in runs if r.source.path not in gating.step_of]
    if not loose:
        return gating
    steps = dict(gating.steps)
    step_of = dict(gating.step_of)
    unwaited = dict(gating.unwaited)
    for run in loose:
        key = f"unapplied:{run.source.path}"
        steps[key] = Step(key, f"{run.label} (applied by no GitOps object of the tree)", "")
        step_of[run.source.path] = key
        unwaited[run.source.path] = (
            "no GitOps object of the tree applies it, so nothing waits for it"
        )
    return dataclasses.replace(gating, steps=steps, step_of=step_of, unwaited=unwaited)
