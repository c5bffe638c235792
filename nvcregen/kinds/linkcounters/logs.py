"""A link counters log judged port by port: each HCA port's growth against its limits (pure).

The script (`templates/link-counters.sh.j2`) snapshots every port of the pool's
HCAs before and after traffic on each; `reader.py` makes the deltas. Here each
port of each HCA of the pool's `nics.hcas` is held to the catalog's limits
(`linkcounters.limits`): a counter that grew past its limit fails the port (NVC762); a
counter reset, wrapped or saturated (NVC760) is no evidence and fails it too, unless what
it grew already breaks the limit; a port the after-snapshot lacks (NVC761) is no evidence
(the run is incomplete, never a pass). A limit on a `counters/` file the port did not
show is no evidence either; one on `hw_counters/` or ethtool (driver-dependent) is named
as not applied. Counters the catalog reports without a limit (RoCE PFC pause, ECN and
CNP) are shown with their growth and rate per hour, one line a port, and judge nothing.
Snapshots further apart than the run's timeout are no one run's (NVC764): a log whose
after-epoch was moved years on would otherwise dilute every rate to a pass.

Every message names node, HCA and port, and the node's leaf where the site's inventory
places it, so the run's failed-node entry does (`logruns._failed_nodes`, reason
`LinkCountersFailed`) and `retest`/`drill` can target the node.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nvcregen.fabric.inventory import Inventory, SwitchPort
from nvcregen.fabric.railnames import switch_port
from nvcregen.ingest.limits import InputLimitError
from nvcregen.ingest.models import IngestFormatError
from nvcregen.kinds.linkcounters import codes
from nvcregen.kinds.linkcounters.kind import KIND as LINKCOUNTERS
from nvcregen.kinds.linkcounters.params import CounterLimit, LinkCountersParams
from nvcregen.kinds.linkcounters.reader import (
    MARK,
    NO_EVIDENCE,
    CounterDelta,
    LinkCounterRun,
    PortDeltas,
    parse_link_counters,
)
from nvcregen.plan.model import TestUnit
from nvcregen.results.kindlogs import KindRead
from nvcregen.results.logrecords import LogRecord
from nvcregen.results.nodebind import FOREIGN, bind_node_log
from nvcregen.results.runnotes import PortNote

OVER_LIMIT = codes.NVC762.code
TOO_LONG = codes.NVC764.code
KIND = "linkcounters"


def read_link_counter_log(
    text: str,
    base: Mapping[str, Any],
    unit: TestUnit,
    *,
    names_itself: bool = False,
    offset: int = 0,
) -> dict[str, Any]:
    """A LogRecord's fields for one node's link counters log: `ok` only when every port passed.

    Bound to its node by its begin line as a DCGM log is (NVC730 for another node's).
    """
    bound = bind_node_log(text, base, names_itself=names_itself, offset=offset, mark=MARK)
    if isinstance(bound, str):
        return {**base, "kind": KIND, "status": FOREIGN, "errors": (bound,)}
    block: LinkCountersParams | None = LINKCOUNTERS.block_or_none(unit.test)
    nics = unit.pool.spec.nics
    if block is None or nics is None or not nics.hcas:
        return {**base, "kind": KIND, "status": "no-data", "errors": ("no RDMA NICs",)}
    try:
        run = parse_link_counters(text, str(base.get("path") or "log"))[0]
    except InputLimitError as exc:
        return {**base, "kind": KIND, "status": "failed", "errors": (f"{exc.code}: {exc}",)}
    except IngestFormatError as exc:
        return {**base, "kind": KIND, "status": "no-data", "errors": (str(exc),)}
    nodes = tuple(base.get("nodes") or ())
    node = ",".join(bound or nodes) or "?"
    placement = unit.pool.placement
    leaf = placement.leaf.get(node) if placement is not None else None
    errors, incomplete, figures, notes = judge_run(
        run, block, tuple(nics.hcas), node, leaf, unit.pool.inventory
    )
    longest = unit.timeout_ms // 1000  # the script runs inside its run's timeout
    if run.seconds is not None and run.seconds > longest:
        errors.insert(0, (
            f"{TOO_LONG}: {node}: the snapshots are {run.seconds} s apart, longer than the"
            f" run's timeout ({longest} s): not one run's interval, so no rate is evidence"
        ))  # fmt: skip
    status = "failed" if errors else ("truncated" if incomplete else "ok")
    return {
        **base,
        "kind": KIND,
        "status": status,
        "errors": tuple(errors + incomplete),
        "warnings": tuple(figures),
        "hosts": bound,
        "notes": tuple(notes),  # not the record's: the run says each once (`runnotes.py`)
    }


def judge_run(
    run: LinkCounterRun,
    block: LinkCountersParams,
    hcas: tuple[str, ...],
    node: str,
    leaf: str | None,
    inventory: Inventory | None = None,
) -> tuple[list[str], list[str], list[str], list[PortNote]]:
    """Failures, what leaves the run incomplete (NVC761), the figures shown, and the notes.

    Each HCA's messages name its switch port where the inventory's cabling map knows it.
    A note (a limit a port's driver does not show) is the same on every such port: the
    run says it once (`runnotes.fold_notes`), not each port and node.
    """
    at = f" (leaf {leaf})" if leaf else ""
    errors = [f"{node}{at}: {p}" for p in run.problems]
    incomplete: list[str] = []
    figures: list[str] = []
    notes: list[PortNote] = []
    if run.before is None:
        incomplete.append(f"{NO_EVIDENCE}: {node}{at}: no before-snapshot: nothing was measured")
        return errors, incomplete, figures, notes
    ports = run.deltas()
    for hca in hcas:
        mine = [p for p in ports if p.hca == hca]
        cable = _cable(leaf, switch_port(inventory, node, hca))
        named = f"{node} {hca}{cable}" if cable else f"{node}{at} {hca}"
        if not mine:
            errors.append(f"{named}: no port of it in the snapshots: not measured")
            continue
        client, server = run.traffic.get(hca, (None, None))
        if run.after is not None and run.after.ended and (client != 0 or server != 0):
            why = "no traffic line" if client is None else f"rc={client} server_rc={server}"
            errors.append(f"{named}: its traffic failed ({why}): no load crossed it")
        for port in mine:
            where = f"{node} {hca} port {port.port}{cable or at}"
            problems = [_named(p, port, where) for p in port.problems]
            if any(p.startswith(NO_EVIDENCE) for p in problems):
                incomplete += problems
                continue
            errors += problems
            for limit in block.limits:
                for found in _judged(where, port, limit, notes, node):
                    # a limit that could not be applied is no evidence, never a failure
                    (incomplete if found.startswith(NO_EVIDENCE) else errors).append(found)
            if shown := _reported(port, block):
                figures.append(f"{where}: over {port.seconds} s: {shown}")
    return errors, incomplete, figures, notes


def _cable(leaf: str | None, end: SwitchPort | None) -> str:
    """` (leaf leaf-07, switch port leaf-07 Ethernet1/12)` for an HCA the cabling map names.

    Nothing for one it does not: the node's leaf alone is named then, as before.
    """
    if end is None:
        return ""
    return f" ({f'leaf {leaf}, ' if leaf else ''}switch port {end})"


def _judged(
    where: str, port: PortDeltas, limit: CounterLimit, notes: list[PortNote], node: str
) -> list[str]:
    """One limit on one port: the errors it gives (a note when a driver counter is absent)."""
    name = f"{limit.group}/{limit.counter}"
    found = port.counter(limit.group, limit.counter)
    if found is None or (found.delta is None and not found.problem):
        if limit.group != "counters":  # hw_counters and ethtool names differ by driver
            text = f"{name} not shown by the port's driver: its limit is not applied"
            notes.append(PortNote(node, f"{port.hca} port {port.port}", text))
            return []
        return [f"{NO_EVIDENCE}: {where}: {name} not read: its limit cannot be applied"]
    over = _over(found, limit)
    if over is not None:
        return [f"{OVER_LIMIT}: {where}: {name} {over}"]
    return [_named(found.problem, port, where)] if found.problem else []


def _named(problem: str, port: PortDeltas, where: str) -> str:
    """A reader's problem about a port (`mlx5_0 port 1: ...`), naming its node and leaf."""
    return problem.replace(f" {port.hca} port {port.port}:", f" {where}:", 1)


def _over(found: CounterDelta, limit: CounterLimit) -> str | None:
    """How a counter's growth breaks its limit, or None (its growth may be a lower bound)."""
    if found.delta is None:
        return None
    if limit.max_delta is not None and found.delta > limit.max_delta:
        return f"grew by {found.delta}, more than {limit.max_delta}"
    rate = found.per_hour
    if limit.max_per_hour is not None and rate is not None and rate > limit.max_per_hour:
        return (
            f"grew by {found.delta} ({rate:.1f} an hour), more than {limit.max_per_hour:g} an hour"
        )
    return None


def _reported(port: PortDeltas, block: LinkCountersParams) -> str:
    """The reported counters of a port, each with its growth and rate: one line."""
    limited = {(limit.group, limit.counter) for limit in block.limits}
    shown = []
    for c in port.counters:
        if (c.group, c.name) in limited or not any(
            r.matches(c.group, c.name) for r in block.reported
        ):
            continue
        if c.delta is None:
            shown.append(f"{c.name} {c.problem.split(': ')[0] if c.problem else 'unreadable'}")
        else:
            rate = f"{c.per_hour:.1f}/h" if c.per_hour is not None else "no rate"
            shown.append(f"{c.name} +{c.delta} ({rate})")
    return ", ".join(shown)


class LinkCounterLogs:
    """The link counters kind's log reader (`results/kindlogs.py`'s `LogReader`)."""

    def read(
        self, text: str, base: Mapping[str, Any], unit: TestUnit, *, names_itself: bool, offset: int
    ) -> KindRead:
        """The record of one node's log (`read_link_counter_log`) and its ports' notes."""
        fields = read_link_counter_log(text, base, unit, names_itself=names_itself, offset=offset)
        notes = tuple(fields.pop("notes", ()))
        return KindRead(LogRecord.model_validate(fields), notes)


READER = LinkCounterLogs()
