"""The linkcounters kind's log: every HCA port's counters around loopback traffic (pure).

What `templates/link-counters.sh.j2` prints on a node, read back by `collect`
with `logs.py` (`reader.py`): the begin line naming
node, pod and start; the before-snapshot of port 1 of each HCA of the pool's
`nics.hcas` (its link layer, state 4, ACTIVE); a traffic line per HCA; the
after-snapshot; the end line. Each port shows what an mlx5 port shows, in the order the
script's globs list them (the C locale's): `counters/`, the IB PortCounters and
extended counters (the files of gpud's ConnectX-7 sample,
tests/fixtures/captures/linkcounters/); `hw_counters/`, mlx5's, with the RoCE congestion
and retransmission ones only on a RoCE port; and only on a RoCE port (an IB port's netdev
is IPoIB, whose statistics the script's filter drops), `ethtool -S`'s per-priority
bytes and packets and the pause frames of priority 3, the one PFC is on, as the script's
awk keeps them.

Every counter counts since the node booted: the data and packet counters and the
congestion notifications grow at a steady rate (each port its own, by a hash of node and
HCA), and by the loopback's bytes (`LOOPBACK_SHARE` of the NIC's line rate for
`trafficDuration`) for the data and packet counters and the write requests it serves,
earlier rounds' traffic included. The physical port's ethtool counters never see a
loopback. A healthy port's error counters do not move, so every limit passes. A failing
node's first HCA drops its link once during each run's traffic: `link_downed` and
`link_error_recovery` grow by 1, `symbol_error` by ten times what its limit allows over
the interval (at least one more); the traffic survives (its RC retries) and the script
exits 0, as it would: collect fails the port (NVC762) naming node, HCA and port. A later
round's before-snapshot holds the earlier rounds' errors, each counter held at its IB
width's largest value. The snapshots' epochs are the section's start plus the script's
own time (75 s apart for 8 HCAs and 60 s of traffic), so no two rounds of a node print
the same counters (NVC741).
"""

from __future__ import annotations

import math
import zlib
from dataclasses import dataclass
from datetime import UTC, datetime

from nvcregen.core import units
from nvcregen.kinds.linkcounters.kind import KIND as LINKCOUNTERS
from nvcregen.kinds.linkcounters.params import LinkCountersParams
from nvcregen.kinds.linkcounters.reader import MARK, WIDTHS
from nvcregen.plan.model import TestUnit
from nvcregen.rehearse.printer import Maker, Output, Printer, Section, stamp

SNAP = "@@linkctr"
PORT = 1  # a ConnectX device is one port a PCI function
ACTIVE = 4  # `state`: `4: ACTIVE`, the script keeps the number
LOOPBACK_SHARE = 0.9  # a loopback's write bandwidth, of the NIC's line rate
MESSAGE = 65536  # ib_write_bw's message size when no -s is given
MTU = 4096  # bytes of payload a packet
BEFORE_S = 5  # the before-snapshot's read (its epoch is taken as it starts), ethtool's included
SETUP_S = 1  # each HCA's perftest server started and listening, its client connected
TAIL_S = 2  # the clients and servers reaped after their -D seconds
BOOTED = int(datetime(2026, 1, 1, tzinfo=UTC).timestamp())  # the ports count from then on
PFC_PRIORITY = 3  # RoCE's lossless priority, the one PFC pauses
FAILING_TIMES = 10  # a failing port's symbol errors: ten times what its limit allows

