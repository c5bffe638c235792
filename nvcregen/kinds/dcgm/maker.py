"""The dcgm kind's log: its script's begin line, `dcgmi diag --json`, its exit line (pure)."""

from __future__ import annotations

from nvcregen.kinds.dcgm.kind import KIND as DCGM
from nvcregen.kinds.dcgm.kind import MARK
from nvcregen.plan.model import TestUnit
from nvcregen.rehearse.dcgmdiagprint import dcgm_version, diag_json
from nvcregen.rehearse.printer import FAILED_RC, Maker, Output, Printer, Section, stamp


def dcgm_output(printer: Printer, unit: TestUnit, at: Section) -> Output:
    """DCGM's script on one node: its begin line, `dcgmi diag --json`, its exit line.

    A failing node fails the level's last test on GPU 0 and exits 1.
    """
    level = int(DCGM.block(unit.test).level)
    rc = FAILED_RC if at.failing else 0
    body = diag_json(level, unit.pool.gpus_per_node, dcgm_version(unit.image), at.failing)
    text = (
        f"{MARK} begin node={at.pack.nodes[0]} pod={at.pack.pod}"
        f" start={stamp(at.start)}\n{body}"
        f"nvcregen: dcgmi diag --run {level} exit={rc} seconds={at.seconds}\n"
    )
    return Output(text, rc, at.seconds, exit_line=False)


MAKER: Maker = dcgm_output  # what `rehearse/makers/registry.py` finds by the kind's name
