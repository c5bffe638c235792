"""Tests of `readiness.periodic`'s checks (nvcregen.validate.periodic): NVC325-NVC329."""

from __future__ import annotations

from typing import Any

import pytest
from periodicfactory import periodic_text
from sitefactory import catalog, edit, line_of, parse, schema_diagnostics

from nvcregen.core.errors import Severity
from nvcregen.validate.semantic import check_references


def diagnose(text: str) -> list[Any]:
    site, doc = parse(text)
    return [d for d in check_references(site, catalog(), doc) if d.code.startswith("NVC32")]


def periodic(body: str) -> str:
    return periodic_text(f"    periodic: {body}\n")


def test_a_weekly_periodic_single_node_stage_is_clean() -> None:
    assert diagnose(periodic("{schedule: '0 3 * * 0', stages: [single-node]}")) == []
    zoned = "{schedule: '@daily', stages: [single-node], timeZone: Etc/UTC, startingDeadline: 2h}"
    assert diagnose(periodic(zoned)) == []


@pytest.mark.parametrize(
    ("schedule", "said"),
    [("60 3 * * 0", "60 is outside 0-59"), ("0 3 * * 7", "7 is outside 0-6"), ("0 3 * *", "5")],
)
def test_a_schedule_a_cronjob_refuses_is_nvc325(schedule: str, said: str) -> None:
    text = periodic(f"{{schedule: '{schedule}', stages: [single-node]}}")
    (diag,) = diagnose(text)
    assert diag.code == "NVC325"
    assert diag.severity is Severity.ERROR
    assert diag.path == "/spec/readiness/periodic/schedule"
    assert diag.span.line == line_of(text, "periodic:")
    assert said in diag.message
    assert "five fields" in diag.hint


def test_an_unknown_time_zone_is_nvc325() -> None:
    (diag,) = diagnose(periodic("{schedule: '@daily', stages: [single-node], timeZone: Mars/Base}"))
    assert (diag.code, diag.path) == ("NVC325", "/spec/readiness/periodic/timeZone")
    (local,) = diagnose(periodic("{schedule: '@daily', stages: [single-node], timeZone: Local}"))
    assert local.code == "NVC325"


def test_an_inter_node_stage_is_nvc326_saying_why() -> None:
    (diag,) = diagnose(periodic("{schedule: '@daily', stages: [two-node]}"))
    assert diag.code == "NVC326"
    assert diag.path == "/spec/readiness/periodic/stages/0"
    assert "a CronJob repeats one Job" in diag.message
    assert "multi-node TrainJob has no native periodic form" in diag.message
    assert "nvcregen retest" in diag.hint


def test_an_unknown_or_repeated_stage_is_nvc326() -> None:
    (diag,) = diagnose(periodic("{schedule: '@daily', stages: [nope]}"))
    assert diag.code == "NVC326"
    assert "single-node" in diag.hint
    (twice,) = diagnose(periodic("{schedule: '@daily', stages: [single-node, single-node]}"))
    assert (twice.code, twice.path) == ("NVC326", "/spec/readiness/periodic/stages/1")


def test_periodic_in_nvcre_mode_is_nvc327() -> None:
    text = periodic("{schedule: '@daily', stages: [single-node]}")
    text = edit(text, "    engine: trainer ", "    engine: nvcre ")
    text = edit(text, "    packing: packed\n", "")
    (diag,) = diagnose(text)
    assert (diag.code, diag.severity) == ("NVC327", Severity.ERROR)
    assert "engine: trainer" in diag.hint


def test_periodic_with_an_external_kueue_warns_nvc329() -> None:
    text = periodic("{schedule: '@daily', stages: [single-node]}")
    text = edit(
        text, "      managed: true\n      localQueue", "      managed: false\n      localQueue"
    )
    (diag,) = diagnose(text)
    assert (diag.code, diag.severity) == ("NVC329", Severity.WARNING)


def test_the_schema_refuses_an_unknown_key_and_an_empty_stage_list() -> None:
    assert schema_diagnostics(periodic("{schedule: '@daily', stages: []}"))
    assert schema_diagnostics(periodic("{schedule: '@daily', stages: [a], every: 1h}"))
