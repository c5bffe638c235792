"""A trainer-mode burn-in log -> its run's record: bound to its node, judged GPU by GPU.

The script (`templates/burn-in.sh.j2`) prints `@@nvcregen-burnin begin node=N
pod=P start=T` and then `dcgmi diag -r targeted_stress --json --verbose`. The log is bound
to its node as a DCGM log is (`nodebind.py`: another node's is foreign, NVC730), read as
`nvcregen ingest burnin` reads it, and each GPU of the node judged against the test's
expectation of the pool's GPU model (`judge.py`). Each GPU that did not pass
is one error naming the node and the GPU (`gpu-07 GPU 3: NVC768: ...`), so the run's
failed node names them. A log that shows no figure for a GPU, and fails none, is no
evidence (`no-data`), never a pass.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nvcregen.ingest.models import IngestFormatError
from nvcregen.kinds.burnin.judge import Bounds, judge
from nvcregen.kinds.burnin.params import BurnInParams
from nvcregen.kinds.burnin.reader import MARK, parse_burnin
from nvcregen.plan.model import TestUnit
from nvcregen.results.kindlogs import KindRead, capped, kind_record
from nvcregen.results.logrecords import LogRecord
from nvcregen.results.nodebind import FOREIGN, bind_node_log

KIND = "burnin"


def read_burnin(
    text: str, base: Mapping[str, Any], unit: TestUnit, *, names_itself: bool, offset: int = 0
) -> LogRecord:
    """The record of one burn-in log of `unit`: its status and each GPU that did not pass."""
    bound = bind_node_log(text, base, names_itself=names_itself, offset=offset, mark=MARK)
    if isinstance(bound, str):
        return kind_record(KIND, base, FOREIGN, (bound,))
    base = {**base, "hosts": bound}
    params = getattr(unit.test, KIND, None)
    if not isinstance(params, BurnInParams):
        return kind_record(KIND, base, "no-data", (f"test {unit.test.name} has no burnin block",))
    model = unit.pool.hardware.model
    expectation = params.expectation(model)
    if expectation is None:  # nothing to judge against: no evidence (NVC337 at check time)
        return kind_record(
            KIND, base, "no-data", (f"no burn-in figures for {model} in the catalog",)
        )
    try:
        run = parse_burnin(text, str(base["path"]))
    except IngestFormatError as exc:
        return kind_record(KIND, base, "no-data", (str(exc),))
    bounds = Bounds(model, params.floor_of(expectation), expectation.peak_gflops, params.precision)
    verdict = judge(run, bounds, unit.pool.gpus_per_node)
    node = ",".join(bound or base.get("nodes") or ()) or "?"
    errors = [*verdict.problems, *(f"{node} {g.why}" for g in verdict.gpus if g.why)]
    errors = capped(errors)  # a node's record names at most 64 GPUs, then counts the rest
    if not verdict.evidence:
        status = "no-data"
    elif run.status == "truncated" and verdict.passed:
        status = "truncated"
    else:
        status = "ok" if verdict.passed else "failed"
    versions = (run.dcgm_version,) if run.dcgm_version else ()
    return kind_record(KIND, {**base, "versions": versions}, status, tuple(errors))


class BurnInLogs:
    """The burn-in kind's log reader (`results/kindlogs.py`'s `LogReader`)."""

    def read(
        self, text: str, base: Mapping[str, Any], unit: TestUnit, *, names_itself: bool, offset: int
    ) -> KindRead:
        """The record of one burn-in log of `unit` (`read_burnin`)."""
        return KindRead(read_burnin(text, base, unit, names_itself=names_itself, offset=offset))


READER = BurnInLogs()
