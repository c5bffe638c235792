"""NVC791: a run timeout too short for what a test kind's own script budgets inside it (pure).

A kind whose script spends its run in steps (link counters: a snapshot, traffic for
`trafficDuration`, a snapshot, all inside the run's outer deadline) says, through
`TestKind.timeout_gap`, when a timeout cuts one of them short. Such a site would fail
every node for its own configuration, so it is refused here, before anything runs: at
the stage's `timeoutPerJob` when the site writes one, else at the test the stage names
(its timeout then is the expected duration x `timeoutFactor`).
"""

from __future__ import annotations

from collections.abc import Sequence

from nvcregen.core import codes, units
from nvcregen.core.errors import Diagnostic, Severity
from nvcregen.kindapi.registry import kind_of
from nvcregen.plan.model import TestUnit
from nvcregen.spec.positions import Document

TOO_SHORT = codes.NVC791.code


def kind_timeout_problems(doc: Document, test_units: Sequence[TestUnit]) -> list[Diagnostic]:
    """NVC791 for each stage and test whose run timeout its kind cannot work within."""
    found: list[Diagnostic] = []
    seen: set[tuple[int, str, int]] = set()
    for unit in test_units:
        key = (unit.stage_index, unit.test.name, unit.timeout_ms)
        if key in seen:
            continue
        seen.add(key)
        gap = kind_of(unit.test).timeout_gap(unit.test, unit.timeout_ms)
        if gap is None:
            continue
        written = unit.stage.timeout_per_job
        timeout = units.format_duration(unit.timeout_ms)
        if written is not None:
            where = f"/spec/readiness/stages/{unit.stage_index}/timeoutPerJob"
            said = f"timeoutPerJob {written}"
            hint = "raise the stage's timeoutPerJob, or shorten the catalog entry's trafficDuration"
        else:
            index = unit.stage.tests.index(unit.test.name)
            where = f"/spec/readiness/stages/{unit.stage_index}/tests/{index}"
            said = f"the run timeout {timeout} (expected x timeoutFactor)"
            hint = "set the stage's timeoutPerJob, or raise readiness.window.timeoutFactor"
        message = f"{said} is too short for {unit.test.name} in stage {unit.stage.name}: {gap}"
        found.append(Diagnostic(doc.span(where), Severity.ERROR, TOO_SHORT, message, where, hint))
    return found