# counters/ as an mlx5 port shows it (gpud's ConnectX-7 sample), and hw_counters/
COUNTERS = (
    "VL15_dropped", "excessive_buffer_overrun_errors", "link_downed", "link_error_recovery",
    "local_link_integrity_errors", "multicast_rcv_packets", "multicast_xmit_packets",
    "port_rcv_constraint_errors", "port_rcv_data", "port_rcv_errors", "port_rcv_packets",
    "port_rcv_remote_physical_errors", "port_rcv_switch_relay_errors",
    "port_xmit_constraint_errors", "port_xmit_data", "port_xmit_discards", "port_xmit_packets",
    "port_xmit_wait", "symbol_error", "unicast_rcv_packets", "unicast_xmit_packets",
)  # fmt: skip
HW_COUNTERS = (
    "duplicate_request", "implied_nak_seq_err", "lifespan", "local_ack_timeout_err",
    "out_of_buffer", "out_of_sequence", "packet_seq_err", "req_cqe_error",
    "req_cqe_flush_error", "req_remote_access_errors", "req_remote_invalid_request",
    "resp_cqe_error", "resp_cqe_flush_error", "resp_local_length_error",
    "resp_remote_access_errors", "rnr_nak_retry_err", "rx_atomic_requests", "rx_read_requests",
    "rx_write_requests",
)  # fmt: skip
HW_ROCE = (
    "np_cnp_sent", "np_ecn_marked_roce_packets", "roce_adp_retrans", "roce_adp_retrans_to",
    "roce_slow_restart", "roce_slow_restart_cnps", "roce_slow_restart_trans", "rp_cnp_handled",
    "rp_cnp_ignored", "rx_icrc_encapsulated",
)  # fmt: skip
LIFESPAN_MS = 12  # hw_counters/lifespan: how long the driver caches them (byteps' sample)
DATA = ("port_rcv_data", "port_xmit_data")  # 4-octet words (IBTA PortCountersExtended)
PACKETS = ("port_rcv_packets", "port_xmit_packets", "unicast_rcv_packets", "unicast_xmit_packets")
NOTIFIED = ("np_cnp_sent", "np_ecn_marked_roce_packets", "rp_cnp_handled")  # ambient congestion
BOOT_ERRORS = ("link_downed", "link_error_recovery", "symbol_error", "port_rcv_switch_relay_errors")


