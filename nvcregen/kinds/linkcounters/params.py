"""The `linkcounters` block of a catalog test: what is read, and the limits it is held to."""

from __future__ import annotations

from fnmatch import fnmatchcase
from typing import Annotated, Literal

from pydantic import Field, model_validator

from nvcregen.core import units
from nvcregen.spec.v1alpha1 import Duration, StrictModel

COUNTER = r"^[A-Za-z0-9_][A-Za-z0-9_.*-]{0,63}$"  # a sysfs or ethtool name; `*` in `reported`
Group = Literal["counters", "hw_counters", "ethtool"]


class CounterLimit(StrictModel):
    """The most one port's counter may grow over the measured interval, and why.

    `maxDelta` holds the growth itself (0: any increase fails); `maxPerHour` its rate
    over the interval between the two snapshots. Exactly one of them is stated.
    """

    counter: Annotated[str, Field(pattern=r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$")]
    """The counter's file name (`counters/`, `hw_counters/`) or ethtool statistic."""
    group: Group = "counters"
    """Where it is read: the port's `counters/` (IB PMA), `hw_counters/`, or `ethtool -S`."""
    max_delta: Annotated[int, Field(ge=0)] | None = None
    """The most it may grow between the snapshots."""
    max_per_hour: Annotated[float, Field(ge=0)] | None = None
    """The most it may grow per hour of the interval between the snapshots."""
    sources: list[str] = Field(min_length=1)
    """Where the limit comes from."""

    @model_validator(mode="after")
    def _one_bound(self) -> CounterLimit:
        """A limit states one bound: a growth, or a rate."""
        if (self.max_delta is None) == (self.max_per_hour is None):
            raise ValueError(f"{self.counter}: state exactly one of maxDelta and maxPerHour")
        return self


class ReportedCounter(StrictModel):
    """Counters shown with their growth and rate, judged only where a limit names them."""

    counter: Annotated[str, Field(pattern=COUNTER)]
    """A name, or a pattern with `*` (`rx_prio*_pause`)."""
    group: Group = "hw_counters"

    def matches(self, group: str, name: str) -> bool:
        """Whether a read counter is this one (or matches its pattern)."""
        return group == self.group and fnmatchcase(name, self.counter)


class LinkCountersParams(StrictModel):
    """Every HCA port's counters, read before and after loopback RDMA traffic on each HCA."""

    traffic_duration: Duration = "60s"
    """How long each HCA carries perftest traffic between the snapshots (`-D`)."""
    limits: list[CounterLimit] = Field(min_length=1)
    reported: list[ReportedCounter] = Field(default_factory=list)
    expected_duration: Duration
    """Both snapshots and the traffic, pod start not included."""

    @model_validator(mode="after")
    def _each_once(self) -> LinkCountersParams:
        """A counter has one limit."""
        names = [(limit.group, limit.counter) for limit in self.limits]
        twice = sorted({f"{g}/{n}" for g, n in names if names.count((g, n)) > 1})
        if twice:
            raise ValueError(f"each counter has one limit (twice: {', '.join(twice)})")
        if units.parse_duration(self.expected_duration) <= units.parse_duration(
            self.traffic_duration
        ):
            raise ValueError(
                "expectedDuration holds both snapshots and the traffic: it must be longer than"
                f" trafficDuration ({self.expected_duration} <= {self.traffic_duration})"
            )
        return self
