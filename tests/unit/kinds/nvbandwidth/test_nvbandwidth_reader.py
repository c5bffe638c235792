"""nvbandwidth's output read back (issue #36, item 3): every real capture, with its figures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from nvcregen.cli import main
from nvcregen.core import codes
from nvcregen.ingest.limits import InputLimitError
from nvcregen.ingest.models import IngestFormatError
from nvcregen.kinds.nvbandwidth.files import ingest_nvbandwidth, model_bounds
from nvcregen.kinds.nvbandwidth.order import DEFAULT_ORDER, name_waived, parse_list
from nvcregen.kinds.nvbandwidth.reader import parse_nvbandwidth
from nvcregen.kinds.nvbandwidth.text import parse_text

CAPTURES = Path(__file__).resolve().parents[3] / "fixtures" / "captures" / "nvbandwidth"
D2D_WAIVED = [
    "device_to_device_memcpy_read_ce",
    "device_to_device_memcpy_write_ce",
    "device_to_device_bidirectional_memcpy_read_ce",
    "device_to_device_bidirectional_memcpy_write_ce",
    "all_to_one_write_ce",
    "all_to_one_read_ce",
    "one_to_all_write_ce",
    "one_to_all_read_ce",
    "device_to_device_memcpy_read_sm",
    "device_to_device_memcpy_write_sm",
    "device_to_device_bidirectional_memcpy_read_sm",
    "device_to_device_bidirectional_memcpy_write_sm",
    "all_to_one_write_sm",
    "all_to_one_read_sm",
    "one_to_all_write_sm",
    "one_to_all_read_sm",
]

# A two-GPU run in the layout nvbandwidth v0.8 prints (the captures hold one GPU only).
TWO_GPUS = """\
nvbandwidth Version: v0.8
Built from Git version: v0.8

CUDA Runtime Version: 12080
CUDA Driver Version: 12080
Driver Version: 570.124.06

node-a
Device 0: NVIDIA H100 80GB HBM3 (00000000:18:00)
Device 1: NVIDIA H100 80GB HBM3 (00000000:2a:00)

Running host_to_device_memcpy_ce.
memcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)
           0         1
 0     55.30     47.00

SUM host_to_device_memcpy_ce 102.30

Running device_to_device_memcpy_read_ce.
memcpy CE GPU(row) <- GPU(column) bandwidth (GB/s)
           0         1
 0       N/A    389.09
 1    700.00       N/A

SUM device_to_device_memcpy_read_ce 1089.09