@dataclass(frozen=True)
class _Port:
    """What one port's counters are made from: its hash, the loopback's bytes, its link."""

    hca: str
    seed: int
    rates: tuple[int, int]  # bytes a second of ambient traffic sent and received
    loopback: int  # bytes of one run's loopback
    runs_before: int  # earlier rounds' loopbacks, counted since boot
    roce: bool

    def at(self, epoch: int, ran: bool) -> dict[tuple[str, str], int]:
        """Every counter at `epoch`, this run's loopback done (`ran`) or not."""
        uptime = max(0, epoch - BOOTED)
        looped = self.loopback * (self.runs_before + ran)  # sent to itself: both ways
        moved = [rate * uptime + looped for rate in self.rates]  # sent, received
        words, packets = [m // 4 for m in moved], [m // MTU for m in moved]
        values: dict[tuple[str, str], int] = {}
        for name in COUNTERS:
            value = 0
            if name in DATA:
                value = words[name.startswith("port_rcv")] + self.seed % 4096
            elif name in PACKETS:
                value = packets[name.endswith("rcv_packets")] + self.seed % 512
            elif name == "port_xmit_wait":  # 32 bits: ticks waited, a few a minute
                value = self.seed % 100_000 + uptime // 20
            elif name in BOOT_ERRORS:  # the boot's link training, then nothing
                value = (self.seed >> BOOT_ERRORS.index(name)) % 3
            values["counters", name] = value
        requests = self.loopback * (self.runs_before + ran) // MESSAGE
        for name in sorted((*HW_COUNTERS, *(HW_ROCE if self.roce else ()))):
            value = 0
            if name == "lifespan":
                value = LIFESPAN_MS
            elif name == "rx_write_requests":
                value = requests
            elif name in NOTIFIED:  # one or two a minute
                shift = NOTIFIED.index(name) * 5
                value = (self.seed >> shift) % 2000 + uptime // (30 + (self.seed >> shift) % 31)
            elif name == "rp_cnp_ignored":
                value = self.seed % 7
            values["hw_counters", name] = value
        if self.roce:
            values.update(self._ethtool(uptime))
        return values

    def _ethtool(self, uptime: int) -> dict[tuple[str, str], int]:
        """The physical port's per-priority counters: ambient traffic only, priority 0's."""
        values: dict[tuple[str, str], int] = {}
        for prio in range(8):
            for way, rate in (("rx", self.rates[1]), ("tx", self.rates[0])):
                moved = rate * uptime if prio == 0 else 0
                values["ethtool", f"{way}_prio{prio}_bytes"] = moved
                values["ethtool", f"{way}_prio{prio}_packets"] = moved // 1024
        for shift, way in enumerate(("rx", "tx")):
            values["ethtool", f"{way}_prio{PFC_PRIORITY}_pause"] = (self.seed >> 7 * shift) % 97
        return values


def link_counters_output(printer: Printer, unit: TestUnit, at: Section) -> Output:
    """The link-counters script on one node: its begin line, both snapshots, its end line."""
    block: LinkCountersParams = LINKCOUNTERS.block(unit.test)
    nics = unit.pool.spec.nics
    hcas = list(nics.hcas) if nics is not None else []
    roce = nics is not None and nics.fabric == "roce"
    line_rate = units.parse_bandwidth(nics.speed).gbytes_per_s * 1e9 if nics else 0.0  # B/s
    traffic_s = max(1, units.parse_duration(block.traffic_duration) // 1000)
    node = at.pack.nodes[0]
    before = int(at.start.timestamp()) + 1
    after = before + BEFORE_S + SETUP_S * len(hcas) + traffic_s + TAIL_S
    loopback = int(line_rate * LOOPBACK_SHARE * traffic_s)
    earlier = max(0, at.pack.round - 1)
    ports = []
    for hca in hcas:
        seed = zlib.crc32(f"{node}/{hca}".encode())
        rates = (1000 + seed % 50_000, 1000 + (seed >> 16) % 50_000)
        ports.append(_Port(hca, seed, rates, loopback, earlier, roce))
    failing = _failing(block, after - before) if at.failing else {}
    layer = "Ethernet" if roce else "InfiniBand"
    lines = [f"{MARK} begin node={node} pod={at.pack.pod} start={stamp(at.start)}"]
    for phase, epoch in (("before", before), ("after", after)):
        lines.append(f"{SNAP} snapshot {phase} epoch={epoch}")
        for i, port in enumerate(ports):
            lines.append(f"{SNAP} port {port.hca} {PORT} layer={layer} state={ACTIVE}")
            values = port.at(epoch, phase == "after")
            if i == 0:  # this round's failure after its traffic, earlier rounds' before it
                values.update(_failed(values, failing, earlier + (phase == "after")))
            lines += [f"ctr {port.hca} {PORT} {g} {n} {v}" for (g, n), v in values.items()]
        lines.append(f"{SNAP} snapshot end {phase}")
        if phase == "before":
            lines += [f"{SNAP} traffic {hca} rc=0 server_rc=0" for hca in hcas]
    lines.append(f"{MARK} end rc=0")
    return Output("\n".join(lines) + "\n", 0, at.seconds, exit_line=False)


def _failed(
    values: dict[tuple[str, str], int], failing: dict[tuple[str, str], int], times: int
) -> dict[tuple[str, str], int]:
    """A failing port's counters after `times` failing runs: saturated at their IB width."""
    return {
        (group, name): min(values[group, name] + grown * times, 2 ** WIDTHS[name] - 1)
        for (group, name), grown in failing.items()
    }


def _failing(block: LinkCountersParams, seconds: int) -> dict[tuple[str, str], int]:
    """A failing port's growth: its link down once, symbol errors past their limit."""
    limit = next(
        (x for x in block.limits if (x.group, x.counter) == ("counters", "symbol_error")), None
    )
    allowed = 0.0
    if limit is not None and limit.max_delta is not None:
        allowed = float(limit.max_delta)
    elif limit is not None and limit.max_per_hour is not None:
        allowed = limit.max_per_hour * seconds / 3600
    symbols = max(math.floor(allowed) + 1, math.ceil(allowed * FAILING_TIMES))
    # under its largest value (not saturated in one run), the boot's errors (at most 2) on it
    room = 2 ** WIDTHS["symbol_error"] - 1 - 3
    return {
        ("counters", "link_downed"): 1,
        ("counters", "link_error_recovery"): 1,
        ("counters", "symbol_error"): min(symbols, room),
    }


MAKER: Maker = link_counters_output  # what `rehearse/makers/registry.py` finds by the kind's name
