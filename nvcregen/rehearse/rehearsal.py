"""A rehearsal: a rendered trainer-mode site applied step by step on the twin, and watched.

`rehearse` starts the twin (`twin.py`) with the site's nodes (`nodes.py`), kwok's pod
stages set to the plan's durations at `speed` (`podstages.py`) and Kueue from the site's
own Configuration (`kueueconfig.py`); then plays the GitOps engine: each step of
`steps.py` applied server-side (`apply.py`), and, where the engine waits, polled until
every object in it is healthy as the engine reads health (`health.py`), a failure or a
refusal stopping the plan there as the engine's sync would. Meanwhile `watch.py` records
what Kueue, the scheduler and kwok did with every run; after the last step it waits for
the runs still going, until `timeout_s` from the first step. The twin is stopped
whatever happens; `report.py` judges the result against the replay's plan.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from nvcregen.plan.facts import PlanFacts
from nvcregen.plan.model import Pool
from nvcregen.rehearse.apply import Discovery, apply
from nvcregen.rehearse.controlplane import ControlPlaneError
from nvcregen.rehearse.gitopsplay import player_of, read_order
from nvcregen.rehearse.health import FAILED, HEALTHY, WAITING, Health
from nvcregen.rehearse.kueueconfig import kueue_configuration
from nvcregen.rehearse.locate import Builds
from nvcregen.rehearse.nodes import site_nodes
from nvcregen.rehearse.podstages import rehearsal_stages
from nvcregen.rehearse.printer import Printer
from nvcregen.rehearse.report import Collected, Rehearsal
from nvcregen.rehearse.servelogs import serve_pod_logs, wait_served
from nvcregen.rehearse.steps import ApplyStep, Order, StepOutcome
from nvcregen.rehearse.twin import Twin, start
from nvcregen.rehearse.watch import Snapshot, Watch, conditions, run_states
from nvcregen.replay.model import TreeObject
from nvcregen.replay.runs import is_run
from nvcregen.replay.timeline import PlanView

_LISTED = frozenset({"Workload", "Job", "TrainJob"})  # read from the watch's lists


@dataclass(frozen=True)
class Settings:
    """How a rehearsal runs.

    Pods complete `speed` times faster than planned, the steps have `timeout_s` from the
    first, the API server is polled every `poll_s`, or less often when a poll costs more
    than half of that (`watch.pause_s`). A site whose engine's controllers the twin runs
    (Flux's) is played by them (`gitopsplay.GitOpsPlayer.play`) unless `real_engine` is off.
    """

    speed: float = 100.0
    timeout_s: float = 600.0
    poll_s: float = 0.3
    real_engine: bool = True  # False: every site's steps played by nvcregen (`_play`)


def rehearse(
    objects: Sequence[TreeObject],
    facts: PlanFacts,
    plan: PlanView,
    pools: Sequence[Pool],
    builds: Builds,
    folder: Path,
    settings: Settings,
    started: Callable[[Twin], None] | None = None,
    logs: Printer | None = None,
    collect: Callable[[Path], Collected] | None = None,
) -> Rehearsal:
    """Rehearse a rendered tree on a twin started in `folder`; the twin is always stopped.

    `started` is called with the running twin (a test's hook, e.g. to see its processes).
    With `logs`, kwok serves each bound pod the log its run would print once the steps
    are done (`servelogs.py`), and `collect` (given the twin's kubeconfig) reads them
    back into verdicts before the twin stops.
    """
    began = time.monotonic()
    order = read_order(objects, facts.root, checks_elsewhere=facts.external_health_checks)
    step_of = {path: step.key for step in order.steps for path in step.runs}
    states = run_states([o for o in objects if is_run(o) and o.path in step_of], step_of, objects)
    expected = {key: timing.expected_ms for key, timing in facts.timings.items()}
    nodes = site_nodes(pools)
    twin: Twin = start(
        folder,
        builds,
        nodes,
        trainer=True,
        kueue_settings=kueue_configuration(objects),
        stages=rehearsal_stages(builds.manifests, expected, settings.speed),
        pod_logs=logs is not None,
    )
    try:
        if started is not None:
            started(twin)
        twin_s = time.monotonic() - began
        watch = Watch(twin.plane, states)
        played = None
        if order.gitops is not None and settings.real_engine:
            played = player_of(order.gitops).play(
                twin,
                objects,
                facts.root,
                order,
                watch,
                timeout_s=settings.timeout_s,
                poll_s=settings.poll_s,
                speed=settings.speed,
            )
        outcomes = played if played is not None else _play(twin, order, watch, settings)
        _finish(watch, settings)
        collected = None
        if logs is not None:
            runs = [o for o in objects if is_run(o) and o.path in step_of]
            collected = collect_logs(twin, runs, logs, folder / "pod-logs", collect)
        return Rehearsal(
            facts.site,
            order.engine,
            settings.speed,
            settings.timeout_s,
            plan,
            tuple(outcomes),
            tuple(states),
            watch.most,
            dict(watch.at_once),
            order.skipped,
            tuple(n.name for n in nodes),
            twin_s,
            time.monotonic() - began,
            collected,
            engine_ran=played is not None,
        )
    finally:
        twin.stop()


def collect_logs(
    twin: Twin,
    runs: Sequence[TreeObject],
    logs: Printer,
    folder: Path,
    collect: Callable[[Path], Collected] | None,
) -> Collected:
    """Serve every bound pod its log, then collect (when asked): what it made of them."""
    try:
        served = serve_pod_logs(twin.plane, runs, logs, folder)
    except ControlPlaneError as exc:
        return Collected(error=f"the pods' logs were not served: {exc}")
    count = sum(1 for s in served if s.first)
    problem = wait_served(twin.plane, served)
    if problem:
        return Collected(error=problem, served=count)
    if collect is None:
        return Collected(served=count)
    return replace(collect(twin.plane.kubeconfig), served=count)


def _play(twin: Twin, order: Order, watch: Watch, settings: Settings) -> list[StepOutcome]:
    discovery = Discovery(twin.plane)
    outcomes: list[StepOutcome] = []
    stopped = False
    for step in order.steps:
        if stopped or watch.now() > settings.timeout_s:
            outcomes.append(StepOutcome(step.key, step.label, None))
            continue
        applied = watch.now()
        refused = tuple(
            f"{o.kind}/{o.name}: {why}"
            for o in step.objects
            for why in [apply(twin.plane, discovery, o.obj)]
            if why
        )
        for run in watch.runs:
            if run.step == step.key:
                run.applied_s = applied
        done, failed = None, ""
        if refused:
            failed, stopped = "the engine's apply failed: an object was refused", True
        elif step.waits:
            done, failed = _wait_healthy(twin, order, step, watch, discovery, settings)
            stopped = bool(failed) or done is None
        else:  # Ready once applied: the engine does not wait on it
            watch.poll()
            done = watch.now()
        outcomes.append(StepOutcome(step.key, step.label, applied, done, refused, failed))
    return outcomes


def _finish(watch: Watch, settings: Settings) -> None:
    """After the steps: watch the runs still going, until the rehearsal's time is up."""
    while watch.now() <= settings.timeout_s and any(
        r.applied_s is not None and r.finished_s is None for r in watch.runs
    ):
        watch.poll()
        watch.pause(settings.poll_s)


def _wait_healthy(
    twin: Twin,
    order: Order,
    step: ApplyStep,
    watch: Watch,
    discovery: Discovery,
    settings: Settings,
) -> tuple[float | None, str]:
    """Poll until every object of the step is healthy: when, or why it failed.

    (None, "") when the rehearsal's time is up first.
    """
    while watch.now() <= settings.timeout_s:
        snapshot = watch.poll()
        verdicts = [
            (item, _health(order, step, item, _live(twin, discovery, snapshot, item)))
            for item in step.objects
        ]
        failed = [(i, h) for i, h in verdicts if h is not None and h.verdict == FAILED]
        if failed:
            item, health = failed[0]
            return None, f"{item.kind}/{item.name}: {health.status}: {health.message}"
        if all(h is None or h.verdict == HEALTHY for _, h in verdicts):
            return watch.now(), ""
        watch.pause(settings.poll_s)
    return None, ""


def _live(
    twin: Twin, discovery: Discovery, snapshot: Snapshot, item: TreeObject
) -> Mapping[str, Any] | None:
    if item.kind in _LISTED:
        return snapshot.get(item.kind, item.namespace or "default", item.name)
    path = discovery.path(item.obj)
    return twin.get(path) if path is not None else None


def _health(
    order: Order, step: ApplyStep, item: TreeObject, live: Mapping[str, Any] | None
) -> Health | None:
    """The engine's health of one object; None when the engine does not check it.

    Without GitOps objects, a run no check of the tree covers is waited on until it ends.
    """
    found = order.judge.health(order, step, item, live) if order.judge is not None else None
    if found is not None:
        return found
    if order.gitops is None and is_run(item):
        return _finished(live)
    return None


def _finished(live: Mapping[str, Any] | None) -> Health:
    """Without GitOps objects every run is waited on until it completes."""
    true = conditions(live)
    if "Failed" in true:
        return Health(FAILED, "Failed", str(true["Failed"].get("message") or ""))
    if "Complete" in true:
        return Health(HEALTHY, "Complete")
    return Health(WAITING, "Running")
