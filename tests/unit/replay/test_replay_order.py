"""Ordering in the replay is transitive: a step waits for every earlier step, not its parent.

A Flux Kustomization names only the step before it in `dependsOn`, so that step 3 runs
after step 1 follows only through step 2; Argo CD's waves are ordered the same way.
With two steps the relation cannot be told from its transitive closure, so these trees
have six: h20-3e-trainer's rounds (each round its own step), once compiled for Flux and
once as shipped for Argo CD. Issue 19: "runs before a step" could be made non-transitive
without any test failing.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from functools import cache
from pathlib import Path

import pytest
from replayfactory import replay, shipped, shipped_facts

from nvcregen.catalog.load import load_catalog
from nvcregen.chain.pipeline import Built, Options, build_site
from nvcregen.check.replayed import replay_manifests_of
from nvcregen.core.manifest import Manifest
from nvcregen.replay.model import Run
from nvcregen.replay.site import Replay

ROOT = Path(__file__).resolve().parents[3]
TRAINER = "h20-3e-trainer"


@cache
def trainer_on_flux() -> Replay:
    """h20-3e-trainer compiled for Flux: a Kustomization per round, each after the last."""
    text = (ROOT / "sites" / f"{TRAINER}.yaml").read_text(encoding="utf-8")
    assert "    engine: argocd\n" in text
    flux = text.replace("    engine: argocd\n", "    engine: flux\n")
    built = build_site(flux.encode(), f"sites/{TRAINER}.yaml", load_catalog(), Options(root=ROOT))
    assert isinstance(built, Built), built.diagnostics
    return replay_manifests_of(built.manifests, built.plan)


def on_argocd() -> Replay:
    return replay(shipped(TRAINER), shipped_facts(TRAINER))


REPLAYS: dict[str, Callable[[], Replay]] = {"flux": trainer_on_flux, "argocd": on_argocd}


def ordered(found: Replay) -> set[tuple[str, str]]:
    """(a, b) for every two runs where b can start only once a has finished."""
    before = found.gating.before(r.source.path for r in found.runs)
    return {
        (a.source.path, b.source.path)
        for a, b in itertools.permutations(found.runs, 2)
        if a.source.path in before.get(found.gating.step_of.get(b.source.path, ""), frozenset())
    }


def chain(found: Replay) -> list[str]:
    """The steps holding runs, in the order they apply."""
    keys = {found.gating.step_of[r.source.path] for r in found.runs}
    return sorted(keys, key=lambda k: found.expected.steps[k][0] or 0)


def runs_of(found: Replay, step: str) -> list[Run]:
    return [r for r in found.runs if found.gating.step_of.get(r.source.path) == step]


def test_the_flux_steps_name_only_the_step_before_them() -> None:
    """What makes transitivity matter: step 3 depends on step 2 alone."""
    found = trainer_on_flux()
    steps = chain(found)
    assert len(steps) == 6  # 2 stages x 3 rounds
    labels = [found.gating.steps[s].label for s in steps]
    assert labels[0] == "Kustomization h20-3e-trainer-readiness-01-single-node-r1"
    for earlier, later in itertools.pairwise(steps):
        assert found.gating.steps[later].after == (earlier,)


@pytest.mark.parametrize("engine", sorted(REPLAYS))
def test_every_step_waits_for_every_earlier_step(engine: str) -> None:
    found = REPLAYS[engine]()
    steps = chain(found)
    assert len(steps) >= 3
    pairs = ordered(found)
    for i, j in itertools.combinations(range(len(steps)), 2):  # step i applies before step j
        for a, b in itertools.product(runs_of(found, steps[i]), runs_of(found, steps[j])):
            assert (a.source.path, b.source.path) in pairs, (steps[i], steps[j])
            assert (b.source.path, a.source.path) not in pairs
    # the first round's runs end before the last round's start, on both clocks
    for clock in (found.expected, found.worst):
        first_end = clock.steps[steps[0]][1]
        assert first_end is not None
        last_start = clock.steps[steps[-1]][0]
        assert last_start is not None
        assert last_start >= first_end
        for earlier, later in itertools.pairwise(steps):
            end, start = clock.steps[earlier][1], clock.steps[later][0]
            assert end is not None and start is not None and start >= end
    assert found.problems == ()  # no stages that may overlap (NVC672)


@pytest.mark.parametrize("engine", sorted(REPLAYS))
def test_runs_before_a_step_is_transitive(engine: str) -> None:
    pairs = ordered(REPLAYS[engine]())
    after: dict[str, set[str]] = {}
    for a, b in pairs:
        after.setdefault(a, set()).add(b)
    broken = [(a, b, c) for a, b in pairs for c in after.get(b, ()) if (a, c) not in pairs]
    assert broken == []
    assert len(pairs) > 0


def _trainer_on_flux_edited(change: Callable[[list[Manifest]], list[Manifest]]) -> Replay:
    text = (ROOT / "sites" / f"{TRAINER}.yaml").read_text(encoding="utf-8")
    flux = text.replace("    engine: argocd\n", "    engine: flux\n")
    built = build_site(flux.encode(), f"sites/{TRAINER}.yaml", load_catalog(), Options(root=ROOT))
    assert isinstance(built, Built), built.diagnostics
    return replay_manifests_of(change(built.manifests), built.plan)


_QUEUED_JOB = "Flux's Job reader calls a Job Kueue still queues"


def _job_messages(found: Replay) -> list[str]:
    return [p.message for p in found.problems if _QUEUED_JOB in p.message]


def test_flux_waits_for_a_queued_job_through_its_prebuilt_workload() -> None:
    # Flux's own Job reader calls a suspended Job Current (fluxcd/pkg runtime v0.100.0):
    # only the Workload's check, current once Finished with reason Succeeded, holds the step.
    assert _job_messages(trainer_on_flux()) == []

    def workloads_always_done(manifests: list[Manifest]) -> list[Manifest]:
        for m in manifests:
            for expr in m.obj.get("spec", {}).get("healthCheckExprs", []):
                if expr["kind"] == "Workload":
                    expr["current"] = "true"
        return manifests

    always = _job_messages(_trainer_on_flux_edited(workloads_always_done))
    assert always, "a Workload check that is always current must leave the Jobs unwaited"

    def no_workloads(manifests: list[Manifest]) -> list[Manifest]:
        return [m for m in manifests if m.obj.get("kind") != "Workload"]

    assert _job_messages(_trainer_on_flux_edited(no_workloads))
