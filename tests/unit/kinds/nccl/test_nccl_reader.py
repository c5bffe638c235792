"""nccl-tests logs from the field: every real fixture, row values against the log text."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nvcregen.ingest import IngestFormatError
from nvcregen.kinds.nccl.models import NcclRow, NcclRun
from nvcregen.kinds.nccl.reader import parse_nccl

ROOT = Path(__file__).resolve().parents[4]
LOGS = ROOT / "tests" / "fixtures" / "real-logs" / "nccl-tests"
DCGM = ROOT / "tests" / "fixtures" / "real-logs" / "dcgm"

# file -> (collective, status, transports, number of rows, Avg bus bandwidth)
EXPECTED: dict[str, tuple[str, str, tuple[str, ...], int, float | None]] = {
    "allgather-2node-2xGB10-dgxspark-v2.18.3-qsfp-degraded-2.8GBps.txt": (
        "all_gather", "ok", (), 3, 2.82151),
    "allgather-2node-2xGB10-dgxspark-v2.18.3-qsfp-healthy-21GBps.txt": (
        "all_gather", "ok", (), 3, 21.4033),
    "allreduce-1node-1xRTX5090-nranks1-huge-inplace-algbw-avg0.txt": (
        "all_reduce", "ok", (), 25, 0.0),
    # A failed run keeps the network its init lines name (Socket), single-node or not.
    "allreduce-1node-2xRTX5090-nccl2.25.1-debug-info-net-socket-shm-then-failure.txt": (
        "all_reduce", "failed", ("Socket",), 0, None),
    "allreduce-1node-2xRTX5090-test-nccl-failure-unhandled-cuda-error.txt": (
        "all_reduce", "failed", (), 0, None),
    "allreduce-1node-3xA6000-nccl2.26.2-debug-roce-timestamped-warn-unhandled-system-error.txt": (
        "all_reduce", "failed", ("IB",), 0, None),
    "allreduce-1node-8xH100-test-cuda-failure-system-not-yet-initialized.txt": (
        "all_reduce", "failed", (), 0, None),
    "allreduce-2node-16xH100-gcp-a3mega-mpirun-g1-markdown-mangled-header.txt": (
        "all_reduce", "ok", (), 31, 70.742),
    "allreduce-2node-16xH100-oci-roce-nccl2.21.5-container.txt": (
        "all_reduce", "ok", (), 5, 458.452),
    "allreduce-2node-2xGH200-v2.17.8-wrong-nonzero-out-of-bounds-4-FAILED.txt": (
        "all_reduce", "failed", (), 25, 4.79995),
    "allreduce-2node-8xGH200-v2.17.8-slingshot-test-cuda-failure-devices-busy.txt": (
        "all_reduce", "failed", (), 0, None),
    "allreduce-2node-p5.48xlarge-efa-srun-label-prefix-no-summary.txt": (
        "all_reduce", "truncated", (), 32, None),
    "allreduce-awsbatch-mpirun-tag-output-prefix-irregular-header-spacing.txt": (
        "all_reduce", "ok", (), 32, 156.742),
    "alltoall-2node-16gpu-v2.18.3-nccl2.30.3-spcx-inplace-NA-bw-collapse.txt": (
        "alltoall", "ok", (), 24, 7.39538),
    # Four 1-rank comms (nNodes 1 each), failed: the IB their init lines name is kept.
    "alltoall-2node-4proc-roce-trace-non-mpi-build-4x-nranks1-interleaved.txt": (
        "alltoall", "failed", ("IB",), 112, 0.0),
    "broadcast-2node-2xV100-nccl2.9.6-socket-c0-old-header-TRUNCATED-excerpt.txt": (
        "broadcast", "truncated", (), 1, None),
    "gather-2node-2xA100-nccl2.16.5-debug-ib-roce-gdrdma-no-summary-perf-cliff.txt": (
        "gather", "truncated", ("IB",), 85, None),
    "sendrecv-2node-2xA40-inplace-NA-TRUNCATED-excerpt.txt": (
        "sendrecv", "truncated", (), 5, None),
    "superbench-2021-old-format-1node-8xA100-allgather-validation0.txt": (
        "all_gather", "ok", (), 34, 58.2651),
    "superbench-2021-old-format-1node-8xA100-alltoall-validation0.txt": (
        "alltoall", "ok", (), 34, 58.6481),
    "superbench-2021-old-format-1node-8xA100-reducescatter-validation0.txt": (
        "reduce_scatter", "ok", (), 34, 60.168),
}  # fmt: skip


def only_run(name: str) -> NcclRun:
    runs = parse_nccl((LOGS / name).read_text(), name)
    assert len(runs) == 1
    return runs[0]


def row_at(run: NcclRun, size: int) -> NcclRow:
    return next(row for row in run.rows if row.size_bytes == size)


def test_every_real_log_has_an_expectation() -> None:
    assert sorted(p.name for p in LOGS.glob("*.txt")) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_real_log(name: str) -> None:
    collective, status, transports, rows, avg = EXPECTED[name]
    run = only_run(name)
    assert (run.collective, run.status, run.transports) == (collective, status, transports)
    assert (len(run.rows), run.avg_busbw_gbs) == (rows, avg)
    assert bool(run.errors) == (status != "ok")


def test_time_switches_to_integers_above_10000_us() -> None:
    row = row_at(only_run("allreduce-2node-16xH100-oci-roce-nccl2.21.5-container.txt"), 4 << 30)
    assert (row.count, row.type, row.redop) == (1073741824, "float", "sum")
    assert row.out_of_place.to_json() == {
        "time_us": 17437.0,
        "algbw_gbs": 246.31,
        "busbw_gbs": 461.83,
        "wrong": 0,
    }
    assert (row.in_place.time_us, row.in_place.busbw_gbs) == (17446.0, 461.60)


def test_in_place_algbw_wider_than_its_column() -> None:
    run = only_run("allreduce-1node-1xRTX5090-nranks1-huge-inplace-algbw-avg0.txt")
    last = run.rows[-1]
    assert (last.size_bytes, last.out_of_place.time_us, last.out_of_place.algbw_gbs) == (
        134217728,
        175.6,
        764.34,
    )
    assert (last.in_place.algbw_gbs, last.in_place.busbw_gbs) == (1777718.25, 0.0)


def test_in_place_na_stays_none() -> None:
    run = only_run("alltoall-2node-16gpu-v2.18.3-nccl2.30.3-spcx-inplace-NA-bw-collapse.txt")
    assert all(row.out_of_place.wrong == 0 and row.in_place.wrong is None for row in run.rows)
    collapse = row_at(run, 8388608)
    assert (collapse.out_of_place.busbw_gbs, collapse.in_place.time_us) == (30.22, 5176.42)
    assert collapse.redop == "none"


def test_cut_row_is_dropped_and_named() -> None:
    run = only_run("sendrecv-2node-2xA40-inplace-NA-TRUNCATED-excerpt.txt")
    assert [row.size_bytes for row in run.rows] == [256, 512, 1024, 2048, 4096]
    assert run.rows[-1].in_place.to_json()["wrong"] is None
    assert (
        run.errors[0] == "row cut short: '8192 2048 float sum -1 31.76 0.26 0.26 0 31.59 0.26 0.'"
    )


def test_old_format_without_redop_and_with_error_column() -> None:
    run = only_run("superbench-2021-old-format-1node-8xA100-allgather-validation0.txt")
    assert [row.size_bytes for row in run.rows[:6]] == [0, 0, 0, 0, 0, 32]
    big = row_at(run, 8589934592)
    assert (big.redop, big.out_of_place.wrong, big.in_place.wrong) == (None, None, None)
    assert (big.out_of_place.time_us, big.out_of_place.busbw_gbs) == (33646.0, 223.39)
    assert big.in_place.busbw_gbs == 230.07


def test_old_alltoall_blank_redop_cell() -> None:
    run = only_run("superbench-2021-old-format-1node-8xA100-alltoall-validation0.txt")
    row = row_at(run, 32)
    assert (row.redop, row.count, row.out_of_place.time_us, row.in_place.time_us) == (
        None,
        1,
        89.0,
        85.13,
    )


def test_old_reduce_scatter_keeps_its_operation() -> None:
    run = only_run("superbench-2021-old-format-1node-8xA100-reducescatter-validation0.txt")
    assert {row.redop for row in run.rows} == {"sum"}


def test_old_broadcast_with_root_and_no_redop() -> None:
    run = only_run("broadcast-2node-2xV100-nccl2.9.6-socket-c0-old-header-TRUNCATED-excerpt.txt")
    (row,) = run.rows
    assert (row.size_bytes, row.count, row.redop) == (8, 2, None)
    assert (row.out_of_place.time_us, row.in_place.time_us) == (45.82, 38.17)
    assert (row.out_of_place.wrong, row.in_place.wrong) == (None, None)
    assert run.nccl_versions == ("2.9.6+cuda11.2",)


def test_wrong_counts_fail_the_run() -> None:
    run = only_run("allreduce-2node-2xGH200-v2.17.8-wrong-nonzero-out-of-bounds-4-FAILED.txt")
    row = row_at(run, 1048576)
    assert (row.out_of_place.wrong, row.in_place.wrong) == (96, 32)
    assert (row.out_of_place.time_us, row_at(run, 33554432).out_of_place.time_us) == (
        477.32,
        1587.57,
    )
    assert run.errors[:2] == (
        "Out of bounds values: 4 FAILED",
        "1048576 bytes: #wrong out-of-place 96, in-place 32",
    )


def test_launcher_prefixes() -> None:
    tagged = only_run("allreduce-awsbatch-mpirun-tag-output-prefix-irregular-header-spacing.txt")
    assert (tagged.rows[0].size_bytes, tagged.rows[-1].out_of_place.busbw_gbs) == (8, 483.05)
    srun = only_run("allreduce-2node-p5.48xlarge-efa-srun-label-prefix-no-summary.txt")
    assert (srun.rows[0].out_of_place.time_us, srun.rows[-1].size_bytes) == (69.12, 17179869184)
    assert srun.errors == ("no 'Avg bus bandwidth' line: the log ends before the run finished",)


def test_pdsh_prefix_reads_like_the_plain_log() -> None:
    name = "allreduce-2node-16xH100-oci-roce-nccl2.21.5-container.txt"
    text = (LOGS / name).read_text()
    prefixed = "".join(f"node-a.lab: {line}" for line in text.splitlines(keepends=True))
    (run,) = parse_nccl(prefixed, name)
    assert run == only_run(name)


def test_header_that_lost_its_hash() -> None:
    run = only_run("allreduce-2node-16xH100-gcp-a3mega-mpirun-g1-markdown-mangled-header.txt")
    assert (run.rows[0].size_bytes, run.rows[-1].out_of_place.busbw_gbs) == (8, 338.82)


def test_failures_quote_the_log() -> None:
    run = only_run(
        "allreduce-1node-3xA6000-nccl2.26.2-debug-roce-timestamped-warn-unhandled-system-error.txt"
    )
    assert run.errors == (
        "Test NCCL failure common.cu:1119 'unhandled system error "
        "(run with NCCL_DEBUG=INFO for details) / '",
        "NCCL WARN Failed to open libnvidia-ml.so.1",
    )
    busy = only_run("allreduce-2node-8xGH200-v2.17.8-slingshot-test-cuda-failure-devices-busy.txt")
    assert busy.errors == (
        "Test CUDA failure common.cu:1304 'CUDA-capable device(s) is/are busy or unavailable'",
    )


def test_gdrdma_and_mixed_roce_ib() -> None:
    run = only_run("gather-2node-2xA100-nccl2.16.5-debug-ib-roce-gdrdma-no-summary-perf-cliff.txt")
    assert (run.transports, run.gdrdma, run.nccl_versions) == (("IB",), True, ("2.16.5+cuda11.8",))
    assert (
        row_at(run, 6308233216).out_of_place.busbw_gbs,
        row_at(run, 6442450944).out_of_place.busbw_gbs,
    ) == (17.92, 10.51)
    assert {row.redop for row in run.rows} == {"none"}


def test_network_picked_at_init_by_single_node_comms_is_not_a_transport() -> None:
    tcp_name = "allreduce-1node-2xRTX5090-nccl2.25.1-debug-info-net-socket-shm-then-failure.txt"
    roce_name = "alltoall-2node-4proc-roce-trace-non-mpi-build-4x-nranks1-interleaved.txt"
    tcp, roce = only_run(tcp_name), only_run(roce_name)
    assert (tcp.status, roce.status) == ("failed", "failed")
    assert (tcp.transports, roce.transports) == (("Socket",), ("IB",))  # failed: init is all
    assert (tcp.gdrdma, roce.gdrdma) == (False, False)
    # The same lines in a run that did not fail (the failure lines cut): nothing carried.
    lines = (LOGS / tcp_name).read_text().splitlines()
    kept = "\n".join(line for line in lines if "failure" not in line and "WARN" not in line)
    finished = parse_nccl(kept, tcp_name)[0]
    assert (finished.status, finished.transports) == ("truncated", ())
    # Without the `nNodes` lines the node count is unknown: the picked network is reported.
    for name, picked in ((tcp_name, ("Socket",)), (roce_name, ("IB",))):
        lines = (LOGS / name).read_text().splitlines()
        text = "\n".join(line for line in lines if "nNodes" not in line)
        assert parse_nccl(text, name)[0].transports == picked


def test_interleaved_single_rank_processes() -> None:
    run = only_run("alltoall-2node-4proc-roce-trace-non-mpi-build-4x-nranks1-interleaved.txt")
    assert run.errors[0].startswith("4 separate test processes printed into one table")
    assert run.nccl_versions == ("2.26.2+cuda12.8", "2.26.5+cuda12.9")
    assert sum(row.size_bytes == 1073741824 for row in run.rows) == 4


def test_two_runs_in_one_file() -> None:
    healthy = (LOGS / "allgather-2node-2xGB10-dgxspark-v2.18.3-qsfp-healthy-21GBps.txt").read_text()
    degraded = LOGS / "allgather-2node-2xGB10-dgxspark-v2.18.3-qsfp-degraded-2.8GBps.txt"
    runs = parse_nccl(healthy + degraded.read_text(), "both.log")
    assert [(r.avg_busbw_gbs, r.status, len(r.rows)) for r in runs] == [
        (21.4033, "ok", 3),
        (2.82151, "ok", 3),
    ]
    assert [r.rows[0].out_of_place.time_us for r in runs] == [27211.0, 191408.0]


def test_collective_from_the_file_name_only_as_a_last_resort() -> None:
    text = (LOGS / "superbench-2021-old-format-1node-8xA100-allgather-validation0.txt").read_text()
    assert parse_nccl(text, "run-7.log")[0].collective == "unknown"
    assert parse_nccl(text, "logs/all_gather_perf.out")[0].collective == "all_gather"
    named = "# Collective test starting: alltoall_perf\n" + text
    assert parse_nccl(named, "allgather.log")[0].collective == "alltoall"


def test_not_an_nccl_log() -> None:
    text = (DCGM / "dcgm-4.4.1-diag-r2-text-8xB200-slurm-pcie-fail.txt").read_text()
    with pytest.raises(IngestFormatError, match="not nccl-tests output"):
        parse_nccl(text, "dcgm.txt")
    with pytest.raises(IngestFormatError):
        parse_nccl("", "empty.txt")


@settings(max_examples=200, deadline=None)
@given(name=st.sampled_from(sorted(EXPECTED)), cut=st.floats(0, 1), drop=st.integers(0, 40))
def test_any_cut_of_a_real_log_reads_without_a_traceback(name: str, cut: float, drop: int) -> None:
    """Logs cut anywhere, or with a line missing, give runs or a format error, nothing else."""
    lines = (LOGS / name).read_text().splitlines(keepends=True)
    del lines[drop : drop + 1]
    text = "".join(lines)
    try:
        runs = parse_nccl(text[: int(len(text) * cut)], name)
    except IngestFormatError:
        return
    assert all(run.status in ("ok", "failed", "truncated") for run in runs)
