"""Link counter snapshots: the log the link-counters script prints, read (pure, bounded).

The script (`templates/link-counters.sh.j2`, docs/design/0023-link-counters.md)
prints, after its `@@nvcregen-linkctr begin node=... pod=... start=...` line:

```
@@linkctr snapshot before epoch=1765000000
@@linkctr port mlx5_0 1 layer=InfiniBand state=4
ctr mlx5_0 1 counters symbol_error 0
ctr mlx5_0 1 hw_counters np_cnp_sent 1333
ctr mlx5_0 1 ethtool rx_prio3_pause 0
@@linkctr snapshot end before
@@linkctr traffic mlx5_0 rc=0 server_rc=0
@@linkctr snapshot after epoch=1765000075
...
@@linkctr snapshot end after
@@nvcregen-linkctr end rc=0
```

Each port's counters of the two snapshots become deltas over the interval between their
epochs (`port_deltas`). Counters are unsigned and only grow while the port is up: one
that went backwards was reset or wrapped, and one at its width's largest value (IB
PortCounters saturate: `link_downed` at 255, `symbol_error` at 65535) may have stopped
counting. Neither gives a delta: each is a problem (NVC760), never a negative or a zero
growth. A port, or a counter, the before-snapshot has and the after-snapshot lacks, or
an after-snapshot that never ended, is no evidence (NVC761), never a pass.

Every line is read up to `limits.MAX_LINE`; a snapshot over `MAX_PORTS` ports, traffic
lines of more HCAs, or a port over `MAX_COUNTERS` counters is refused (NVC763), as is a
text with no snapshot at all (not this output: `IngestFormatError`).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Any

from nvcregen.ingest.limits import InputLimitError, matched
from nvcregen.ingest.lines import logical_lines
from nvcregen.ingest.models import IngestFormatError
from nvcregen.kinds.linkcounters import codes

MAX_PORTS = 256  # ports of one snapshot: 8 dual-port HCAs is 16
MAX_COUNTERS = 512  # counters of one port: mlx5 shows about 60 with hw_counters
MAX_VALUE = 2**64 - 1
MARK = "@@nvcregen-linkctr"  # the script's begin line (`ingest/beginline.py`'s form)
WRAPPED = codes.NVC760.code
NO_EVIDENCE = codes.NVC761.code
OVER_BOUNDS = codes.NVC763.code
# The IB PortCounters attribute's widths (IBTA vol. 1, 16.1.3.5): the value a counter
# stops at. The extended data and packet counters are 64 bits wide.
WIDTHS = {
    "symbol_error": 16,
    "link_error_recovery": 8,
    "link_downed": 8,
    "port_rcv_errors": 16,
    "port_rcv_remote_physical_errors": 16,
    "port_rcv_switch_relay_errors": 16,
    "port_xmit_discards": 16,
    "port_xmit_constraint_errors": 8,
    "port_rcv_constraint_errors": 8,
    "local_link_integrity_errors": 4,
    "excessive_buffer_overrun_errors": 4,
    "VL15_dropped": 16,
    "port_xmit_wait": 32,
}
_HCA = r"[A-Za-z0-9_.:-]{1,64}"
_NAME = r"[A-Za-z0-9_][A-Za-z0-9_.,-]{0,63}"
_SNAPSHOT = re.compile(r"^@@linkctr snapshot (before|after) epoch=(\d{1,12})$")
_SNAPSHOT_END = re.compile(r"^@@linkctr snapshot end (before|after)$")
_PORT = re.compile(rf"^@@linkctr port ({_HCA}) (\d{{1,3}}) layer=(\w{{0,32}}) state=(\d{{0,2}})$")
_COUNTER = re.compile(rf"^ctr ({_HCA}) (\d{{1,3}}) (counters|hw_counters|ethtool) ({_NAME}) (.*)$")
_TRAFFIC = re.compile(rf"^@@linkctr traffic ({_HCA}) rc=(\d{{1,3}}) server_rc=(\d{{1,3}})$")
_END = re.compile(r"^@@nvcregen-linkctr end rc=(\d{1,3})$")
_VALUE = re.compile(r"^\d{1,20}$")

PortKey = tuple[str, int]  # (HCA, port)
CounterKey = tuple[str, str]  # (group, name)


@dataclass
class PortSnapshot:
    """One port in one snapshot: its link layer, state, and counters (None: unreadable)."""

    layer: str = ""
    state: str = ""
    counters: dict[CounterKey, int | None] = field(default_factory=dict)


@dataclass
class Snapshot:
    """Every port the script read at one time (seconds since the epoch)."""

    phase: str
    epoch: int
    line: int
    ports: dict[PortKey, PortSnapshot] = field(default_factory=dict)
    ended: bool = False


@dataclass(frozen=True)
class CounterDelta:
    """One counter's growth over the interval, or why it has none (`problem`)."""

    group: str
    name: str
    before: int | None
    after: int | None
    delta: int | None
    per_hour: float | None
    problem: str = ""


