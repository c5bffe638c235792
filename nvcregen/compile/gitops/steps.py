"""Readiness stages in order: every stage, or in trainer mode every round of one, is a step (pure).

Stage N+1 may start only once every run of stage N finished and passed, and the rounds of
one test must never overlap. NVCRE runs a test's rounds itself, one after the other (a
Certification's or WorkloadRun's `repeatCount` becomes its Workflow's iterations), so in
NVCRE mode a step is a stage. In trainer mode each round is its own TrainJob or Job, so a
step is one round of a stage: round 2 starts once round 1 of every test of the stage passed.

Each run goes to `readiness/<NN>-<stage>/` (trainer mode `<NN>-<stage>/round-<R>/`) with
its step number as Argo CD sync wave, and so does each run's prebuilt Workload (trainer mode
with Kueue), whose health fails the step once Kueue gives up on the run. What the runs use
but that does not run (the
LogProfile, TrainingRuntimes) and a ConfigMap listing the plan go to `readiness/00-common/`,
applied first. Argo CD does not wait for its last wave, so with Argo CD a ConfigMap in the
wave after the last step (`<NN>-passed/`) makes the last step decide the sync too. The
GitOps objects that apply the steps are built by the engine's package
(`engineparts.GitOpsObjects.chain`); why: docs/design/0006-stage-gating.md.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import groupby

from nvcregen.compile.gitops.healthchecks import (
    COMPANION_CHECKS,
    HEALTH_CHECKS,
    WORKLOAD,
    HealthCheck,
    check_for,
)
from nvcregen.compile.queue.prebuilt import uses_prebuilt
from nvcregen.core import units
from nvcregen.core.labels import TEST as TEST_LABEL
from nvcregen.core.manifest import Manifest, Obj, content_hash
from nvcregen.engineapi.registry import gitops_of, readiness_of
from nvcregen.kindapi.registry import kind_of
from nvcregen.plan.model import TestUnit
from nvcregen.spec.v1alpha1 import Site

COMPONENT = "readiness"
COMMON_FOLDER = "00-common"
SYNC_WAVE = "argocd.argoproj.io/sync-wave"
ROUND_LABEL = "nvcregen.io/round"
_STAGE_SOURCE = re.compile(r"^/spec/readiness/stages/(\d+)(?:/|$)")


@dataclass(frozen=True)
class Step:
    """One gated step of the readiness plan.

    Attributes:
        number: Its place in the plan, from 1; also its Argo CD sync wave.
        stage: The stage's name.
        stage_index: The stage's index in `readiness.stages`.
        round: Trainer mode: the round (from 1) this step runs; None when the engine runs
            every round of the stage itself (NVCRE).
        checks: The health checks of the kinds the step runs.
        timeout_ms: How long the step may take before Flux reports it failed: its worst
            case, set by `nvcregen.compile.gitops.timing.timed_steps` once its runs are
            placed (None until then).

    """

    number: int
    stage: str
    stage_index: int
    round: int | None
    checks: tuple[HealthCheck, ...]
    timeout_ms: int | None = None

    @property
    def timeout(self) -> str:
        """The timeout as Flux and the plan ConfigMap write it (`4h24m`).

        Raises:
            ValueError: The step was never timed (a bug: `timed_steps` times every step).

        """
        if self.timeout_ms is None:
            raise ValueError(f"readiness step {self.folder} has no timeout yet")
        return units.format_duration(self.timeout_ms)

    @property
    def folder(self) -> str:
        """The step's folder in the readiness layer: `01-<stage>` or `01-<stage>/round-1`."""
        stage = f"{self.stage_index + 1:02d}-{self.stage}"
        return stage if self.round is None else f"{stage}/round-{self.round}"


