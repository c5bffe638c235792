"""Tests of CronJob schedules (nvcregen.core.cron): what batch/v1 accepts, runs per week."""

from __future__ import annotations

import pytest

from nvcregen.core.cron import CronError, parse_cron, runs_per_week


@pytest.mark.parametrize(
    ("schedule", "field"),
    [
        ("60 * * * *", "minute '60': 60 is outside 0-59"),
        ("* 24 * * *", "hour '24': 24 is outside 0-23"),
        ("* * 0 * *", "day of month '0': 0 is outside 1-31"),
        ("* * 32 * *", "day of month '32': 32 is outside 1-31"),
        ("* * * 0 *", "month '0': 0 is outside 1-12"),
        ("* * * 13 *", "month '13': 13 is outside 1-12"),
        ("* * * * 7", "day of week '7': 7 is outside 0-6"),
        ("*/0 * * * *", "a step is a whole number of at least 1"),
        ("5-1 * * * *", "the range starts after it ends"),
        ("x * * * *", "'x' is not a number"),
    ],
)
def test_a_field_out_of_range_is_refused(schedule: str, field: str) -> None:
    with pytest.raises(CronError, match=field.replace("*", r"\*")):
        parse_cron(schedule)


@pytest.mark.parametrize(
    "schedule", ["59 23 31 12 6", "0 0 1 1 0", "0-59/15 0,12 1-31 JAN-DEC sun-sat", "? * * * ?"]
)
def test_every_bound_of_every_field_is_accepted(schedule: str) -> None:
    parse_cron(schedule)


@pytest.mark.parametrize(
    ("schedule", "why"),
    [
        ("0 3 * *", "exactly 5 fields, found 4"),
        ("0 0 3 * * *", "exactly 5 fields, found 6"),
        ("CRON_TZ=UTC 0 3 * * *", "use timeZone"),
        ("TZ=UTC 0 3 * * *", "use timeZone"),
        ("@every 1h", "@every"),
        ("@fortnightly", "unknown descriptor"),
        # found by review: `str.isdigit` took these (a CronJob refuses them), and '²'
        # then escaped `int` as a ValueError, a traceback instead of NVC325
        ("\u0663 * * * *", "is not a number"),
        ("\u00b2 * * * *", "is not a number"),
        ("*/\u00b2 * * * *", "a step is a whole number"),
        ("*/" + "9" * 5000 + " * * * *", "a step is a whole number"),
    ],
)
def test_what_a_cronjob_refuses_is_refused(schedule: str, why: str) -> None:
    with pytest.raises(CronError, match=why):
        parse_cron(schedule)


def test_a_descriptor_is_its_five_fields() -> None:
    assert parse_cron("@weekly") == parse_cron("0 0 * * 0")
    assert parse_cron("@hourly").per_day == 24


def test_a_step_from_a_value_runs_to_the_field_end() -> None:
    assert parse_cron("50/5 * * * *").minutes == {50, 55}
    assert parse_cron("1-10/4 * * * *").minutes == {1, 5, 9}


def test_runs_per_week_of_a_weekly_and_a_daily_schedule() -> None:
    average, worst = runs_per_week(parse_cron("0 3 * * 0"))
    assert worst == 1
    assert average == pytest.approx(1.0, abs=0.02)
    assert runs_per_week(parse_cron("0 */6 * * *")) == (28.0, 28)


def test_both_day_fields_restricted_match_either() -> None:
    # the 1st of each month or any Monday: a week holding both has two runs
    schedule = parse_cron("0 0 1 * 1")
    average, worst = runs_per_week(schedule)
    assert worst == 2
    assert 1.0 < average < 2.0
    # one day field a star: the other alone decides (the 1st, never two in a week)
    assert runs_per_week(parse_cron("0 0 1 * *"))[1] == 1
    assert parse_cron("0 0 1 * *").any_weekday
