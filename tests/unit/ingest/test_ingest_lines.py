"""Launcher prefixes, table layouts and transports, one line at a time."""

from __future__ import annotations

import pytest
from memorypeak import peak_of

from nvcregen.ingest.lines import (
    KUBECTL_TIME,
    last_lines,
    last_timestamp,
    strip_prefix,
    timestamps_out_of_order,
)
from nvcregen.ingest.transport import detect_transports
from nvcregen.kinds.nccl.table import Columns, RowError, parse_header, parse_row

ROW = "  1073741824     268435456     float     sum      -1   4511.2  238.02  446.28      0"
ROW += "   4520.9  237.50  445.32      0"


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("[1,0]<stdout>:# Avg bus bandwidth    : 156.742 ", "# Avg bus bandwidth    : 156.742"),
        ("0:            8             2     float", "           8             2     float"),
        (" 12: # Out of bounds values : 0 OK", "# Out of bounds values : 0 OK"),
        ("vm-07-05: #  Rank  0 Group  0", "#  Rank  0 Group  0"),
        ("[2025-06-12 16:57:52] gpu0301:842624:842643 [0] misc/nvmlwrap.cc:74 NCCL WARN x",
         "gpu0301:842624:842643 [0] misc/nvmlwrap.cc:74 NCCL WARN x"),
        ("n013:101855:101885 [0] NCCL INFO Using network IB",
         "n013:101855:101885 [0] NCCL INFO Using network IB"),
        ("    8     2     float     sum", "    8     2     float     sum"),
        ("node-a: 0: [1,3]<stderr>:x", "x"),
    ],
)  # fmt: skip
def test_strip_prefix(line: str, expected: str) -> None:
    assert strip_prefix(line) == expected


def test_header_layouts() -> None:
    new = parse_header(
        "#       size   count  type   redop    root     time   algbw   busbw  #wrong"
    )
    old = parse_header("#  size  count  type  time  algbw  busbw  error  time  algbw  busbw  error")
    assert new == Columns(("size", "count", "type", "redop", "root"), "#wrong")
    assert old == Columns(("size", "count", "type"), "error")
    assert parse_header("#        (B)    (elements)      (us)  (GB/s)  (GB/s)") is None


def test_row_and_its_cut_form() -> None:
    columns = parse_header("size count type redop root time algbw busbw #wrong")
    row = parse_row(ROW, columns)
    assert (row.size_bytes, row.redop, row.out_of_place.busbw_gbs, row.in_place.wrong) == (
        1073741824,
        "sum",
        446.28,
        0,
    )
    with pytest.raises(RowError) as cut:
        parse_row(ROW.rsplit(" ", 1)[0], columns)
    assert cut.value.cut
    with pytest.raises(RowError) as bad:
        parse_row(ROW.replace("446.28", "n/a"), None)
    assert not bad.value.cut


def test_row_without_header_infers_root_or_redop() -> None:
    root_only = parse_row("8 2 float 0 45.82 0.00 0.00 N/A 38.17 0.00 0.00 N/A", None)
    redop_only = parse_row("8 2 float sum 45.82 0.00 0.00 0 38.17 0.00 0.00 0", None)
    assert (root_only.redop, redop_only.redop) == (None, "sum")


def test_transports() -> None:
    lines = [
        "h:1:2 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>",
        "h:1:2 [0] NCCL INFO Using network Socket",
    ]
    assert detect_transports(lines).transports == ("Socket",)
    efa = detect_transports(
        [
            "h:1:2 [0] NCCL INFO Using network AWS Libfabric",
            "h:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via NET/AWS Libfabric/0/GDRDMA",
            "h:1:2 [0] NCCL INFO NET/Plugin: Loaded net plugin",
        ]
    )
    assert (efa.transports, efa.gdrdma) == (("AWS Libfabric",), True)
    nvlink = detect_transports(["h:1:2 [0] NCCL INFO Channel 00 : 0[0] -> 1[1] via P2P/IPC"])
    assert (nvlink.transports, nvlink.gdrdma) == ((), False)
    topology = ["h:1:2 [0] NCCL INFO NET/1 :GPU/81000 (3/24.000000/PHB) NET/0 (5/3.125000/SYS)"]
    assert detect_transports(topology).transports == ()


# NCCL 2.28.9 on a host without HCAs: IB fails, Socket is picked for every communicator.
_INIT = [
    "vm:656:656 [0] NCCL INFO NET/IB : No device found.",
    "vm:656:656 [0] NCCL INFO NET/IB : Using [RO]; OOB eth0:192.0.2.2<0>",
    "vm:656:656 [0] NCCL INFO Failed to initialize NET plugin IB",
    "vm:656:656 [0] NCCL INFO NET/Socket : Using [0]eth0:192.0.2.2<0>",
    "vm:656:656 [0] NCCL INFO Using network Socket",
]