def plan_steps(site: Site, test_units: Sequence[TestUnit]) -> tuple[Step, ...]:
    """The steps of a planned site, in the order they must run."""
    trainer = readiness_of(site).writes_runs
    prebuilt = uses_prebuilt(site)
    rounds = site.spec.readiness.rounds
    steps: list[Step] = []
    for index, group in groupby(test_units, key=lambda u: u.stage_index):
        stage_units = list(group)
        checks = _checks(site, stage_units)
        if prebuilt:  # each run's Workload fails the step once Kueue gives up on it
            checks = (*checks, WORKLOAD)
        name = stage_units[0].stage.name
        # NVCRE runs all rounds inside one step; trainer mode makes a step of each round.
        for round_ in range(1, rounds + 1) if trainer else (None,):
            steps.append(Step(len(steps) + 1, name, index, round_, checks))
    return tuple(steps)


def _checks(site: Site, stage_units: Sequence[TestUnit]) -> tuple[HealthCheck, ...]:
    """The health checks of the objects the site's engine runs the stage's tests as."""
    engine = readiness_of(site)
    kinds = {
        engine.run_object(u.mode, kind_of(u.test).collective or kind_of(u.test).pair)[1]
        for u in stage_units
    }
    return tuple(c for c in HEALTH_CHECKS if c.kind in kinds)


def place_runs(readiness: Sequence[Manifest], steps: Sequence[Step]) -> list[Manifest]:
    """Put every readiness object in its step's folder and, for runs, its sync wave.

    Raises:
        ValueError: A run belongs to no step (a bug: the steps come from the same plan).

    """
    return [_place(m, steps) for m in readiness]


def gate_readiness(site: Site, placed: Sequence[Manifest], steps: Sequence[Step]) -> list[Manifest]:
    """Add the plan ConfigMap in `00-common/` and, with Argo CD, the final gate.

    Args:
        site: The site.
        placed: The readiness layer, placed (`place_runs`).
        steps: The site's steps, timed (`nvcregen.compile.gitops.timing.timed_steps`).

    """
    gated = [*placed, plan_config_map(site, steps, placed)]
    if gitops_of(site).final_gate:
        gated.append(final_gate(site, steps, placed))
    return gated


def is_run(manifest: Manifest, checks: tuple[HealthCheck, ...] = HEALTH_CHECKS) -> bool:
    """Whether an object is a run a step waits for (its kind has a health check)."""
    return check_for(str(manifest.obj.get("apiVersion", "")), manifest.kind, checks) is not None


def is_companion(manifest: Manifest) -> bool:
    """Whether an object goes with its run, in its step (a run's prebuilt Workload)."""
    return is_run(manifest, COMPANION_CHECKS)


def _place(manifest: Manifest, steps: Sequence[Step]) -> Manifest:
    if not is_run(manifest) and not is_companion(manifest):
        return dataclasses.replace(manifest, folder=COMMON_FOLDER)
    step = _step_of(manifest, steps)
    meta = manifest.obj["metadata"]
    annotations = {**meta.get("annotations", {}), SYNC_WAVE: str(step.number)}
    obj = {**manifest.obj, "metadata": {**meta, "annotations": annotations}}
    return dataclasses.replace(manifest, obj=obj, folder=step.folder)


def _step_of(manifest: Manifest, steps: Sequence[Step]) -> Step:
    """A run's step: its stage (from its site pointer) and, in trainer mode, its round."""
    match = _STAGE_SOURCE.match(manifest.source)
    stage = int(match[1]) if match else -1
    round_ = manifest.obj["metadata"].get("labels", {}).get(ROUND_LABEL)
    for step in steps:
        if step.stage_index == stage and (step.round is None or str(step.round) == round_):
            return step
    raise ValueError(f"{manifest.kind} {manifest.name} belongs to no readiness step")


def runs_by_step(steps: Sequence[Step], placed: Iterable[Manifest]) -> list[list[Manifest]]:
    """The runs in each step's folder, in the order placed (one pass over the objects)."""
    by_folder: dict[str, list[Manifest]] = {step.folder: [] for step in steps}
    for m in placed:
        if m.folder in by_folder and is_run(m):
            by_folder[m.folder].append(m)
    return [by_folder[step.folder] for step in steps]