@dataclass(frozen=True)
class PortDeltas:
    """One port's counters between the snapshots."""

    hca: str
    port: int
    layer: str
    seconds: int
    counters: tuple[CounterDelta, ...]
    problems: tuple[str, ...] = ()

    def counter(self, group: str, name: str) -> CounterDelta | None:
        """The counter of that group and name, if both snapshots read it."""
        return next((c for c in self.counters if (c.group, c.name) == (group, name)), None)


@dataclass(frozen=True)
class LinkCounterRun:
    """What one link-counters log held."""

    file: str
    before: Snapshot | None
    after: Snapshot | None
    traffic: dict[str, tuple[int, int]]  # HCA -> (client rc, server rc)
    rc: int | None  # the script's end line; None: it never ended
    problems: tuple[str, ...]

    @property
    def seconds(self) -> int | None:
        """The measured interval: between the snapshots' epochs, when both were taken."""
        if self.before is None or self.after is None:
            return None
        return self.after.epoch - self.before.epoch

    def deltas(self) -> list[PortDeltas]:
        """Each port of the before-snapshot, with its counters' growth (worked out once)."""
        return list(self._deltas)

    @functools.cached_property
    def _deltas(self) -> tuple[PortDeltas, ...]:
        return tuple(port_deltas(self))

    def to_json(self) -> dict[str, Any]:
        """The run's ports and deltas, for `ingest --format json`."""
        return {
            "file": self.file,
            "seconds": self.seconds,
            "rc": self.rc,
            "problems": list(self.problems),
            "traffic": {h: {"rc": c, "serverRc": s} for h, (c, s) in self.traffic.items()},
            "ports": [
                {
                    "hca": p.hca,
                    "port": p.port,
                    "layer": p.layer,
                    "problems": list(p.problems),
                    "counters": [
                        {
                            "group": c.group,
                            "name": c.name,
                            "before": c.before,
                            "after": c.after,
                            "delta": c.delta,
                            "perHour": c.per_hour,
                            **({"problem": c.problem} if c.problem else {}),
                        }
                        for c in p.counters
                    ],
                }
                for p in self.deltas()
            ],
        }


def parse_link_counters(text: str, name: str) -> list[LinkCounterRun]:
    """The run a link-counters log holds (a list, as every `ingest` reader returns).

    Raises:
        IngestFormatError: No snapshot line: not this output.
        InputLimitError: A snapshot or a port over its bounds (NVC763).

    """
    snaps: dict[str, Snapshot] = {}
    traffic: dict[str, tuple[int, int]] = {}
    problems: list[str] = []
    rc: int | None = None
    current: Snapshot | None = None
    for number, raw in enumerate(logical_lines(text), start=1):
        line = matched(raw)
        if (begin := _SNAPSHOT.match(line)) is not None:
            phase = begin.group(1)
            if phase in snaps:
                problems.append(f"{name}:{number}: a second {phase} snapshot, not read")
                current = None
                continue
            current = snaps[phase] = Snapshot(phase, int(begin.group(2)), number)
        elif (end := _SNAPSHOT_END.match(line)) is not None:
            if current is not None and current.phase == end.group(1):
                current.ended = True
            current = None
        elif current is not None and (port := _PORT.match(line)) is not None:
            _port(current, (port.group(1), int(port.group(2))), number).layer = port.group(3)
            current.ports[(port.group(1), int(port.group(2)))].state = port.group(4)
        elif current is not None and (ctr := _COUNTER.match(line)) is not None:
            found = _port(current, (ctr.group(1), int(ctr.group(2))), number)
            if len(found.counters) >= MAX_COUNTERS:
                raise InputLimitError(
                    OVER_BOUNDS, f"{name}:{number}: a port with over {MAX_COUNTERS} counters"
                )
            found.counters[(ctr.group(3), ctr.group(4))] = _value(ctr.group(5))
        elif (moved := _TRAFFIC.match(line)) is not None:
            if moved.group(1) not in traffic and len(traffic) >= MAX_PORTS:
                raise InputLimitError(
                    OVER_BOUNDS, f"{name}:{number}: traffic of over {MAX_PORTS} HCAs", number
                )
            traffic[moved.group(1)] = (int(moved.group(2)), int(moved.group(3)))
        elif (done := _END.match(line)) is not None:
            rc = int(done.group(1))
    if not snaps:
        raise IngestFormatError(f"{name}: no `@@linkctr snapshot` line: not link counter output")
    return [
        LinkCounterRun(name, snaps.get("before"), snaps.get("after"), traffic, rc, tuple(problems))
    ]


