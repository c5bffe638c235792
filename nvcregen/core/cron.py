"""Cron schedules as a batch/v1 CronJob takes them, and how often they fire (pure).

Kubernetes validates `spec.schedule` with robfig/cron's `ParseStandard`
(pkg/apis/batch/validation: `validateScheduleFormat`) and refuses any `TZ=`/`CRON_TZ=` in it
(`spec.timeZone` says that). `ParseStandard` takes five fields, each a `*` or `?`, a
number or a range `a-b`, with an optional step `/n` (n >= 1), joined by commas:

- minute 0-59, hour 0-23, day of month 1-31, month 1-12 (or JAN-DEC), day of week 0-6
  (or SUN-SAT; 7 is out of range there);
- a descriptor: `@yearly`, `@annually`, `@monthly`, `@weekly`, `@daily`, `@midnight`,
  `@hourly`.

`@every <duration>` parses upstream too but fires at intervals from the controller's start,
not at wall-clock times, so nvcregen refuses it (its weekly cost is not a property of the
schedule). As in robfig/cron (and Vixie cron), when both day fields are restricted a day
matches either; when either is `*` or `?`, both must match.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

_MONTHS = ("JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC")
_DAYS = ("SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT")
DESCRIPTORS = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}


@dataclass(frozen=True)
class _Field:
    name: str
    low: int
    high: int
    names: tuple[str, ...] = ()
    names_from: int = 0


_FIELDS = (
    _Field("minute", 0, 59),
    _Field("hour", 0, 23),
    _Field("day of month", 1, 31),
    _Field("month", 1, 12, _MONTHS, 1),
    _Field("day of week", 0, 6, _DAYS, 0),
)


class CronError(ValueError):
    """A schedule a CronJob refuses (or nvcregen does), with what is wrong."""


@dataclass(frozen=True)
class Schedule:
    """A parsed schedule: the values of each field, and whether a day field was a star."""

    minutes: frozenset[int]
    hours: frozenset[int]
    days: frozenset[int]
    months: frozenset[int]
    weekdays: frozenset[int]  # 0 is Sunday
    any_day: bool  # day of month was `*` or `?`
    any_weekday: bool  # day of week was `*` or `?`

    def matches_day(self, day: dt.date) -> bool:
        """Whether the schedule fires on some minute of `day` (robfig/cron's day rule)."""
        if day.month not in self.months:
            return False
        dom = day.day in self.days
        dow = (day.isoweekday() % 7) in self.weekdays
        if self.any_day or self.any_weekday:
            return dom and dow
        return dom or dow

    @property
    def per_day(self) -> int:
        """Runs on a day the schedule matches."""
        return len(self.minutes) * len(self.hours)


def parse_cron(text: str) -> Schedule:
    """Parse a CronJob schedule.

    Raises:
        CronError: the schedule is not one a CronJob accepts (or is `@every`).

    """
    if "TZ" in text:
        raise CronError("a CronJob refuses TZ= or CRON_TZ= in its schedule: use timeZone")
    stripped = text.strip()
    if stripped.startswith("@every"):
        raise CronError("@every fires from the controller's start, not at set times")
    if stripped.startswith("@"):
        if stripped not in DESCRIPTORS:
            known = ", ".join(sorted(DESCRIPTORS))
            raise CronError(f"unknown descriptor '{stripped}' (one of {known})")
        stripped = DESCRIPTORS[stripped]
    parts = stripped.split()
    if len(parts) != len(_FIELDS):
        raise CronError(f"expected exactly 5 fields, found {len(parts)}")
    minutes, hours, days, months, weekdays = (
        frozenset(_parse_field(part, field)) for part, field in zip(parts, _FIELDS, strict=True)
    )
    return Schedule(
        minutes,
        hours,
        days,
        months,
        weekdays,
        any_day=parts[2] in ("*", "?"),
        any_weekday=parts[4] in ("*", "?"),
    )


def _parse_field(text: str, field: _Field) -> set[int]:
    found: set[int] = set()
    for item in text.split(","):
        found |= _parse_item(item, field)
    return found


# ASCII digits only, as Go's strconv.Atoi reads them (`str.isdigit` takes '٣' and '²'; the
# latter then fails `int`), and few enough that `int` never refuses the text
_NUMBER = re.compile(r"[0-9]{1,9}")


def _parse_item(item: str, field: _Field) -> set[int]:
    where = f"{field.name} '{item}'"
    range_part, slash, step_part = item.partition("/")
    step = 1
    if slash:
        if not _NUMBER.fullmatch(step_part) or int(step_part) == 0:
            raise CronError(f"{where}: a step is a whole number of at least 1")
        step = int(step_part)
    if range_part in ("*", "?"):
        low, high = field.low, field.high
    else:
        first, dash, last = range_part.partition("-")
        low = _value(first, field, where)
        # robfig/cron: `a/n` runs from a to the field's end
        high = _value(last, field, where) if dash else (field.high if slash else low)
        if low > high:
            raise CronError(f"{where}: the range starts after it ends")
    return set(range(low, high + 1, step))


def _value(text: str, field: _Field, where: str) -> int:
    upper = text.upper()
    if upper in field.names:
        return field.names.index(upper) + field.names_from
    if not _NUMBER.fullmatch(text):
        raise CronError(f"{where}: '{text}' is not a number")
    value = int(text)
    if not field.low <= value <= field.high:
        raise CronError(f"{where}: {value} is outside {field.low}-{field.high}")
    return value


def runs_per_week(schedule: Schedule, year: int = 2027) -> tuple[float, int]:
    """The runs of an average week and of the busiest 7 days (Monday to Sunday) of a year.

    A month-day schedule fires in some weeks and not others: the average is the year's runs
    over its weeks; the worst is the most runs in any calendar week of that year.
    """
    start = dt.date(year, 1, 1)
    days = [start + dt.timedelta(days=n) for n in range((dt.date(year + 1, 1, 1) - start).days)]
    daily = [schedule.per_day if schedule.matches_day(d) else 0 for d in days]
    weeks: dict[tuple[int, int], int] = {}
    for day, count in zip(days, daily, strict=True):
        iso = day.isocalendar()
        weeks[(iso.year, iso.week)] = weeks.get((iso.year, iso.week), 0) + count
    return sum(daily) * 7 / len(days), max(weeks.values())
