"""One period of `readiness.periodic` on the twin, from the CronJob controller to the verdict.

`rehearse_period` starts the twin with kube-controller-manager's CronJob controller on
(`twin.PERIOD_CONTROLLERS`), kwok completing each periodic pack's pods after its planned
duration / speed, and Kueue from the site's own Configuration; applies what
`period.period_plan` chose (Namespaces, the queues layer, the periodic layer with each
CronJob's schedule set to the next minute: the rehearsal's one change), the CronJobs all
in one minute (`period.wait_before_create_s`); then watches: as soon as a CronJob's first
Job exists the CronJob is suspended, so one period runs; Kueue admits the Jobs at the
periodic priority, kube-scheduler binds their pods, kwok completes them. Once every Job
has finished (or `timeout_s` from the apply has passed), each pod serves the log its pack
would print (`servelogs.py`, the kinds' makers; `--fail`'s node failing) and `collect`'s
own `--period` code reads the period from the twin. The twin is stopped whatever happens.

A Flux site's periodic Kustomization, like an Argo CD Application, is not run by its
engine here: the rehearsal applies the layer itself, once, as the engine's sync would.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

from nvcregen.core.labels import PERIODIC_LABEL
from nvcregen.plan.model import Pool
from nvcregen.rehearse.apply import Discovery, apply
from nvcregen.rehearse.controlplane import list_items
from nvcregen.rehearse.kueueconfig import kueue_configuration
from nvcregen.rehearse.locate import Builds
from nvcregen.rehearse.nodes import site_nodes
from nvcregen.rehearse.period import (
    Cron,
    PeriodJob,
    PeriodPlan,
    period_jobs,
    period_of,
    problems,
    wait_before_create_s,
)
from nvcregen.rehearse.podstages import rehearsal_stages
from nvcregen.rehearse.printer import Printer
from nvcregen.rehearse.rehearsal import Settings, collect_logs
from nvcregen.rehearse.report import Collected
from nvcregen.rehearse.twin import PERIOD_CONTROLLERS, Twin, start
from nvcregen.rehearse.watch import KUEUE
from nvcregen.replay.model import TreeObject

MERGE = "application/merge-patch+json"
SUSPEND = {"spec": {"suspend": True}}


@dataclass(frozen=True)
class PeriodRehearsal:
    """What one period's rehearsal did: applied, made, found, collected.

    Attributes:
        site: The site's name.
        plan: What was applied and expected (`period.period_plan`).
        refused: Objects the API server or a webhook refused (`Kind/name: why`).
        jobs: Each CronJob's Jobs, by the CronJob's name.
        period: The period's id, the scheduled minutes since the epoch (None: no Job).
        suspended: The CronJobs the API server held suspended at the end (each is
            suspended after its first Job).
        nodes: The twin's nodes.
        twin_s: Seconds to start the twin; wall_s: the whole rehearsal.
        collected: What `collect --period` made of the pods' logs (None: not collected).
        speed: Pods' speed-up over the plan's durations.

    """

    site: str
    plan: PeriodPlan
    refused: tuple[str, ...]
    jobs: Mapping[str, tuple[PeriodJob, ...]]
    period: int | None
    suspended: tuple[str, ...]
    nodes: tuple[str, ...]
    twin_s: float
    wall_s: float
    collected: Collected | None
    speed: float

    @property
    def problems(self) -> list[str]:
        """Refusals and what kept the period's Jobs from running as planned."""
        said = [f"refused: {r}" for r in self.refused]
        lists = {name: list(jobs) for name, jobs in self.jobs.items()}
        said += [
            f"CronJob {name} was not suspended after its first Job: another period could run"
            for name, jobs in lists.items()
            if jobs and name not in self.suspended
        ]
        return said + problems(self.plan, lists)


def rehearse_period(
    site: str,
    objects: Sequence[TreeObject],
    plan: PeriodPlan,
    pools: Sequence[Pool],
    builds: Builds,
    folder: Path,
    settings: Settings,
    logs: Printer,
    collect: Callable[[Path, str], Collected] | None = None,
) -> PeriodRehearsal:
    """Rehearse one period of the site's `readiness.periodic` (see the module's docstring)."""
    began = time.monotonic()
    nodes = site_nodes(pools)
    twin: Twin = start(
        folder,
        builds,
        nodes,
        trainer=True,
        kueue_settings=kueue_configuration(objects),
        stages=rehearsal_stages(builds.manifests, plan.expected_ms, settings.speed),
        pod_logs=True,
        controllers=PERIOD_CONTROLLERS,
    )
    try:
        twin_s = time.monotonic() - began
        refused = _apply(twin, plan)
        jobs: dict[str, list[PeriodJob]] = {c.name: [] for c in plan.crons}
        if not refused:
            jobs = _watch(twin, plan, settings)
        period = period_of(jobs)
        collected = None
        if period is not None and not refused:
            runs = [_run(job) for job in _live_jobs(twin, plan, period)]
            collected = collect_logs(
                twin,
                runs,
                logs,
                folder / "pod-logs",
                None if collect is None else (lambda path: collect(path, str(period))),
            )
        return PeriodRehearsal(
            site,
            plan,
            refused,
            {name: tuple(found) for name, found in jobs.items()},
            period,
            _suspended(twin, plan),
            tuple(n.name for n in nodes),
            twin_s,
            time.monotonic() - began,
            collected,
            settings.speed,
        )
    finally:
        twin.stop()