Waived:
"""


def read(name: str) -> str:
    return (CAPTURES / name).read_text()


def run_of(name: str):  # type: ignore[no-untyped-def]
    return parse_nvbandwidth(read(name), name)


def sums(name: str) -> dict[str, float | None]:
    return {t.name or "": t.sum for t in run_of(name).testcases if t.status == "passed"}


@pytest.mark.parametrize(
    ("name", "version", "host", "bus", "tests", "cuda_driver"),
    [
        ("v0.4-h100-sxm.txt", "v0.4", None, None, 30, 13000),
        ("v0.7-h100-sxm.txt", "v0.7", None, "00000000:00:06", 35, 13000),
        ("v0.8-h100-sxm.txt", "v0.8", "vm", "00000000:00:06", 35, 13000),
        ("v0.8-h100-sxm.json", "v0.8", "vm", "00000000:00:06", 35, None),
    ],
)
def test_each_capture_gives_its_version_device_and_testcases(
    name: str, version: str, host: str | None, bus: str | None, tests: int, cuda_driver: int | None
) -> None:
    run = run_of(name)
    assert (run.version, run.git_version, run.host) == (version, version, host)
    assert (run.cuda_runtime, run.cuda_driver, run.driver) == (13000, cuda_driver, "580.159.04")
    assert [(d.index, d.name, d.bus_id) for d in run.devices] == [(0, "NVIDIA H100 80GB HBM3", bus)]
    assert len(run.testcases) == tests
    assert run.form == ("json" if name.endswith(".json") else "text")
    assert not run.truncated


@pytest.mark.parametrize(
    "name", ["v0.4-h100-sxm.txt", "v0.7-h100-sxm.txt", "v0.8-h100-sxm.txt", "v0.8-h100-sxm.json"]
)
def test_every_waived_testcase_is_named_by_order_or_by_json(name: str) -> None:
    waived = [t.name for t in run_of(name).testcases if t.status == "waived"]
    latency = [] if name.startswith("v0.4") else ["device_to_device_latency_sm"]
    assert waived == D2D_WAIVED + latency


def test_v07_and_v08_text_print_waived_without_a_name() -> None:
    raw = parse_text(read("v0.8-h100-sxm.txt"), "x")
    assert [t.name for t in raw.testcases if t.status == "waived"] == [None] * 17
    assert [t.line for t in raw.testcases if t.status == "waived"][:2] == [39, 40]


def test_the_text_figures_are_the_captures() -> None:
    assert sums("v0.8-h100-sxm.txt") | {} == {
        "host_to_device_memcpy_ce": 55.30,
        "device_to_host_memcpy_ce": 55.20,
        "host_to_device_bidirectional_memcpy_ce": 46.70,
        "device_to_host_bidirectional_memcpy_ce": 51.38,
        "all_to_host_memcpy_ce": 55.21,
        "all_to_host_bidirectional_memcpy_ce": 51.43,
        "host_to_all_memcpy_ce": 55.32,
        "host_to_all_bidirectional_memcpy_ce": 47.20,
        "host_to_device_memcpy_sm": 51.24,
        "device_to_host_memcpy_sm": 52.44,
        "host_to_device_bidirectional_memcpy_sm": 42.40,
        "device_to_host_bidirectional_memcpy_sm": 42.39,
        "all_to_host_memcpy_sm": 52.48,
        "all_to_host_bidirectional_memcpy_sm": 42.44,
        "host_to_all_memcpy_sm": 51.19,
        "host_to_all_bidirectional_memcpy_sm": 42.41,
        "host_device_latency_sm": 1189.17,
        "device_local_copy": 1491.31,
    }
    v04 = sums("v0.4-h100-sxm.txt")
    assert (v04["host_to_device_memcpy_ce"], v04["all_to_host_bidirectional_memcpy_sm"]) == (
        55.25,
        30.06,
    )
    assert "device_local_copy" not in v04
    v07 = sums("v0.7-h100-sxm.txt")
    assert (v07["host_to_device_memcpy_ce"], v07["device_local_copy"]) == (55.28, 1488.47)


def test_each_matrix_and_unit_reads_as_printed() -> None:
    run = run_of("v0.4-h100-sxm.txt")
    h2d = run.named("host_to_device_memcpy_ce")
    assert h2d is not None and h2d.matrix is not None
    assert (h2d.matrix.rows, h2d.matrix.columns, h2d.matrix.cells) == ((0,), (0,), ((55.25,),))
    assert h2d.description == "memcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)"
    latency = run_of("v0.8-h100-sxm.txt").named("host_device_latency_sm")
    assert latency is not None and latency.unit == "ns"


def test_the_json_figures_are_the_captures() -> None:
    run = run_of("v0.8-h100-sxm.json")
    h2d = run.named("host_to_device_memcpy_ce")
    assert h2d is not None and h2d.matrix is not None
    assert h2d.matrix.cells == ((55.1623,),)
    assert h2d.sum == 55.162339003000007
    local = run.named("device_local_copy")
    assert local is not None and local.sum == 1490.0146733730001


def test_the_list_outputs_are_the_default_orders() -> None:
    assert parse_list(read("v0.4-list.txt")) == DEFAULT_ORDER["v0.4"]
    assert parse_list(read("v0.7-list.txt")) == DEFAULT_ORDER["v0.7"]
    assert parse_list(read("v0.8-list.txt")) == DEFAULT_ORDER["v0.8"]
    assert (len(DEFAULT_ORDER["v0.4"]), len(DEFAULT_ORDER["v0.8"])) == (30, 35)
    with pytest.raises(IngestFormatError, match="not an `nvbandwidth -l` list"):
        parse_list(read("v0.8-h100-sxm.txt"))


def test_a_two_gpu_matrix_keeps_na_cells_and_names_each_pair() -> None:
    run = parse_nvbandwidth(
        TWO_GPUS,
        "two",
        order=[
            "host_to_device_memcpy_ce",
            "device_to_device_memcpy_read_ce",
            "device_to_device_memcpy_write_ce",
        ],
    )
    d2d = run.named("device_to_device_memcpy_read_ce")
    assert d2d is not None and d2d.matrix is not None
    assert d2d.matrix.cells == ((None, 389.09), (700.0, None))
    assert list(d2d.matrix.pairs()) == [(0, 1, 389.09), (1, 0, 700.0)]
    assert d2d.sum == 1089.09
    assert run.host == "node-a"
    assert [t.name for t in run.testcases] == [
        "host_to_device_memcpy_ce",
        "device_to_device_memcpy_read_ce",
        "device_to_device_memcpy_write_ce",
    ]


def test_verdicts_per_gpu_and_per_pair_against_floor_and_ceiling() -> None:
    bounds = model_bounds("H100")
    assert bounds is not None
    from nvcregen.kinds.nvbandwidth.judge import judge

    run = parse_nvbandwidth(TWO_GPUS, "two")
    verdict = judge(run, bounds.floor, bounds.ceilings, bounds.asked)
    found = {(c.testcase, c.where): (c.value, c.outcome) for c in verdict.cells}
    assert found == {
        ("host_to_device_memcpy_ce", "GPU 0"): (55.3, "passed"),
        ("host_to_device_memcpy_ce", "GPU 1"): (47.0, "failed"),  # under 48 GB/s
        ("device_to_device_memcpy_read_ce", "GPU 0 <- GPU 1"): (389.09, "passed"),
        ("device_to_device_memcpy_read_ce", "GPU 1 <- GPU 0"): (700.0, "impossible"),  # > 450
    }
    assert verdict.problems == (
        "device_to_host_memcpy_ce: asked for and not in the output",
        "device_to_device_memcpy_write_ce: asked for and not in the output",
    )
    assert not verdict.passed


def test_a_figure_exactly_at_the_floor_or_ceiling_passes() -> None:
    from nvcregen.kinds.nvbandwidth.judge import judge

    bounds = model_bounds("H100")
    assert bounds is not None
    text = TWO_GPUS.replace("55.30     47.00", "48.00     63.00").replace("700.00", "450.00")
    verdict = judge(parse_nvbandwidth(text, "t"), bounds.floor, bounds.ceilings)
    assert {c.outcome for c in verdict.cells} == {"passed"}
    lower = text.replace("48.00     63.00", "47.99     63.01")
    outcomes = [
        c.outcome for c in judge(parse_nvbandwidth(lower, "t"), bounds.floor, bounds.ceilings).cells
    ][:2]
    assert outcomes == ["failed", "impossible"]


def test_a_waived_testcase_on_two_gpus_is_a_problem_and_on_one_is_not() -> None:
    from nvcregen.kinds.nvbandwidth.judge import judge

    order = [
        "host_to_device_memcpy_ce",
        "device_to_device_memcpy_read_ce",
        "device_to_device_memcpy_write_ce",
    ]
    run = parse_nvbandwidth(TWO_GPUS, "t", order)
    asked = ["device_to_device_memcpy_write_ce"]
    assert judge(run, None, None, asked).problems == (
        "device_to_device_memcpy_write_ce: waived on 2 GPUs (are they no peers?)",
    )
    one = run_of("v0.8-h100-sxm.txt")
    assert judge(one, None, None, ["device_to_device_memcpy_read_ce"]).problems == ()


def test_unnamed_waived_lines_are_named_only_when_the_order_fits() -> None:
    raw = parse_text(TWO_GPUS, "t")
    assert (
        name_waived(raw, ["host_to_device_memcpy_ce", "device_to_device_memcpy_read_ce", "a", "b"])
        .testcases[-1]
        .name
        is None
    )  # two names, one line
    assert name_waived(raw, ["x", "y"]).testcases[-1].name is None  # names it never ran
    named = name_waived(raw, ["host_to_device_memcpy_ce", "device_to_device_memcpy_read_ce", "z"])
    assert named.testcases[-1].name == "z"


def test_a_log_with_nvcregens_lines_around_the_json_reads() -> None:
    text = (
        "@@nvcregen-nvbandwidth begin node=node-a pod=p-1 start=2026-12-06T09:00:00Z\n"
        + read("v0.8-h100-sxm.json")
        + "nvcregen: nvbandwidth exit=0 seconds=21\n"
    )
    run = parse_nvbandwidth(text, "log")
    assert (run.form, run.version, len(run.testcases)) == ("json", "v0.8", 35)


def test_a_run_cut_inside_a_testcase_is_truncated() -> None:
    text = read("v0.8-h100-sxm.txt")
    cut = text[: text.index("SUM device_to_host_memcpy_ce")]
    run = parse_nvbandwidth(cut, "cut")
    assert run.truncated
    assert [t.status for t in run.testcases] == ["passed", "truncated"]


@pytest.mark.parametrize(
    ("text", "code", "message"),
    [
        ("nccl-tests\n#  Rank  0 Group  0 Pid\n", None, "neither nvbandwidth's text"),
        (TWO_GPUS + "nvbandwidth Version: v0.8\n", None, "a second nvbandwidth run"),
        (TWO_GPUS.replace(" 1    700.00       N/A", " 1    700.00"), None, "1 cells under 2"),
        (TWO_GPUS.replace("389.09", "3" * 31 + ".0"), codes.NVC713.code, "32 digits, more than 30"),
        (TWO_GPUS.replace("389.09", "inf"), codes.NVC715.code, "not a finite number"),
        (TWO_GPUS.replace("389.09", "fast"), None, "'fast' is no figure"),
        (
            TWO_GPUS.replace(
                "SUM host_to_device_memcpy_ce 102.30", "SUM host_to_device_memcpy_ce [["
            ),
            None,
            "line 17: a SUM is '\\[\\[', no number",
        ),  # found by fuzzing
        ('{"nvbandwidth": ' * 3000 + "1", codes.NVC714.code, "nested too deeply"),
        ('{"other": 1}', None, "without `nvbandwidth`"),
        (
            '{"nvbandwidth": {"testcases": [{"name": "x", "status": "Failed"}]}}',
            None,
            "status 'Failed'",
        ),
        (
            '{"nvbandwidth": {"testcases": [{"name": "x", "status": "Passed",'
            ' "bandwidth_description": "d (GB/s)", "sum": 1e999, "bandwidth_matrix": [["1"]]}]}}',
            codes.NVC715.code,
            "not a finite number",
        ),
    ],
)
def test_other_or_hostile_text_is_refused_with_a_reason(
    text: str, code: str | None, message: str
) -> None:
    with pytest.raises(IngestFormatError, match=message) as caught:
        parse_nvbandwidth(text, "bad")
    if code is not None:
        assert isinstance(caught.value, InputLimitError) and caught.value.code == code


def test_ingest_exits_0_for_the_captures_1_for_a_failed_verdict_2_for_other_text(
    tmp_path: Path,
) -> None:
    files = [str(CAPTURES / n) for n in ("v0.4-h100-sxm.txt", "v0.8-h100-sxm.json")]
    ok = CliRunner().invoke(main, ["ingest", "nvbandwidth", *files, "--model", "H100"])
    assert ok.exit_code == 0, ok.output
    assert "  verdict: passed" in ok.output
    slow = tmp_path / "slow.txt"
    slow.write_text(read("v0.8-h100-sxm.txt").replace(" 0     55.30", " 0     40.30"))
    failed = CliRunner().invoke(main, ["ingest", "nvbandwidth", str(slow), "--model", "H100"])
    assert failed.exit_code == 1
    assert (
        "    failed: host_to_device_memcpy_ce GPU 0 40.3 GB/s (>= 48, <= 63 GB/s)" in failed.output
    )
    other = tmp_path / "other.log"
    other.write_text("hello\n")
    refused = CliRunner().invoke(main, ["ingest", "nvbandwidth", str(other)])
    assert refused.exit_code == 2
    assert codes.NVC700.code in refused.output
    unknown = CliRunner().invoke(main, ["ingest", "nvbandwidth", files[0], "--model", "Z9"])
    assert unknown.exit_code == 2 and "no GPU model of the catalog" in unknown.output


def test_ingest_json_and_the_order_file(tmp_path: Path) -> None:
    order = tmp_path / "order.txt"
    order.write_text(read("v0.8-list.txt"))
    result = ingest_nvbandwidth([CAPTURES / "v0.7-h100-sxm.txt"], order)
    assert [t.name for t in result.runs[0].testcases if t.status == "waived"][-1] == (
        "device_to_device_latency_sm"
    )
    out = CliRunner().invoke(
        main, ["ingest", "nvbandwidth", str(CAPTURES / "v0.8-h100-sxm.txt"), "--format", "json"]
    )
    data = json.loads(out.output)
    first = data["runs"][0]["testcases"][0]
    assert first["matrix"] == {"rows": [0], "columns": [0], "cells": [[55.3]]}
    assert data["runs"][0]["verdict"] is None
    bad = CliRunner().invoke(main, ["ingest", "nccl", "x", "--model", "H100"])
    assert bad.exit_code == 2 and "--model is not for `ingest nccl`" in bad.output
