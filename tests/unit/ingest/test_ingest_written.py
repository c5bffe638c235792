"""Log shapes ingest once misread (issue #13), each in a log written as the tools print it."""

from __future__ import annotations

from pathlib import Path

import pytest

from nvcregen.ingest import IngestFormatError, parse_dcgm
from nvcregen.ingest.transport import detect_transports
from nvcregen.kinds.nccl import printer as ncclprint
from nvcregen.kinds.nccl.files import ingest_nccl
from nvcregen.kinds.nccl.medians import summarize
from nvcregen.kinds.nccl.models import NcclRun
from nvcregen.kinds.nccl.reader import parse_nccl
from nvcregen.kinds.nccl.render import render_nccl

ROOT = Path(__file__).resolve().parents[3]
WRITTEN = ROOT / "tests" / "fixtures" / "written-logs"
NCCL = WRITTEN / "nccl-tests"
DCGM = WRITTEN / "dcgm"
REAL = ROOT / "tests" / "fixtures" / "real-logs" / "nccl-tests"
OCI = REAL / "allreduce-2node-16xH100-oci-roce-nccl2.21.5-container.txt"
GIB = 1 << 30


def nccl_runs(name: str) -> list[NcclRun]:
    return parse_nccl((NCCL / name).read_text(), name)


def test_printer_lays_rows_out_as_the_real_log() -> None:
    """ncclprint's formats give back every header and row of the real OCI capture."""
    real = OCI.read_text().splitlines()
    (run,) = parse_nccl(OCI.read_text(), "oci")
    start = real.index(ncclprint.HEADER[1]) - 1
    assert real[start : start + 3] == list(ncclprint.HEADER)
    for row, text in zip(run.rows, real[start + 3 :], strict=False):
        halves = [
            (m.time_us or 0.0, m.algbw_gbs or 0.0, m.busbw_gbs or 0.0, str(m.wrong))
            for m in (row.out_of_place, row.in_place)
        ]
        assert ncclprint.line(row.size_bytes, row.count, row.type, "sum", halves) == text


def test_launcher_prefix_before_the_mpirun_tag() -> None:
    (run,) = parse_nccl(
        (NCCL / "allreduce-2node-skypilot-prefix-before-mpirun-tag.txt").read_text(), "x"
    )
    assert (run.status, len(run.rows), run.avg_busbw_gbs) == ("ok", 4, 452.611)
    assert run.rows[0].size_bytes == GIB
    assert run.rows[-1].out_of_place.busbw_gbs == 460.31
    assert run.hosts == ("gpu-node-a", "gpu-node-b")


def test_a_summary_without_readable_rows_is_never_ok() -> None:
    text = (NCCL / "allreduce-2node-skypilot-prefix-before-mpirun-tag.txt").read_text()
    unknown = text.replace("[1,0]<stdout>:", "{1,0}<stdout>:")  # a launcher tag no one knows
    (run,) = parse_nccl(unknown, "x")
    assert (run.rows, run.avg_busbw_gbs) == ((), 452.611)
    assert run.status == "failed"
    assert run.errors[0].startswith("the run printed its summary but no result row")


def test_transport_from_what_nccl_used_not_from_the_failed_ib_probe() -> None:
    (run,) = parse_nccl(
        (NCCL / "allreduce-2node-socket-after-failed-ib-probe-nccl2.27.txt").read_text(), "x"
    )
    assert (run.transports, run.gdrdma, run.nccl_versions) == (
        ("Socket",),
        False,
        ("2.27.3+cuda12.9",),
    )
    assert run.rows[0].out_of_place.busbw_gbs == 2.21


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        (["h:1:2 [0] NCCL INFO NET/IB : No device found.",
          "h:1:2 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>"], ("Socket",)),
        (["h:1:2 [0] NCCL INFO NET/IB : Using [RO]; OOB eth0:10.0.0.1<0>",
          "h:1:2 [0] NCCL INFO Failed to initialize NET plugin IB",
          "h:1:2 [0] NCCL INFO Initialized NET plugin Socket"], ("Socket",)),
        (["h:1:2 [0] NCCL INFO NET/IB : No device found."], ()),
        (["h:1:2 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [RO]; OOB eth0:10.0.0.1<0>",
          "h:1:2 [0] NCCL INFO Channel 00/0 : 1[0] -> 0[0] [receive] via NET/Socket/0"],
         ("Socket",)),
        (["h:1:2 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [RO]; OOB eth0:10.0.0.1<0>"],
         ("IB",)),
    ],
)  # fmt: skip
def test_transport_lines(lines: list[str], expected: tuple[str, ...]) -> None:
    assert detect_transports(lines).transports == expected


