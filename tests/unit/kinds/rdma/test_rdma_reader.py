"""perftest outputs (public samples, `tests/fixtures/captures/perftest/`) read with their figures.

Every figure asserted here is the sample's own; PROVENANCE.md names where each came from.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from nvcregen.cli import main
from nvcregen.ingest.limits import InputLimitError
from nvcregen.ingest.models import IngestFormatError
from nvcregen.kinds.rdma.reader import MB_SEC, json_unit, parse_perftest

ROOT = Path(__file__).resolve().parents[4]
SAMPLES = ROOT / "tests" / "fixtures" / "captures" / "perftest"
H200 = SAMPLES / "write-bw-gbits-h200-cuda-dmabuf.txt"
FAILED = SAMPLES / "write-bw-gbits-host-completion-error.txt"
SWEEP = SAMPLES / "write-bw-gbits-roce-100g-sweep.txt"
JSON = SAMPLES / "write-bw-mbsec-out-json.json"
EIGHT_MIB = 8 * 1024 * 1024


def run(*args: str | Path) -> Result:
    result = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    assert "Traceback" not in result.output
    return result


def test_h200_gpudirect_sample_device_gid_gpu_and_8mib_figure() -> None:
    (found,) = parse_perftest(H200.read_text(), "h200")
    assert (found.test, found.device, found.link_type) == (
        "RDMA_Write BW Test",
        "mlx5_3",
        "Ethernet",
    )
    assert (found.gid_index, found.qps, found.mtu) == (3, 1, 4096)
    assert found.local_gid == "00:00:00:00:00:00:00:00:00:00:255:255:10:00:04:07"
    assert found.remote_gid == "00:00:00:00:00:00:00:00:00:00:255:255:10:00:04:08"
    assert found.gpu == "NVIDIA H200"
    assert (found.unit, found.status, found.errors) == ("Gb/sec", "ok", ())
    assert len(found.rows) == 23 and found.rows[0].size_bytes == 2
    row = found.at(EIGHT_MIB)
    assert row is not None
    assert (row.iterations, row.peak_gbps, row.average_gbps) == (5000, 140.55, 140.40)
    assert row.msg_rate_mpps == 0.002092
    assert found.rows[0].peak_gbps == 0.057240  # the extra-precision row perftest prints


def test_completion_error_fails_the_run_with_its_lines() -> None:
    (found,) = parse_perftest(FAILED.read_text(), "failed")
    assert found.status == "failed"
    assert found.gpu == ""  # host memory: no CUDA device picked
    assert found.errors[0] == "line 40: Completion with error at client"
    assert found.errors[-1] == "line 43: Failed to complete run_iter_bw function successfully"
    assert found.rows[-1].size_bytes == 65536 and found.rows[-1].average_gbps == 381.41
    assert found.at(EIGHT_MIB) is None


def test_roce_sweep_sample() -> None:
    (found,) = parse_perftest(SWEEP.read_text(), "sweep")
    assert (found.device, found.gid_index, found.mtu, found.status) == ("mlx5_0", 5, 1024, "ok")
    row = found.at(EIGHT_MIB)
    assert row is not None and row.average_gbps == 92.39


def test_out_json_sample_unit_told_from_its_message_rate() -> None:
    (found,) = parse_perftest(JSON.read_text(), "json")
    assert (found.form, found.device, found.unit, found.status) == (
        "json",
        "mlx5_11",
        "MB/sec",
        "ok",
    )
    assert found.test == "RDMA Write BW Test" and found.gid_index == 1
    (row,) = found.rows
    assert row.size_bytes == 65536 and row.iterations == 5000
    assert row.average_gbps == pytest.approx(2229.27 * 1048576 * 8 / 1e9)
    assert row.peak_gbps == pytest.approx(5293.52 * MB_SEC)


def test_json_unit_boundaries() -> None:
    # 8 MiB at 0.002092 Mpps moves 17549.7 MB/s: 140.40 Gb/s fits Gb/sec, 16736.6 MB/sec fits MB/sec
    assert json_unit(EIGHT_MIB, 0.002092, 140.40) == "Gb/sec"
    assert json_unit(EIGHT_MIB, 0.002092, 140.40 * 125e6 / 1048576) == "MB/sec"
    moved = 0.002092 * 1e6 * EIGHT_MIB / 125e6  # in Gb/s
    assert json_unit(EIGHT_MIB, 0.002092, moved * 1.0199) == "Gb/sec"  # inside 2 %
    assert json_unit(EIGHT_MIB, 0.002092, moved * 1.0201) is None  # just outside
    assert json_unit(EIGHT_MIB, 0.0, 140.40) is None


def test_json_whose_unit_cannot_be_told_is_nvc831() -> None:
    doc = json.loads(JSON.read_text())
    doc["results"]["BW_average"] = 99.0
    with pytest.raises(InputLimitError) as caught:
        parse_perftest(json.dumps(doc), "odd.json")
    assert caught.value.code == "NVC831"


def test_json_nan_and_old_unquoted_form_refused() -> None:
    text = JSON.read_text().replace("2229.27", "NaN")
    with pytest.raises(InputLimitError) as caught:
        parse_perftest(text, "nan.json")
    assert caught.value.code == "NVC715"
    with pytest.raises(IngestFormatError, match="without quotes"):
        parse_perftest("{\ntest_info: {\ntest: RDMA_Write_BW_Test,\n}\n}\n", "old.json")


def test_mb_sec_text_converted_and_truncated_table() -> None:
    # the real H200 output as it prints without --report_gbits: the unit label decides
    text = H200.read_text().replace("[Gb/sec]", "[MB/sec]")
    (found,) = parse_perftest(text, "mb")
    row = found.at(EIGHT_MIB)
    assert found.unit == "MB/sec" and row is not None
    assert row.average_gbps == pytest.approx(140.40 * MB_SEC)
    cut = H200.read_text().split(" 8388608")[0]  # the output ends mid-table
    (short,) = parse_perftest(cut, "cut")
    assert short.status == "truncated" and short.at(EIGHT_MIB) is None


def test_hostile_row_refused_by_the_bounds() -> None:
    text = H200.read_text().replace("140.40", "1" * 31 + ".0")
    with pytest.raises(InputLimitError) as caught:
        parse_perftest(text, "long")
    assert caught.value.code == "NVC713"


def test_cli_reads_each_sample_and_refuses_other_text(tmp_path: Path) -> None:
    result = run("ingest", "perftest", H200, SWEEP, JSON, "--format", "json")
    assert result.exit_code == 0
    runs = json.loads(result.stdout)["runs"]
    assert [r["device"] for r in runs] == ["mlx5_3", "mlx5_0", "mlx5_11"]
    assert runs[0]["rows"][-1] == {"sizeBytes": EIGHT_MIB, "iterations": 5000, "peakGbps": 140.55,
                                   "averageGbps": 140.4, "msgRateMpps": 0.002092}  # fmt: skip
    assert run("ingest", "perftest", FAILED).exit_code == 1
    text = run("ingest", "perftest", H200).stdout
    assert "on mlx5_3 (Ethernet, GPU NVIDIA H200) ok; avg 140.40 Gb/s at 8388608 B" in text
    other = tmp_path / "nccl.log"
    other.write_text("# nThread 1 nGpus 1 minBytes 8\n")
    refused = run("ingest", "perftest", H200, other)
    assert refused.exit_code == 2
    assert "NVC700" in refused.output and "read 1 of 2 files" in refused.output