def test_failed_net_plugin_is_not_a_transport() -> None:
    assert detect_transports(_INIT).transports == ("Socket",)


@pytest.mark.parametrize(
    ("comms", "transports"),
    [
        (["rank 0 nRanks 1 nNodes 1 localRanks 1"], ()),
        (["rank 0 nRanks 2 nNodes 1 localRanks 2", "rank 1 nRanks 2 nNodes 1 localRanks 2"], ()),
        (["rank 0 nRanks 16 nNodes 2 localRanks 8"], ("Socket",)),
        (
            ["rank 0 nRanks 1 nNodes 1 localRanks 1", "rank 0 nRanks 16 nNodes 2 localRanks 8"],
            ("Socket",),
        ),
    ],
)
def test_single_node_comms_use_no_network(comms: list[str], transports: tuple[str, ...]) -> None:
    lines = _INIT + [f"vm:656:656 [0] NCCL INFO comm 0x55dd {comm} localRank 0" for comm in comms]
    assert detect_transports(lines).transports == transports


def test_single_node_comm_forced_onto_the_network_keeps_it() -> None:
    via = "vm:656:656 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] [send] via NET/Socket/0"
    lines = [*_INIT, "vm:656:656 [0] NCCL INFO comm 0x1 rank 0 nRanks 2 nNodes 1 localRanks 2", via]
    assert detect_transports(lines).transports == ("Socket",)


def test_kubectl_timestamps_that_go_backwards_are_found() -> None:
    lines = [
        "2026-10-14T13:00:00.5Z a",
        "2026-10-14T13:00:00.5Z same time is in order",
        "no time: skipped",
        "2026-10-14T13:00:01Z b",
    ]
    assert timestamps_out_of_order("\n".join(lines)) is None
    assert timestamps_out_of_order("\n".join([*lines, "2026-10-14T13:00:00.999Z c"])) == (
        "line 5 (2026-10-14T13:00:00.999Z) is earlier than line 4 (2026-10-14T13:00:01Z)"
    )
    # fractions compare by value, not by their length
    assert timestamps_out_of_order("2026-10-14T13:00:00.5Z a\n2026-10-14T13:00:00.123Z b") == (
        "line 2 (2026-10-14T13:00:00.123Z) is earlier than line 1 (2026-10-14T13:00:00.5Z)"
    )
    assert timestamps_out_of_order("2026-10-14T13:00:00.5Z a\n2026-10-14T13:00:00.51Z b") is None


def _stamped(n: int) -> str:
    return f"2026-10-14T12:{n // 60 % 60:02}:{n % 60:02}.5Z line {n}"


@pytest.mark.parametrize(
    "text",
    [
        "",
        "\n",
        _stamped(1),
        "\n".join(_stamped(n) for n in range(64)) + "\n",
        "\n".join(_stamped(n) for n in range(65)),
        "\n".join(_stamped(n) for n in range(65)) + "\nno time\n" * 64,
        "\n".join(_stamped(n) for n in range(65)) + "\nno time\n" * 63,
        "\r\n".join(_stamped(n) for n in range(9000)) + "\r\n",
        "x" * 4095 + "\r\n" + "\n".join(_stamped(n) for n in range(70)),
        "A" * 5000 + "\n" + "\n".join("b" * 50 for _ in range(63)),  # 64 in the tail, 1 cut
        "A" * 5000 + "\n" + "\n".join("b" * 50 for _ in range(64)),
        "\n".join("y" * 5000 + "\r" + _stamped(n) for n in range(80)),
        "\x1c".join(_stamped(n) for n in range(700)) + "\u2028tail",
    ],
)
def test_last_lines_are_the_last_lines_of_a_whole_split(text: str) -> None:
    for count in (0, 1, 63, 64, 65):
        assert last_lines(text, count) == (text.splitlines()[-count:] if count else [])
    whole = text.splitlines()[-64:]
    found = [m for m in map(KUBECTL_TIME.match, reversed(whole)) if m is not None]
    expected = "{}{}{}T{}{}{}Z".format(*found[0].groups()) if found else None
    assert last_timestamp(text) == expected


def test_a_logs_last_time_splits_only_its_end() -> None:
    """Splitting all 200,000 lines of a log would allocate 16 MiB; its last 64 need ~ 8 KiB."""
    text = "\n".join(_stamped(n) for n in range(200_000)) + "\n"
    stamp, peak = peak_of(lambda: last_timestamp(text))
    assert stamp == "20261014T123319Z"
    assert peak < 64 << 10, f"{peak / 1024:.0f} KiB"
