"""`nvcregen ingest nccl|dcgm`: the JSON contract, the text tables and the exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from nvcregen.cli import main

ROOT = Path(__file__).resolve().parent.parent
NCCL = ROOT / "tests" / "fixtures" / "real-logs" / "nccl-tests"
DCGM = ROOT / "tests" / "fixtures" / "real-logs" / "dcgm"
TWO_NODE = NCCL / "allreduce-2node-16xH100-oci-roce-nccl2.21.5-container.txt"
GIB_ROW = "1073741824     268435456     float     sum      -1   4511.2  238.02  446.28"
RUN_KEYS = {
    "file",
    "collective",
    "status",
    "errors",
    "warnings",
    "transports",
    "networks",
    "plugin_failures",
    "hosts",
    "ranks",
    "nccl_versions",
    "cuda_driver",
    "avg_busbw_gbs",
    "rows",
}
ROW_KEYS = {"size_bytes", "count", "type", "redop", "out_of_place", "in_place"}
HALF_KEYS = {"time_us", "algbw_gbs", "busbw_gbs", "wrong"}
SUMMARY_KEYS = {
    "collective",
    "type",
    "redop",
    "scope",
    "nodes",
    "transports",
    "size_bytes",
    "rounds",
    "median_busbw_gbs",
    "median_algbw_gbs",
    "median_time_us",
    "spread",
}


def run(*args: str | Path) -> Result:
    result = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    assert "Traceback" not in result.output
    return result


def as_json(result: Result) -> dict[str, list[dict[str, object]]]:
    doc: dict[str, list[dict[str, object]]] = json.loads(result.stdout)
    return doc


@pytest.fixture
def rounds(tmp_path: Path) -> list[Path]:
    """Three rounds of the real two-node all-reduce, 1 GiB bus bandwidth varied."""
    text = TWO_NODE.read_text()
    paths = []
    for i, busbw in enumerate(("363.76", "427.58", "452.28")):
        path = tmp_path / f"round-{i}.log"
        path.write_text(text.replace(GIB_ROW, GIB_ROW.replace("446.28", busbw)))
        paths.append(path)
    return paths


def test_json_contract_over_every_real_log() -> None:
    result = run("ingest", "nccl", *sorted(NCCL.glob("*.txt")), "--format", "json")
    assert result.exit_code == 1  # every run is printed; some failed
    doc = as_json(result)
    assert set(doc) == {"runs", "summary"}
    assert len(doc["runs"]) == 21
    assert all(set(r) == RUN_KEYS for r in doc["runs"])
    rows = [row for r in doc["runs"] for row in r["rows"]]  # type: ignore[attr-defined]
    assert all(set(row) == ROW_KEYS for row in rows)
    assert all(set(row["out_of_place"]) == set(row["in_place"]) == HALF_KEYS for row in rows)
    statuses = {r["status"] for r in doc["runs"]}
    assert statuses == {"ok", "failed", "truncated"}
    assert all(set(item) == SUMMARY_KEYS for item in doc["summary"])


def test_in_place_na_is_null_in_json() -> None:
    log = NCCL / "sendrecv-2node-2xA40-inplace-NA-TRUNCATED-excerpt.txt"
    (sendrecv,) = as_json(run("ingest", "nccl", log, "--format", "json"))["runs"]
    assert sendrecv["status"] == "truncated"
    first = sendrecv["rows"][0]  # type: ignore[index]
    assert first["in_place"] == {
        "time_us": 33.65,
        "algbw_gbs": 0.01,
        "busbw_gbs": 0.01,
        "wrong": None,
    }
    assert first["out_of_place"]["wrong"] == 0
    assert '"wrong": null' in run("ingest", "nccl", log, "--format", "json").stdout


def test_three_rounds_median_at_one_gib(rounds: list[Path]) -> None:
    result = run("ingest", "nccl", *rounds, "--at", "1GiB", "--format", "json")
    assert result.exit_code == 0
    doc = as_json(result)
    assert [r["transports"] for r in doc["runs"]] == [[], [], []]
    assert doc["summary"] == [
        {
            "collective": "all_reduce",
            "type": "float",
            "redop": "sum",
            "scope": "2 nodes",
            "nodes": ["inst-xxxxx-h100-ol89", "inst-yyyyy-h100-ol89"],
            "transports": [],
            "size_bytes": 1073741824,
            "rounds": 3,
            "median_busbw_gbs": 427.58,
            "median_algbw_gbs": 238.02,
            "median_time_us": 4511.2,
            "spread": (452.28 - 363.76) / 427.58,
        }
    ]


def test_text_output(rounds: list[Path]) -> None:
    result = run("ingest", "nccl", *rounds, "--at", "1GiB")
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[0].endswith(
        "round-0.log: all_reduce ok; transport not shown; avg busbw 458.452 GB/s"
    )
    assert lines[1].split()[:4] == ["size", "count", "type", "redop"]
    assert lines[2].split()[:7] == [
        "1GiB",
        "268435456",
        "float",
        "sum",
        "4511.2",
        "238.02",
        "363.76",
    ]
    at = lines.index("medians over rounds (out-of-place, GB/s)")
    assert lines[at + 1].split()[:6] == [
        "collective",
        "type",
        "redop",
        "scope",
        "transport",
        "size",
    ]
    assert lines[at + 2].split() == [
        "all_reduce",
        "float",
        "sum",
        "2",
        "nodes",
        "(inst-xxxxx-h100-ol89,",
        "inst-yyyyy-h100-ol89)",
        "not",
        "shown",
        "1GiB",
        "3",
        "427.58",
        "238.02",
        "4511.2",
        "20.7%",
    ]


def test_transport_in_text() -> None:
    log = NCCL / "gather-2node-2xA100-nccl2.16.5-debug-ib-roce-gdrdma-no-summary-perf-cliff.txt"
    first = run("ingest", "nccl", log).stdout.splitlines()[0]
    assert first.endswith(": gather truncated; transport IB (GDRDMA); avg busbw none")


def test_unreadable_and_unknown_files_exit_2_but_print_the_rest(tmp_path: Path) -> None:
    missing = tmp_path / "missing.log"
    dcgm = DCGM / "dcgm-4.4.1-diag-r2-text-8xB200-slurm-pcie-fail.txt"
    result = run("ingest", "nccl", TWO_NODE, missing, dcgm, "--format", "json")
    assert result.exit_code == 2
    assert [r["file"] for r in as_json(result)["runs"]] == [str(TWO_NODE)]
    assert f"{missing}:1:1: error[NVC700]: cannot read the file: No such file or directory" in (
        result.stderr
    )
    assert f"{dcgm}:1:1: error[NVC700]: not nccl-tests output" in result.stderr
    assert "read 1 of 3 files" in result.stderr


def test_folder_is_a_diagnostic_not_a_traceback(tmp_path: Path) -> None:
    result = run("ingest", "dcgm", tmp_path)
    assert result.exit_code == 2
    assert f"{tmp_path}:1:1: error[NVC700]: cannot read the file" in result.stderr


def test_bad_size_is_a_usage_error(rounds: list[Path]) -> None:
    result = run("ingest", "nccl", *rounds, "--at", "1G")
    assert result.exit_code == 2
    assert "--at" in result.stderr
    assert "unknown size unit 'G'" in result.stderr


def test_dcgm_json_contract() -> None:
    result = run("ingest", "dcgm", *sorted(DCGM.glob("*.txt")), "--format", "json")
    assert result.exit_code == 1  # read, and some diagnostics failed
    doc = as_json(result)
    assert set(doc) == {"runs"}
    by_name = {Path(str(r["file"])).name: r for r in doc["runs"]}
    text = by_name["dcgm-3.3.8-diag-r3-text-8xH100-gpu-memory-fail-cuinit.txt"]
    assert list(text) == ["file", "format", "dcgm_version", "level", "status", "errors", "tests"]
    assert (text["format"], text["dcgm_version"], text["level"], text["status"]) == (
        "text",
        "3.3.8",
        3,
        "failed",
    )
    cut = by_name["dcgm-3.x-diag-r3-json-T400-all-skip-user-elided-TRUNCATED-excerpt.txt"]
    assert (cut["format"], cut["status"], "dcgm_version" in cut) == ("json", "truncated", False)
    pcie = by_name["dcgm-4.4.1-diag-r2-text-8xB200-slurm-pcie-fail.txt"]["tests"][2]  # type: ignore[index]
    assert (pcie["name"], pcie["category"], pcie["result"]) == ("pcie", "Integration", "Fail")
    assert pcie["gpus"][0] == {"id": 0, "result": "Pass", "info": []}
    assert set(pcie) == {"name", "category", "result", "gpus", "errors", "info"}


def test_dcgm_text_output() -> None:
    log = DCGM / "dcgm-4.2.3-diag-text-4gpu-pcie-fail-internal-error.txt"
    lines = run("ingest", "dcgm", log).stdout.splitlines()
    assert lines[0].endswith(": failed (text, DCGM 4.2.3)")
    # every GPU passed, the test failed: the row says so rather than `Fail 4 x Pass`
    row = "Integration  pcie      Fail    no GPU of 4 failed: the test itself did"
    assert lines[4] == f"  {row}"
    assert lines[-2] == "  error: the table has no closing border: output cut short"


WRITTEN = ROOT / "tests" / "fixtures" / "written-logs"
FAILED_NCCL = NCCL / "allreduce-1node-2xRTX5090-test-nccl-failure-unhandled-cuda-error.txt"
CUT_NCCL = NCCL / "sendrecv-2node-2xA40-inplace-NA-TRUNCATED-excerpt.txt"
OK_DCGM = DCGM / "dcgm-3.1.0-diag-json-with-warning-prefix-and-nulls.txt"
FAILED_DCGM = DCGM / "dcgm-4.2.3-diag-text-4gpu-pcie-fail-internal-error.txt"
CUT_DCGM = DCGM / "dcgm-3.x-diag-r3-json-T400-all-skip-user-elided-TRUNCATED-excerpt.txt"
NODE = ROOT / "tests" / "fixtures" / "node"


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (("nccl", TWO_NODE), 0),  # ok
        (("nccl", CUT_NCCL), 0),  # truncated: marked, not failed
        (("nccl", FAILED_NCCL), 1),  # the run failed
        (("nccl", TWO_NODE, FAILED_NCCL), 1),  # one failed run of two
        (("nccl", CUT_NCCL, "--format", "json"), 0),
        (("nccl", FAILED_NCCL, "--format", "json"), 1),
        (("dcgm", OK_DCGM), 0),
        (("dcgm", CUT_DCGM), 0),
        (("dcgm", FAILED_DCGM), 1),
        (("dcgm", FAILED_DCGM, "--format", "json"), 1),
        (("nccl", FAILED_NCCL, Path("missing.log")), 2),  # unreadable wins over failed
        (("dcgm", FAILED_DCGM, TWO_NODE), 2),
        (("node", NODE / "h200-vm" / "nvidia-smi-q.xml"), 0),
        (("node", NODE / "faults" / "pcie-x8" / "nvidia-smi-q.xml"), 1),
        (("node", NODE / "faults" / "not-nvidia-smi" / "nvidia-smi.txt"), 2),
    ],
)
def test_every_ingest_kind_exits_as_the_readme_says(
    args: tuple[str | Path, ...], code: int
) -> None:
    """README: 0 nothing failed, 1 a run, a diagnostic or a node failed, 2 unreadable."""
    result = run("ingest", *args)
    assert result.exit_code == code, result.output
    assert bool(result.stdout) == (
        args[-1] != NODE / "faults" / "not-nvidia-smi" / "nvidia-smi.txt"
    )


def test_readme_states_the_ingest_exit_codes() -> None:
    readme = (ROOT / "README.md").read_text()
    row = next(line for line in readme.splitlines() if line.startswith("| `nvcregen ingest nccl"))
    assert row.endswith(
        "| 0 no run failed (a truncated run is marked, not failed), 1 an nccl-tests run or a"
        " DCGM diagnostic failed, 2 unreadable |"
    )
