"""Semantic checks of `readiness.periodic` (docs/design/0021-periodic.md).

- NVC325 (error): a schedule or time zone a batch/v1 CronJob refuses (`core/cron.py`).
- NVC326 (error): a periodic stage that does not exist or is not `intra-node`: a CronJob
  repeats one Job, and a multi-node TrainJob has no native periodic form.
- NVC327 (error): `periodic` outside trainer mode: NVCRE states periodic re-testing as a
  non-goal and has no object that repeats a Certification (reference/nvcre-api.md).
- NVC328 (error): a periodic stage whose tests cannot share a node pack (a pool that
  names no nodes, a test with no per-node or collective form).
- NVC329 (warning): an external Kueue (`managed: false`): nvcregen generates no
  WorkloadPriorityClass, so periodic runs queue at the default priority, level with tenants.
"""

from __future__ import annotations

import zoneinfo

from nvcregen.catalog.load import Catalog
from nvcregen.core import codes
from nvcregen.core.cron import CronError, parse_cron
from nvcregen.core.errors import Diagnostic, Severity
from nvcregen.engineapi.registry import readiness_of
from nvcregen.kindapi.registry import kind_of
from nvcregen.plan.resolve import stage_pool_name
from nvcregen.spec.positions import Document
from nvcregen.spec.v1alpha1 import Periodic, Site

PERIODIC = "/spec/readiness/periodic"
_WHY = "a CronJob repeats one Job, and a multi-node TrainJob has no native periodic form"


def periodic_problems(site: Site, catalog: Catalog, doc: Document) -> list[Diagnostic]:
    """Every problem of a site's `readiness.periodic`; [] without one."""
    periodic = site.spec.readiness.periodic
    if periodic is None:
        return []
    found: list[Diagnostic] = []

    def add(where: str, code: str, message: str, hint: str, severity: Severity) -> None:
        found.append(Diagnostic(doc.span(where), severity, code, message, where, hint))

    if not readiness_of(site).writes_runs:
        message = (
            "readiness.periodic needs trainer mode: NVCRE has no object that repeats a "
            "Certification (periodic re-testing is one of its non-goals)"
        )
        hint = "set readiness.engine: trainer, or remove periodic"
        add(PERIODIC, codes.NVC327.code, message, hint, Severity.ERROR)
        return found
    for where, message, hint in _schedule_problems(periodic):
        add(where, codes.NVC325.code, message, hint, Severity.ERROR)
    for where, code, message, hint in _stage_problems(site, catalog, periodic):
        add(where, code, message, hint, Severity.ERROR)
    kueue = site.spec.dependencies.kueue
    if site.spec.dependencies.gang_scheduler is None and not kueue.managed:
        message = (
            "with an external Kueue nvcregen makes no WorkloadPriorityClass: periodic runs "
            "queue at the default priority, level with tenant work, which cannot preempt them"
        )
        hint = "set dependencies.kueue.managed: true, or give the LocalQueue's Jobs a lower class"
        add(PERIODIC, codes.NVC329.code, message, hint, Severity.WARNING)
    return found


def _schedule_problems(periodic: Periodic) -> list[tuple[str, str, str]]:
    found: list[tuple[str, str, str]] = []
    try:
        parse_cron(periodic.schedule)
    except CronError as error:
        hint = "five fields: minute hour day-of-month month day-of-week, e.g. '0 3 * * 0'"
        found.append((f"{PERIODIC}/schedule", f"schedule '{periodic.schedule}': {error}", hint))
    zone = periodic.time_zone
    if zone is not None and not _known_zone(zone):
        hint = "an IANA time zone name such as Etc/UTC or Europe/Berlin"
        found.append((f"{PERIODIC}/timeZone", f"unknown time zone '{zone}'", hint))
    return found


def _known_zone(zone: str) -> bool:
    """Whether the CronJob controller's tz database knows `zone` (it refuses `Local`)."""
    if zone == "Local":
        return False
    try:
        zoneinfo.ZoneInfo(zone)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        return False
    return True


def _stage_problems(
    site: Site, catalog: Catalog, periodic: Periodic
) -> list[tuple[str, str, str, str]]:
    stages = {s.name: s for s in site.spec.readiness.stages}
    pools = {p.name: p for p in site.spec.node_pools}
    found: list[tuple[str, str, str, str]] = []
    for i, name in enumerate(periodic.stages):
        where = f"{PERIODIC}/stages/{i}"
        stage = stages.get(name)
        if stage is None:
            hint = f"one of: {', '.join(stages)}"
            found.append((where, codes.NVC326.code, f"no stage named '{name}'", hint))
            continue
        if name in periodic.stages[:i]:
            found.append((where, codes.NVC326.code, f"stage '{name}' is listed twice", ""))
            continue
        if stage.scope != "intra-node":
            message = f"stage '{name}' is inter-node: it cannot run periodically ({_WHY})"
            hint = "list only intra-node stages; re-run inter-node stages with `nvcregen retest`"
            found.append((where, codes.NVC326.code, message, hint))
            continue
        pool = pools.get(stage_pool_name(site, stage))
        if pool is not None and pool.nodes is None:
            message = (
                f"stage '{name}' runs on pool '{pool.name}', which names no nodes: a periodic "
                "node pack is pinned to each node by name"
            )
            hint = f"list the nodes of pool '{pool.name}' (nodes: [...])"
            found.append((where, codes.NVC328.code, message, hint))
            continue
        for test_name in stage.tests:
            test = catalog.tests.get(test_name)
            if test is None:
                continue  # NVC302 says so
            kind = kind_of(test)
            if not (kind.per_node or kind.collective):
                message = f"test '{test_name}' of stage '{name}' has no node-pack form"
                hint = f"re-run stage '{name}' with `nvcregen retest`, or remove it here"
                found.append((where, codes.NVC328.code, message, hint))
    return found
