"""One period of `readiness.periodic`, collected into an archive of its own (issue 37).

A period is one scheduled time: every periodic CronJob of a site shares the schedule, so
each makes one Job for it, named by the controller `<cronjob>-<scheduled minutes since
the epoch>`; those minutes are the period's id. `nvcregen collect --period P` reads only
that period's Jobs and their pod logs (`<job>-<index>-xxxxx`), P being the minutes or
one of its Jobs' names, or `latest` (the period scheduled last among the periodic Jobs
found, exported or named by the logs), judged against the periodic stages' tests alone
(and the thresholds of their tests inside a node), in one round, as a packed one-shot
run is (`results/packlogs.py`).
The archive is an ordinary one, so `history` sets the periods of a node group side by
side and `quarantine --release` takes a passing period as newer evidence.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from nvcregen.collect.model import CollectError
from nvcregen.plan.model import TestUnit
from nvcregen.plan.packs import Pack
from nvcregen.plan.periodic import periodic_packs
from nvcregen.plan.resolved import Plan
from nvcregen.results.liveobjects import Obj, metadata
from nvcregen.results.logruns import RunLog
from nvcregen.spec.v1alpha1 import Site

LATEST = "latest"
# `<cronjob>-<minutes>` (the Job) and `<job>-<index>-xxxxx` (its pods)
_PERIOD = re.compile(
    r"^(?P<job>[a-z0-9-]+-[0-9a-f]{8}-c\d+-(?P<minutes>\d{1,12}))(?:-\d+-[a-z0-9]{5})?$"
)


@dataclass(frozen=True)
class Period:
    """What one period's collection reads: its minutes, tests, packs, logs and Jobs."""

    minutes: int
    units: tuple[TestUnit, ...]
    packs: tuple[Pack, ...]
    logs: tuple[RunLog, ...]
    objects: tuple[Obj, ...]


def select_period(plan: Plan, asked: str, logs: Sequence[RunLog], objects: Sequence[Obj]) -> Period:
    """The period `asked` (its minutes, a Job's name, or `latest`) of a plan's logs and Jobs.

    Raises:
        CollectError: The site has no `readiness.periodic`, or no log of that period.

    """
    packs = periodic_packs(plan.site, plan.units)
    if not packs:
        raise CollectError(f"--period: site {plan.name} has no readiness.periodic (trainer mode)")
    jobs = {m["job"]: int(m["minutes"]) for log in logs if (m := _PERIOD.match(log.name))}
    jobs |= {
        str(m["job"]): int(m["minutes"])
        for obj in objects
        if (m := _PERIOD.match(str(metadata(obj).get("name", ""))))
    }
    periods = sorted(set(jobs.values()))
    if asked == LATEST:
        minutes = periods[-1] if periods else -1
    elif asked.isdigit():
        minutes = int(asked)
    else:
        minutes = jobs.get(asked, -1)
    mine = tuple(log for log in logs if _minutes_of(log.name) == minutes)
    if not mine:
        known = ", ".join(str(p) for p in periods) or "none"
        raise CollectError(f"--period {asked}: no log of that period (periods found: {known})")
    own = tuple(o for o in objects if _minutes_of(str(metadata(o).get("name", ""))) == minutes)
    members = tuple(u for p in packs for u in p.units)
    return Period(minutes, members, tuple(packs), mine, own)


def period_site(site: Site, units: Sequence[TestUnit]) -> Site:
    """The site as a period is judged: one round, the thresholds of its tests in a node."""
    tests = {u.test.name for u in units}
    readiness = site.spec.readiness.model_copy(update={"rounds": 1})
    thresholds = [t for t in site.spec.thresholds if t.scope == "intra-node" and t.test in tests]
    spec = site.spec.model_copy(update={"readiness": readiness, "thresholds": thresholds})
    return site.model_copy(update={"spec": spec})


def _minutes_of(name: str) -> int:
    match = _PERIOD.match(name)
    return int(match["minutes"]) if match else -2