def test_each_collective_takes_its_own_marker() -> None:
    runs = parse_nccl((NCCL / "three-collectives-one-file-marker-lines.txt").read_text(), "x.log")
    assert [(r.collective, r.status, r.avg_busbw_gbs) for r in runs] == [
        ("all_reduce", "ok", 465.235),
        ("all_gather", "ok", 353.346),
        ("alltoall", "ok", 303.147),
    ]
    assert [r.rows[0].redop for r in runs] == ["sum", "none", "none"]


def test_old_layout_with_blanks_before_the_header_hash() -> None:
    name = "allreduce-1node-4xV100-old-layout-indented-error-column.txt"
    (run,) = parse_nccl((NCCL / name).read_text(), name)
    assert (run.status, len(run.rows), run.hosts) == ("ok", 4, ("gpu-n26",))
    row = run.rows[1]
    assert (row.size_bytes, row.count, row.type, row.redop) == (1048576, 262144, "float", "sum")
    assert (row.out_of_place.time_us, row.out_of_place.busbw_gbs, row.out_of_place.wrong) == (
        135.3,
        15.02,
        7e-07,
    )
    assert row.in_place.busbw_gbs == 15.31


def test_segfault_under_mpirun_fails_the_run_with_the_launchers_words() -> None:
    (run,) = parse_nccl(
        (NCCL / "allreduce-2node-mpirun-rank-segfault-mid-table.txt").read_text(), "x"
    )
    assert (run.status, len(run.rows)) == ("failed", 2)
    assert run.errors[:2] == (
        "[node-b:02315] Signal: Segmentation fault (11)",
        "mpirun noticed that process rank 8 with PID 0 on node node-b exited on signal 11"
        " (Segmentation fault).",
    )


@pytest.mark.parametrize(
    "tail",
    [
        "srun: error: node-b: task 9: Segmentation fault (core dumped)",
        "srun: error: node-b: task 9: Exited with exit code 1",
        "/opt/run.sh: line 12:  2315 Segmentation fault      (core dumped) ./all_reduce_perf",
        "ssh: connect to host node-b port 22: Connection refused",
        "mpirun noticed that process rank 0 with PID 26386 on node node-b\n"
        "exited on signal 11 (Segmentation fault).",
    ],
)
def test_launcher_failures_after_a_complete_table(tail: str) -> None:
    (run,) = parse_nccl(OCI.read_text() + tail + "\n", "x")
    assert run.status == "failed"
    assert run.errors[-1].replace("\n", " ") == tail.replace("\n", " ")


def test_a_clean_exit_is_not_a_failure() -> None:
    (run,) = parse_nccl(
        OCI.read_text() + "srun: error: node-b: task 9: Exited with exit code 0\n", "x"
    )
    assert run.status == "ok"


def test_edited_average_line_warns() -> None:
    honest = parse_nccl(OCI.read_text(), "x")[0]
    edited = parse_nccl(OCI.read_text().replace(": 458.452", ": 512.3"), "x")[0]
    assert honest.warnings == ()
    assert (edited.status, edited.avg_busbw_gbs) == ("ok", 512.3)
    assert edited.warnings == (
        "'Avg bus bandwidth' says 512.3 GB/s but the rows average 458.4520 GB/s:"
        " the summary or the rows were edited after the run",
    )


def test_average_within_rounding_does_not_warn() -> None:
    """0.005 from the rows' two decimals plus half a unit of the average's sixth digit."""
    assert parse_nccl(OCI.read_text().replace(": 458.452", ": 458.457"), "x")[0].warnings == ()
    assert parse_nccl(OCI.read_text().replace(": 458.452", ": 458.458"), "x")[0].warnings != ()


def test_summaries_keep_data_types_apart() -> None:
    runs = [r for n in (1, 2) for r in nccl_runs(f"allreduce-1node-dtype-all-round{n}.txt")]
    rows = summarize(runs, at=GIB)
    assert len(rows) == 10
    by_type = {row.type: row for row in rows}
    assert by_type["int8"].median_busbw_gbs == pytest.approx((402.10 + 396.07) / 2, abs=0.01)
    assert by_type["double"].median_busbw_gbs == pytest.approx((431.60 + 425.13) / 2, abs=0.01)
    assert {row.rounds for row in rows} == {2}
    assert {(row.scope, row.nodes) for row in rows} == {("1 node", ("node-a",))}