def _port(snap: Snapshot, key: PortKey, number: int) -> PortSnapshot:
    found = snap.ports.get(key)
    if found is None:
        if len(snap.ports) >= MAX_PORTS:
            raise InputLimitError(
                OVER_BOUNDS, f"line {number}: a snapshot of over {MAX_PORTS} ports", number
            )
        found = snap.ports[key] = PortSnapshot()
    return found


def _value(text: str) -> int | None:
    """A counter's value; None for what is no count (`N/A (no PMA)`, empty, too large)."""
    if _VALUE.match(text) is None:
        return None
    value = int(text)
    return value if value <= MAX_VALUE else None


def saturated(name: str, value: int) -> bool:
    """Whether a counter of a known width stands at its largest value (it stopped)."""
    width = WIDTHS.get(name)
    return width is not None and value >= 2**width - 1


def port_deltas(run: LinkCounterRun) -> list[PortDeltas]:
    """Each port of the before-snapshot: its counters' growth, rate, and problems."""
    before, after = run.before, run.after
    if before is None:
        return []
    seconds = run.seconds or 0
    found: list[PortDeltas] = []
    for (hca, port), was in sorted(before.ports.items()):
        where = f"{hca} port {port}"
        now = after.ports.get((hca, port)) if after is not None else None
        if after is None or not after.ended or now is None:
            why = "no after-snapshot" if after is None or not after.ended else "absent after"
            problem = f"{NO_EVIDENCE}: {where}: {why}: its counters measured nothing"
            found.append(PortDeltas(hca, port, was.layer, seconds, (), (problem,)))
            continue
        problems: list[str] = []
        if seconds <= 0:
            problems.append(f"{WRAPPED}: {where}: the after-snapshot is not later ({seconds} s)")
        counters = [
            _delta(where, key, value, now.counters, seconds)
            for key, value in sorted(was.counters.items())
        ]
        # The PortCounters attribute is cleared as a whole (`perfquery -R`, a driver
        # reload): one of its counters going back means every other one may have too.
        back = [c.name for c in counters if c.group == "counters" and " went from " in c.problem]
        if back:
            problems.append(
                f"{WRAPPED}: {where}: counters/{back[0]} went backwards: the port's counters were"
                " reset during the interval, so none of their growth is known"
            )
        found.append(PortDeltas(hca, port, was.layer, seconds, tuple(counters), tuple(problems)))
    return found


def _delta(
    where: str,
    key: CounterKey,
    was: int | None,
    counters: dict[CounterKey, int | None],
    seconds: int,
) -> CounterDelta:
    group, name = key
    if key not in counters:
        why = f"{NO_EVIDENCE}: {where}: {group}/{name} absent from the after-snapshot"
        return CounterDelta(group, name, was, None, None, None, why)
    now = counters[key]
    if was is None or now is None:
        return CounterDelta(group, name, was, now, None, None, "")  # no count to compare
    if now < was:
        why = (
            f"{WRAPPED}: {where}: {group}/{name} went from {was} to {now}: reset or wrapped,"
            " so its growth is unknown"
        )
        return CounterDelta(group, name, was, now, None, None, why)
    delta = now - was
    rate = delta * 3600 / seconds if seconds > 0 else None
    if group == "counters" and saturated(name, now):
        why = (
            f"{WRAPPED}: {where}: {group}/{name} stands at {now}, its largest value: it stopped"
            f" counting, so its growth (at least {delta}) is unknown"
        )
        return CounterDelta(group, name, was, now, delta, rate, why)
    return CounterDelta(group, name, was, now, delta, rate)
