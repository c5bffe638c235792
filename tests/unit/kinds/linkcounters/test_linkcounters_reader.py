"""The link counters reader (issue #36, item 3): snapshots -> per-port deltas and rates.

The counter values are public captures (tests/fixtures/captures/linkcounters/).
"""

from __future__ import annotations

import pytest
from linkctrlogs import (
    ctr_lines,
    ethtool_values,
    gpud_counters,
    grep_values,
    grown,
    link_log,
)

from nvcregen.ingest.limits import InputLimitError
from nvcregen.ingest.models import IngestFormatError
from nvcregen.kinds.linkcounters.reader import (
    MAX_COUNTERS,
    MAX_PORTS,
    parse_link_counters,
    saturated,
)

PORT = ("mlx5_1", 1)


def counters(values: dict[str, str]) -> dict[tuple[str, int], str]:
    return {PORT: ctr_lines(*PORT, "counters", values)}


def test_real_counters_give_deltas_and_rates_and_saturated_ones_are_problems() -> None:
    values = gpud_counters()
    assert values["link_downed"] == "255" and values["port_xmit_discards"] == "65535"
    after = grown(values, symbol_error=3, port_xmit_data=1_000_000, port_rcv_errors=1)
    (run,) = parse_link_counters(link_log(counters(values), counters(after), seconds=1800), "x")
    assert run.seconds == 1800 and run.rc == 0 and run.traffic == {"mlx5_1": (0, 0)}
    (port,) = run.deltas()
    assert (port.hca, port.port, port.layer) == ("mlx5_1", 1, "InfiniBand")
    symbol = port.counter("counters", "symbol_error")
    assert symbol is not None and (symbol.delta, symbol.per_hour, symbol.problem) == (3, 6.0, "")
    data = port.counter("counters", "port_xmit_data")
    assert data is not None and data.delta == 1_000_000 and not data.problem  # 64 bits wide
    downed = port.counter("counters", "link_downed")
    assert downed is not None and downed.delta == 0
    assert downed.problem.startswith("NVC760: mlx5_1 port 1: counters/link_downed stands at 255")
    wait = port.counter("counters", "port_xmit_wait")
    assert wait is not None and "stands at 4294967295" in wait.problem


def test_saturation_is_each_counters_width_exactly() -> None:
    assert not saturated("symbol_error", 65534) and saturated("symbol_error", 65535)
    assert not saturated("link_downed", 254) and saturated("link_downed", 255)
    assert not saturated("port_xmit_data", 2**32 - 1)  # a 64-bit counter: never


def test_a_counter_that_went_backwards_is_a_problem_not_a_negative_delta() -> None:
    values = grown(gpud_counters(), link_downed=-255, port_xmit_discards=-65535)
    after = grown(values, symbol_error=0)
    after["port_rcv_switch_relay_errors"] = "1"  # 2 before: reset or wrapped
    (run,) = parse_link_counters(link_log(counters(values), counters(after)), "x")
    (port,) = run.deltas()
    assert port.problems == (
        "NVC760: mlx5_1 port 1: counters/port_rcv_switch_relay_errors went backwards: the"
        " port's counters were reset during the interval, so none of their growth is known",
    )
    relay = port.counter("counters", "port_rcv_switch_relay_errors")
    assert relay is not None and relay.delta is None and relay.per_hour is None
    assert relay.problem == (
        "NVC760: mlx5_1 port 1: counters/port_rcv_switch_relay_errors went from 2 to 1:"
        " reset or wrapped, so its growth is unknown"
    )


def test_no_after_snapshot_or_one_that_never_ended_is_no_evidence() -> None:
    values = gpud_counters()
    (missing,) = parse_link_counters(link_log(counters(values), None), "x")
    assert missing.seconds is None
    (port,) = missing.deltas()
    assert port.counters == () and port.problems == (
        "NVC761: mlx5_1 port 1: no after-snapshot: its counters measured nothing",
    )
    (cut,) = parse_link_counters(link_log(counters(values), counters(values), ended=False), "x")
    assert cut.rc is None and cut.deltas()[0].problems[0].startswith("NVC761:")
    other = {("mlx5_2", 1): ctr_lines("mlx5_2", 1, "counters", values)}
    (moved,) = parse_link_counters(link_log(counters(values), other), "x")
    assert moved.deltas()[0].problems == (
        "NVC761: mlx5_1 port 1: absent after: its counters measured nothing",
    )


def test_a_counter_absent_after_is_no_evidence_and_no_pma_is_unreadable() -> None:
    values = gpud_counters()
    fewer = {k: v for k, v in values.items() if k != "symbol_error"}
    (run,) = parse_link_counters(link_log(counters(values), counters(fewer)), "x")
    symbol = run.deltas()[0].counter("counters", "symbol_error")
    assert symbol is not None and symbol.problem.startswith("NVC761:")
    iwarp = grep_values("node_exporter-966-i40iw-counters.txt")
    assert iwarp["link_downed"] == "N/A (no PMA)"
    port = {("i40iw0", 1): ctr_lines("i40iw0", 1, "counters", iwarp)}
    (na,) = parse_link_counters(link_log(port, port), "x")
    downed = na.deltas()[0].counter("counters", "link_downed")
    assert downed is not None and (downed.before, downed.delta, downed.problem) == (None, None, "")


