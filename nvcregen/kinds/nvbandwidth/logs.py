"""A trainer-mode nvbandwidth log -> its run's record: bound to its node, judged per GPU and pair.

The script (`templates/nvbandwidth.sh.j2`) prints `@@nvcregen-nvbandwidth begin node=N pod=P
start=T` and then nvbandwidth's JSON or text. The log is bound to its node as a DCGM log
is (`nodebind.py`: another node's is foreign, NVC730), read as `nvcregen ingest
nvbandwidth` reads it, unnamed waived testcases named by the test's own testcase order
(the `-t` order the script ran them in), and judged against the floor and ceilings of the
pool's GPU model (`judge.py`). Each failed GPU or pair is one error of the
record (`host_to_device_memcpy_ce GPU 3: 40.1 GB/s, under the floor 48 GB/s`), so the
run's failed node names them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nvcregen.ingest.models import IngestFormatError
from nvcregen.kinds.nvbandwidth.files import model_bounds
from nvcregen.kinds.nvbandwidth.judge import judge
from nvcregen.kinds.nvbandwidth.params import NvbandwidthParams
from nvcregen.kinds.nvbandwidth.reader import MARK, parse_nvbandwidth
from nvcregen.plan.model import TestUnit
from nvcregen.results.kindlogs import KindRead, capped, kind_record
from nvcregen.results.logrecords import LogRecord
from nvcregen.results.nodebind import FOREIGN, bind_node_log

KIND = "nvbandwidth"


def read_nvbandwidth(
    text: str, base: Mapping[str, Any], unit: TestUnit, *, names_itself: bool, offset: int = 0
) -> LogRecord:
    """The record of one nvbandwidth log of `unit`: its status, its failed GPUs and pairs."""
    bound = bind_node_log(text, base, names_itself=names_itself, offset=offset, mark=MARK)
    if isinstance(bound, str):
        return kind_record(KIND, base, FOREIGN, (bound,))
    base = {**base, "hosts": bound}
    params = getattr(unit.test, KIND, None)
    if not isinstance(params, NvbandwidthParams):
        return kind_record(
            KIND, base, "no-data", (f"test {unit.test.name} has no nvbandwidth block",)
        )
    try:
        run = parse_nvbandwidth(text, str(base["path"]), params.testcases)
    except IngestFormatError as exc:
        return kind_record(KIND, base, "no-data", (str(exc),))
    bounds = model_bounds(unit.pool.hardware.model, params)
    if bounds is None or bounds.floor is None:  # nothing to judge against: no evidence
        why = f"no nvbandwidth floor for {unit.pool.hardware.model} in the catalog: not judged"
        return kind_record(KIND, base, "no-data", (why,))
    verdict = judge(run, bounds.floor, bounds.ceilings, params.testcases, unit.pool.gpus_per_node)
    errors = list(verdict.problems)
    for cell in verdict.cells:
        if cell.outcome == "failed":
            errors.append(
                f"{cell.testcase} {cell.where}: {cell.value:g} GB/s, under the floor"
                f" {cell.floor:g} GB/s"
            )
        elif cell.outcome == "impossible":
            errors.append(
                f"{cell.testcase} {cell.where}: {cell.value:g} GB/s, above the ceiling"
                f" {cell.ceiling:g} GB/s: no evidence"
            )
    errors = capped(errors)  # a node's record names at most 64 failed GPUs and pairs
    status = "truncated" if run.truncated else ("ok" if verdict.passed else "failed")
    versions = (run.version,) if run.version else ()
    return kind_record(KIND, {**base, "versions": versions}, status, tuple(errors))


class NvbandwidthLogs:
    """The nvbandwidth kind's log reader (`results/kindlogs.py`'s `LogReader`)."""

    def read(
        self, text: str, base: Mapping[str, Any], unit: TestUnit, *, names_itself: bool, offset: int
    ) -> KindRead:
        """The record of one nvbandwidth log of `unit` (`read_nvbandwidth`)."""
        return KindRead(
            read_nvbandwidth(text, base, unit, names_itself=names_itself, offset=offset)
        )


READER = NvbandwidthLogs()
