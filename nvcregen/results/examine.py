"""Every finding about a collection's evidence: binding, plausibility, shapes, copies (pure)."""

from __future__ import annotations

from collections.abc import Sequence

from nvcregen.catalog.load import Catalog
from nvcregen.kindapi.registry import kind_of
from nvcregen.plan.model import TestUnit
from nvcregen.results.binding import bind
from nvcregen.results.copies import copies
from nvcregen.results.findings import Finding
from nvcregen.results.logrecords import LogRecord
from nvcregen.results.measured import unmeasured
from nvcregen.results.missing import missing, refused
from nvcregen.results.nodebind import begin_findings
from nvcregen.results.packlogs import pack_findings
from nvcregen.results.runs import RunSet
from nvcregen.results.shapes import shapes


def examine(
    units: Sequence[TestUnit],
    catalog: Catalog,
    runs: RunSet,
    records: Sequence[LogRecord] = (),
) -> tuple[Finding, ...]:
    """Findings of every run with measurements, in the plan's order of runs.

    Each run is examined against the planned test of its stage: which of its
    measurements were refused as evidence and which groups and nodes no valid one
    holds; then, for NCCL tests, who produced its rounds, whether its numbers fit under
    its links' ceiling, the shape of its sweeps, and whether it has a final measurement
    at all. Then the evidence is compared: final rounds and finished logs (`records`:
    what each log read held, its sha256 among it) found for two runs, or repeated in
    one (`copies.py`). A DCGM log is bound to its node by the node it names
    (`nodebind.py`); a packed run's section refused as evidence is named with its code
    (`packlogs.py`).
    """
    planned = {(u.stage.name, u.test.name): u for u in units}
    found: list[Finding] = []
    for run in runs.runs:
        unit = planned.get((run.stage, run.test))
        found += refused(run)
        if unit is None:
            continue
        found += missing(run, unit)
        if not kind_of(unit.test).collective:
            continue
        found += bind(run, unit, catalog)
        found += shapes(run)
        found += unmeasured(run)
    found += begin_findings(records)
    found += pack_findings(records)
    found += copies(runs, records)
    return tuple(found)