def test_summaries_keep_node_sets_and_transports_apart() -> None:
    two = parse_nccl(OCI.read_text(), "a")[0]
    ib = "h:1:2 [0] NCCL INFO Using network IB\n"
    sock = "h:1:2 [0] NCCL INFO Using network Socket\n"
    single = OCI.read_text().replace("inst-yyyyy-h100-ol89", "inst-xxxxx-h100-ol89")
    runs = [
        two,
        *parse_nccl(OCI.read_text(), "b"),
        *parse_nccl(single, "c"),
        *parse_nccl(single, "d"),
        *parse_nccl(ib + OCI.read_text(), "e"),
        *parse_nccl(ib + OCI.read_text(), "f"),
        *parse_nccl(sock + OCI.read_text(), "g"),
    ]
    rows = summarize(runs, at=GIB)
    assert [(r.scope, r.transports, r.rounds) for r in rows] == [
        ("1 node", (), 2),
        ("2 nodes", (), 2),
        ("2 nodes", ("IB",), 2),
        ("2 nodes", ("Socket",), 1),
    ]  # the Socket round is not pooled with the others: a line of its own (`at` selects)
    assert [r.rounds for r in summarize(runs)] == [2] * 15  # without `at`: two rounds at least


def test_text_output_keeps_every_digit_of_the_average(tmp_path: Path) -> None:
    log = tmp_path / "r.log"
    log.write_text(OCI.read_text().replace(": 458.452", ": 458.4521"))
    text = render_nccl(ingest_nccl([log]))
    assert "avg busbw 458.4521 GB/s" in text.splitlines()[0]


def test_dcgm_error_row_wrapped_without_border_is_failed_with_its_reason() -> None:
    name = "dcgm-3.3.8-diag-r1-text-deployment-error-row-wrapped-no-border.txt"
    (run,) = parse_dcgm((DCGM / name).read_text(), name)
    message = (
        "GPU 3 had uncorrectable memory errors and row remapping failed. Run a field diagnostic on"
    )
    assert (run.status, run.level, run.dcgm_version) == ("failed", 1, "3.3.8")
    assert run.errors == (
        f"Error: {message}",
        "the table has no closing border: output cut short",
    )
    remap = run.tests[-1]
    assert (remap.name, remap.result, remap.errors) == (
        "Page Retirement/Row Remap",
        "Fail",
        (message,),
    )


def test_dcgm_error_row_with_no_test_above_it() -> None:
    name = "dcgm-3.3.8-diag-r1-text-error-row-without-test.txt"
    (run,) = parse_dcgm((DCGM / name).read_text(), name)
    assert (run.status, run.tests) == ("failed", ())
    assert run.errors[0] == (
        "Error: Detected 1 active processes on GPU 5: nvidia-cuda-mps-server."
        " Stop them before running the"
    )


def test_dcgm_runtime_error_without_a_table() -> None:
    name = "dcgm-4.4.0-diag-r2-runtime-error-cannot-load-plugins.txt"
    (run,) = parse_dcgm((DCGM / name).read_text(), name)
    assert (run.status, run.level, run.tests) == ("failed", 2, ())
    assert run.errors == (
        "DCGM runtime error: Unable to complete diagnostic for entities *,cpu:*. Return: (-30)"
        " : DCGM GPU Diagnostic returned an error",
        "DCGM runtime error: Cannot load plugins. Unable to change to the plugin dir"
        " '/usr/libexec/datacenter-gpu-manager-4/plugins/cuda13/': 'No such file or directory'",
    )


def test_a_stray_error_line_is_not_dcgm() -> None:
    with pytest.raises(IngestFormatError):
        parse_dcgm("Error: file not found\n", "x")


def test_kubectl_timestamps_on_every_line_read_through() -> None:
    """`kubectl logs --timestamps` output: the same runs as the log without them."""
    real = ROOT / "tests" / "fixtures" / "real-logs"
    dcgm = (real / "dcgm" / "dcgm-3.1.0-diag-json-with-warning-prefix-and-nulls.txt").read_text()
    stamped = "".join(f"2026-10-14T13:01:07.5Z {line}\n" for line in dcgm.splitlines())
    assert parse_dcgm(stamped, "x") == parse_dcgm(dcgm, "x")
    nccl = OCI.read_text()
    stamped = "".join(f"2026-10-14T13:01:07.5Z {line}\n" for line in nccl.splitlines())
    assert parse_nccl(stamped, "x") == parse_nccl(nccl, "x")
