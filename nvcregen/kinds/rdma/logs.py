"""An RDMA rails log judged rail by rail: each HCA of the node against its floor (pure).

The script (`templates/rdma-rails.sh.j2`) prints each HCA's client output between
`@@nvcregen-rdma rail begin hca=...` and `rail end hca=... rc=N server_rc=N`. Each section
is read with `reader.py`; at the test's message size its average must reach the
floor (`rdma.floor` of the pool's `nics.speed`, NVC832) and may not pass the line rate
(NVC830: not evidence, never a pass). A rail that printed no section, no row at that
size, failed or exited non-zero fails too. Every error names the node and the HCA, so
the run's failed-node entry does (`logruns._failed_nodes`), and `retest` pairs that node.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from nvcregen.core import units
from nvcregen.fabric.railnames import cabled
from nvcregen.ingest.limits import InputLimitError, matched
from nvcregen.ingest.lines import logical_lines
from nvcregen.ingest.models import IngestFormatError
from nvcregen.kinds.rdma import codes
from nvcregen.kinds.rdma.kind import KIND as RDMA
from nvcregen.kinds.rdma.params import RdmaParams
from nvcregen.kinds.rdma.reader import MARK, PerftestRun, parse_perftest
from nvcregen.plan.model import TestUnit
from nvcregen.results.kindlogs import KindRead
from nvcregen.results.logrecords import LogRecord
from nvcregen.results.nodebind import FOREIGN, bind_node_log

ABOVE_LINE_RATE = codes.NVC830.code
BELOW_FLOOR = codes.NVC832.code
_BEGIN = re.compile(r"@@nvcregen-rdma rail begin hca=([A-Za-z0-9_.:-]{1,64})")
_END = re.compile(r"@@nvcregen-rdma rail end hca=([A-Za-z0-9_.:-]{1,64}) rc=(\d{1,3})")


def read_rails(
    text: str,
    base: Mapping[str, Any],
    unit: TestUnit,
    *,
    names_itself: bool = False,
    offset: int = 0,
) -> dict[str, Any]:
    """A LogRecord's fields for one node's rails log: `ok` only when every rail passed.

    The log is bound to its node by its begin line as a DCGM log is (`nodebind.py`):
    another node's log, or none where the run's Job prints one, is foreign evidence
    (NVC730); `hosts` is the node the log names, never the plan's guess.
    """
    bound = bind_node_log(text, base, names_itself=names_itself, offset=offset, mark=MARK)
    if isinstance(bound, str):
        return {**base, "kind": "rdma", "status": FOREIGN, "errors": (bound,)}
    sections, problems = sections_of(text)
    rdma: RdmaParams | None = RDMA.block_or_none(unit.test)
    nics = unit.pool.spec.nics
    if rdma is None or nics is None:
        return {**base, "kind": "rdma", "status": "no-data", "errors": ("no RDMA NICs",)}
    node = ",".join(base.get("nodes") or ()) or "?"
    size = units.parse_size(rdma.message_size)
    line_rate = units.parse_bandwidth(nics.speed).gbytes_per_s * 8  # Gb/s
    floor = rdma.floor * line_rate
    errors = list(problems)
    for hca in nics.hcas:
        found = sections.get(hca)
        port = cabled(unit.pool.inventory, node, hca)  # the switch port, when known
        if found is None:
            errors.append(f"{node} {hca}{port}: no rail measured (the log has no section of it)")
            continue
        lines, rc = found
        bounds = (floor, line_rate, rdma.floor)
        errors += judge_rail(node, hca, "\n".join(lines), rc, size, bounds, port=port)
    truncated = any(hca in sections and sections[hca][1] is None for hca in nics.hcas)
    status = "failed" if errors else ("truncated" if truncated else "ok")
    return {**base, "kind": "rdma", "status": status, "errors": tuple(errors), "hosts": bound}


def sections_of(text: str) -> tuple[dict[str, tuple[list[str], int | None]], list[str]]:
    """Each HCA's lines and exit code (None: the section never ended), and problems."""
    found: dict[str, tuple[list[str], int | None]] = {}
    problems: list[str] = []
    current: str | None = None
    for number, raw in enumerate(logical_lines(text), start=1):
        line = matched(raw)
        if (begin := _BEGIN.search(line)) is not None:
            current = begin.group(1)
            if current in found:
                problems.append(f"line {number}: a second section of {current}, not read")
                current = None
                continue
            found[current] = ([line], None)
        elif current is not None and (end := _END.search(line)) is not None:
            if end.group(1) == current:
                found[current] = (found[current][0], int(end.group(2)))
                current = None
        elif current is not None:
            found[current][0].append(line)
    return found, problems


def judge_rail(
    node: str,
    hca: str,
    text: str,
    rc: int | None,
    size: int,
    bounds: tuple[float, float, float],
    *,
    port: str = "",
) -> list[str]:
    """One rail's client section against the floor and the line rate: its errors, if any.

    `node` names where it ran (a node, or a pair's client and server); `port` the switch
    port(s) of the rail where the inventory knows them (` (leaf-07 Ethernet1/12)`).
    """
    where = f"{node} {hca}{port}"
    try:
        runs = parse_perftest(text, where)
    except InputLimitError as exc:
        return [f"{where}: {exc.code}: {exc}"]
    except IngestFormatError:
        return [f"{where}: no perftest output" + (f" (exit {rc})" if rc else "")]
    run: PerftestRun = runs[0]  # the client's: a failed server's lines are prefixed
    if run.status == "failed" or rc:
        why = "; ".join(run.errors) or f"exit {rc}"
        return [f"{where}: failed: {why}"]
    row = run.at(size)
    if row is None:  # a section that never ended is the run's truncation, not a failure
        return [] if rc is None else [f"{where}: no row at {units.format_size(size)}"]
    return _bounded(where, row.average_gbps, size, bounds)


def _bounded(where: str, gbps: float, size: int, bounds: tuple[float, float, float]) -> list[str]:
    """A rail's average against its NIC's line rate (NVC830) and its floor (NVC832)."""
    floor, line_rate, share = bounds
    shown = f"{gbps:.2f} Gb/s at {units.format_size(size)}"
    if gbps > line_rate:
        return [f"{ABOVE_LINE_RATE}: {where}: {shown} is above the NIC's line rate "
                f"{line_rate:g} Gb/s: not evidence"]  # fmt: skip
    if gbps < floor:
        return [f"{BELOW_FLOOR}: {where}: {shown}, below the floor {floor:g} Gb/s "
                f"({share:g} of {line_rate:g} Gb/s)"]  # fmt: skip
    return []


class RailLogs:
    """The RDMA rails kind's log reader (`results/kindlogs.py`'s `LogReader`)."""

    def read(
        self, text: str, base: Mapping[str, Any], unit: TestUnit, *, names_itself: bool, offset: int
    ) -> KindRead:
        """The record of one node's rails log (`read_rails`), judged HCA by HCA."""
        fields = read_rails(text, base, unit, names_itself=names_itself, offset=offset)
        return KindRead(LogRecord.model_validate(fields))


READER = RailLogs()