def test_roce_hw_counters_and_ethtool_priorities_are_read() -> None:
    hw = grep_values("byteps-179-hw_counters.txt")
    before = ethtool_values("byteps-179-ethtool-prio-before.txt")
    after = ethtool_values("byteps-179-ethtool-prio-after.txt")
    port = ("mlx5_0", 1)
    was = {port: ctr_lines(*port, "hw_counters", hw) + ctr_lines(*port, "ethtool", before)}
    now = {port: ctr_lines(*port, "hw_counters", hw) + ctr_lines(*port, "ethtool", after)}
    (run,) = parse_link_counters(link_log(was, now, seconds=60), "x")
    (deltas,) = run.deltas()
    rx = deltas.counter("ethtool", "rx_prio0_bytes")
    assert rx is not None and rx.delta == 88171136852706 - 88034564921216
    cnp = deltas.counter("hw_counters", "np_cnp_sent")
    assert cnp is not None and (cnp.before, cnp.delta) == (1333, 0)
    gone = deltas.counter("ethtool", "tx_prio7_packets")  # the after excerpt ends earlier
    assert gone is not None and gone.problem.startswith("NVC761:")


def test_other_text_is_refused_and_bounds_hold_exactly() -> None:
    with pytest.raises(IngestFormatError, match="not link counter output"):
        parse_link_counters("RDMA_Write BW Test\n", "x")
    many = {(f"mlx5_{i}", 1): "" for i in range(MAX_PORTS)}
    (run,) = parse_link_counters(link_log(many, many), "x")
    assert len(run.deltas()) == MAX_PORTS
    many[("mlx5_x", 1)] = ""
    with pytest.raises(InputLimitError, match=f"over {MAX_PORTS} ports") as over:
        parse_link_counters(link_log(many, many), "x")
    assert over.value.code == "NVC763"
    full = {f"c{i}": "0" for i in range(MAX_COUNTERS)}
    assert parse_link_counters(link_log(counters(full), counters(full)), "x")
    full["one_more"] = "0"
    with pytest.raises(InputLimitError, match=f"over {MAX_COUNTERS} counters"):
        parse_link_counters(link_log(counters(full), counters(full)), "x")


def test_values_past_64_bits_are_no_count() -> None:
    top = {"port_xmit_data": str(2**64 - 1), "port_rcv_data": str(2**64)}
    (run,) = parse_link_counters(link_log(counters(top), counters(top)), "x")
    port = run.deltas()[0]
    kept, dropped = (
        port.counter("counters", "port_xmit_data"),
        port.counter("counters", "port_rcv_data"),
    )
    assert kept is not None and kept.before == 2**64 - 1 and kept.delta == 0
    assert dropped is not None and dropped.before is None and dropped.delta is None


def test_an_after_snapshot_no_later_than_the_before_one_has_no_rate() -> None:
    values = gpud_counters()
    (same,) = parse_link_counters(link_log(counters(values), counters(values), seconds=0), "x")
    (port,) = same.deltas()
    assert port.problems == ("NVC760: mlx5_1 port 1: the after-snapshot is not later (0 s)",)
    assert all(c.per_hour is None for c in port.counters)
    (one,) = parse_link_counters(link_log(counters(values), counters(values), seconds=1), "x")
    assert one.deltas()[0].problems == ()
    symbol = one.deltas()[0].counter("counters", "symbol_error")
    assert symbol is not None and symbol.per_hour == 0.0


def test_traffic_lines_are_bounded_and_a_second_snapshot_is_not_read() -> None:
    values = gpud_counters()
    text = link_log(counters(values), counters(values))
    lines = "".join(f"@@linkctr traffic x{i} rc=0 server_rc=0\n" for i in range(MAX_PORTS - 1))
    (run,) = parse_link_counters(text + lines, "x")  # mlx5_1 and 255 more: at the bound
    assert len(run.traffic) == MAX_PORTS
    with pytest.raises(InputLimitError, match=f"traffic of over {MAX_PORTS} HCAs") as over:
        parse_link_counters(text + lines + "@@linkctr traffic y rc=0 server_rc=0\n", "x")
    assert over.value.code == "NVC763"
    again = text + "@@linkctr snapshot after epoch=1765009999\n"
    (twice,) = parse_link_counters(again, "log")
    assert twice.problems == ("log:52: a second after snapshot, not read",)
    assert twice.after is not None and twice.after.epoch == 1_765_003_600  # the first one