def _apply(twin: Twin, plan: PeriodPlan) -> tuple[str, ...]:
    """Apply the plan's objects, the CronJobs all in one minute; the refusals."""
    discovery = Discovery(twin.plane)
    refused: list[str] = []
    waited = False
    for item in plan.objects:
        if item.kind == "CronJob" and not waited:
            time.sleep(wait_before_create_s(datetime.now(UTC)))
            waited = True
        why = apply(twin.plane, discovery, item.obj)
        if why:
            refused.append(f"{item.kind}/{item.name}: {why}")
    return tuple(refused)


def _cron_path(cron: Cron) -> str:
    return f"/apis/batch/v1/namespaces/{quote(cron.namespace)}/cronjobs/{quote(cron.name)}"


def _suspended(twin: Twin, plan: PeriodPlan) -> tuple[str, ...]:
    """The CronJobs the API server holds suspended (`spec.suspend`), read at the end."""
    held = []
    for cron in plan.crons:
        code, live = twin.plane.request("GET", _cron_path(cron))
        if code == 200 and isinstance(live, dict) and (live.get("spec") or {}).get("suspend"):
            held.append(cron.name)
    return tuple(held)


def _watch(twin: Twin, plan: PeriodPlan, settings: Settings) -> dict[str, list[PeriodJob]]:
    """Poll until every CronJob's Job has finished, suspending each after its first Job."""
    deadline = time.monotonic() + settings.timeout_s
    found: dict[str, list[PeriodJob]] = {}
    suspended: set[str] = set()
    while True:
        found = _read(twin, plan)
        for cron in plan.crons:
            if found[cron.name] and cron.name not in suspended:  # else tried again next poll
                code, _ = twin.plane.request("PATCH", _cron_path(cron), SUSPEND, content_type=MERGE)
                if 200 <= code < 300:
                    suspended.add(cron.name)
        done = all(found[c.name] and all(j.outcome for j in found[c.name]) for c in plan.crons)
        if done or time.monotonic() > deadline:
            return found
        time.sleep(settings.poll_s)


def _read(twin: Twin, plan: PeriodPlan) -> dict[str, list[PeriodJob]]:
    jobs: list[Mapping[str, Any]] = []
    workloads: list[Mapping[str, Any]] = []
    pods: list[Mapping[str, Any]] = []
    selector = quote(f"{PERIODIC_LABEL}=true", safe="")
    for namespace in sorted({c.namespace for c in plan.crons}):
        where = quote(namespace)
        plane, labelled = twin.plane, f"labelSelector={selector}"
        jobs += list_items(plane, f"/apis/batch/v1/namespaces/{where}/jobs?{labelled}")
        workloads += list_items(plane, f"{KUEUE}/namespaces/{where}/workloads")
        pods += list_items(plane, f"/api/v1/namespaces/{where}/pods?{labelled}")
    return period_jobs(plan.crons, jobs, workloads, pods)


def _live_jobs(twin: Twin, plan: PeriodPlan, period: int) -> list[Mapping[str, Any]]:
    """The period's Jobs as the API server holds them (the controller's names and labels)."""
    names = {f"{c.name}-{period}" for c in plan.crons}
    selector = quote(f"{PERIODIC_LABEL}=true", safe="")
    return [
        job
        for namespace in sorted({c.namespace for c in plan.crons})
        for job in list_items(
            twin.plane,
            f"/apis/batch/v1/namespaces/{quote(namespace)}/jobs?labelSelector={selector}",
        )
        if (job.get("metadata") or {}).get("name") in names
    ]


def _run(job: Mapping[str, Any]) -> TreeObject:
    """A live Job as a run whose pods get logs: `servelogs` reads its name and labels."""
    obj = {"apiVersion": "batch/v1", "kind": "Job", **{k: job[k] for k in ("metadata", "spec")}}
    return TreeObject("", f"period/{job['metadata']['name']}", obj)