# The most text the plan ConfigMap lists run by run. Kubernetes refuses a ConfigMap whose
# data passes 1 MiB, and client-side apply keeps a copy of the object in a 256 KiB
# annotation: listing each run passes both at about 950 and 230 named nodes.
PLAN_LIST_LIMIT = 128 * 1024


def plan_config_map(site: Site, steps: Sequence[Step], placed: Sequence[Manifest]) -> Manifest:
    """A ConfigMap listing the steps in order with their runs, applied before them.

    It keeps the folder `00-common/` non-empty (Flux applies it when an operator starts the
    tests) and tells whoever reads the cluster what runs in which order. Where listing
    every run would pass `PLAN_LIST_LIMIT`, each step counts its runs by kind and test
    instead (the step's folder holds them; `nvcregen plan` lists them).
    """
    by_step = list(zip(steps, runs_by_step(steps, placed), strict=True))
    lines: list[str] = []
    for step, runs in by_step:
        lines.append(f"{step.folder}: step {step.number}, {len(runs)} runs, timeout {step.timeout}")
        lines += sorted(f"  {m.kind}/{m.name}" for m in runs)
    text = "\n".join(lines) + "\n"
    if len(text.encode()) > PLAN_LIST_LIMIT:
        text = _counted(by_step)
    data = {"steps": text, "trigger": site.spec.readiness.trigger}
    obj = _config_map(f"{site.metadata.name}-readiness-plan", site, data)
    return Manifest(obj, COMPONENT, "/spec/readiness/stages", folder=COMMON_FOLDER)


def _counted(by_step: Sequence[tuple[Step, list[Manifest]]]) -> str:
    """The plan with each step's runs counted by kind and test rather than listed."""
    lines: list[str] = []
    for step, runs in by_step:
        lines.append(f"{step.folder}: step {step.number}, {len(runs)} runs, timeout {step.timeout}")
        counts: dict[tuple[str, str], int] = {}
        for run in runs:
            test = run.obj["metadata"].get("labels", {}).get(TEST_LABEL, "")
            counts[(run.kind, test)] = counts.get((run.kind, test), 0) + 1
        lines += [f"  {n} x {kind} {test}".rstrip() for (kind, test), n in sorted(counts.items())]
    lines.append(
        f"runs counted by kind and test: listing each passes {PLAN_LIST_LIMIT // 1024} KiB; "
        "each step's folder holds them, and `nvcregen plan` lists them"
    )
    return "\n".join(lines) + "\n"


def final_gate(site: Site, steps: Sequence[Step], placed: Sequence[Manifest]) -> Manifest:
    """Argo CD: a ConfigMap in the wave after the last step, so the sync waits for it.

    Argo CD waits for the health of a wave only before it applies a later one, so without
    this the sync would report success as soon as the last step's runs were created. It
    is applied only when every run passed; `plan` (a hash of every run's kind and name)
    says which plan that was.
    """
    last = steps[-1]
    runs = [
        run
        for in_step in runs_by_step(steps, placed)
        for run in sorted(f"{m.kind}/{m.name}" for m in in_step)
    ]
    data = {
        "passed": "every readiness run of the plan passed when Argo CD applied this",
        "plan": content_hash(runs),
        "runs": str(len(runs)),
    }
    obj = _config_map(f"{site.metadata.name}-readiness-passed", site, data)
    obj["metadata"]["annotations"] = {SYNC_WAVE: str(last.number + 1)}
    folder = f"{last.stage_index + 2:02d}-passed"
    return Manifest(obj, COMPONENT, "/spec/readiness", folder=folder)


def _config_map(name: str, site: Site, data: dict[str, str]) -> Obj:
    metadata: Obj = {"name": name, "namespace": site.spec.nvcre.namespace}
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata, "data": data}
