"""`dcgmi diag` outputs: DCGM 3.x JSON with noise and nulls, cut JSON, 3.x and 4.x tables."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nvcregen.ingest import DcgmRun, DcgmTest, IngestFormatError, parse_dcgm

ROOT = Path(__file__).resolve().parents[3]
LOGS = ROOT / "tests" / "fixtures" / "real-logs" / "dcgm"
JSON_31 = "dcgm-3.1.0-diag-json-with-warning-prefix-and-nulls.txt"
TEXT_338 = "dcgm-3.3.8-diag-r3-text-8xH100-gpu-memory-fail-cuinit.txt"
CUT_JSON = "dcgm-3.x-diag-r3-json-T400-all-skip-user-elided-TRUNCATED-excerpt.txt"
TEXT_423 = "dcgm-4.2.3-diag-text-4gpu-pcie-fail-internal-error.txt"
TEXT_441 = "dcgm-4.4.1-diag-r2-text-8xB200-slurm-pcie-fail.txt"


def only_run(name: str) -> DcgmRun:
    runs = parse_dcgm((LOGS / name).read_text(), name)
    assert len(runs) == 1
    return runs[0]


def test(run: DcgmRun, name: str) -> DcgmTest:
    return next(t for t in run.tests if t.name == name)


test.__test__ = False  # type: ignore[attr-defined]  # a helper, not a test


def results(run: DcgmRun) -> dict[str, str]:
    return {t.name: t.result for t in run.tests}


def test_every_real_output_is_covered() -> None:
    assert sorted(p.name for p in LOGS.glob("*.txt")) == sorted(
        [JSON_31, TEXT_338, CUT_JSON, TEXT_423, TEXT_441]
    )


def test_json_31_with_warning_prefix_and_nulls() -> None:
    run = only_run(JSON_31)
    assert (run.format, run.status, run.dcgm_version, run.level) == ("json", "ok", "3.1.0", None)
    assert len(run.tests) == 10  # the nine nulls between Deployment tests are skipped
    assert set(results(run).values()) == {"Pass"}
    denylist = test(run, "Denylist")
    assert denylist.category == "Deployment"
    assert [g.id for g in denylist.gpus] == list(range(8))  # from "0,1,2,3,4,5,6,7"
    software = test(run, "software")
    assert (software.category, [g.id for g in software.gpus]) == ("Custom", list(range(8)))


def test_text_338_gpu_memory_fails() -> None:
    run = only_run(TEXT_338)
    assert (run.format, run.status, run.dcgm_version, run.level) == ("text", "failed", "3.3.8", 3)
    assert results(run) == {
        "Denylist": "Pass",
        "NVML Library": "Pass",
        "CUDA Main Library": "Pass",
        "Permissions and OS Blocks": "Pass",
        "Persistence Mode": "Pass",
        "Environment Variables": "Pass",
        "Page Retirement/Row Remap": "Pass",
        "Graphics Processes": "Pass",
        "Inforom": "Pass",
        "PCIe": "Skip",
        "GPU Memory": "Fail",
        "Memory Bandwidth": "Skip",
        "EUD Test": "Skip",
    }
    memory = test(run, "GPU Memory")
    assert (memory.category, len(memory.errors)) == ("Hardware", 8)
    assert memory.errors[0] == (
        "GPU 0 Error using CUDA API cuInit Check DCGM and system logs for errors. Reset GPU. "
        "Restart DCGM. Rerun diagnostics. Unable to initialize CUDA library: 'system not yet "
        "initialized'. . Please check if a CUDA sample program can be run successfully on "
        "this host. Refer to https://github.com/nvidia/cuda-samples"
    )
    assert memory.errors[7].startswith("GPU 7 Error using CUDA API cuInit")
    info = test(run, "Persistence Mode").info
    assert info[0].startswith(
        'Persistence mode for GPU 0 is disabled. Enable persistence mode by running "nvidia-smi'
        ' -i <gpuId> -pm 1 " as root.,Persistence mode for GPU 1 is'
    )
    assert info[0].endswith("Persistence mode for GPU 4 is disabled. Enable pers")


def test_cut_json_is_salvaged_and_truncated() -> None:
    run = only_run(CUT_JSON)
    assert (run.format, run.status, run.dcgm_version) == ("json", "truncated", None)
    assert [(t.category, t.name, t.result) for t in run.tests] == [
        ("Integration", "PCIe", "Skip"),
        ("Hardware", "GPU Memory", "Skip"),
        ("Hardware", "Diagnostic", "Skip"),
        ("Hardware", "EUD Test", "Skip"),
        ("Stress", "Targeted Stress", "Skip"),
    ]
    assert all([(g.id, g.result) for g in t.gpus] == [(0, "Skip")] for t in run.tests)
    assert "dcgm_version" not in run.to_json()


def test_text_423_pcie_fails_while_gpus_pass_and_table_is_cut() -> None:
    run = only_run(TEXT_423)
    assert (run.status, run.dcgm_version) == ("failed", "4.2.3")
    assert results(run) == {"software": "Pass", "memory": "Pass", "pcie": "Fail"}
    pcie = test(run, "pcie")
    assert (pcie.category, [(g.id, g.result) for g in pcie.gpus]) == (
        "Integration",
        [(i, "Pass") for i in range(4)],
    )
    assert len(pcie.errors) == 4
    assert pcie.errors[0] == (
        "There was an internal error during the test: 'A child process (152) exited with "
        "non-zero status 1' Check DCGM and system logs for errors. Reset GPU. Restart DCGM. "
        "Rerun diagnostics."
    )
    assert run.errors == ("the table has no closing border: output cut short",)


def test_text_441_b200() -> None:
    run = only_run(TEXT_441)
    assert (run.status, run.dcgm_version, run.errors) == ("failed", "4.4.1", ())
    assert results(run) == {"software": "Pass", "memory": "Pass", "pcie": "Fail"}
    assert [len(t.gpus) for t in run.tests] == [8, 8, 8]
    assert (
        test(run, "pcie")
        .errors[0]
        .startswith(
            "There was an internal error during the test: 'Output of child process (11167) "
            "couldn't be parsed:"
        )
    )


def test_complete_text_table_that_passes_is_ok() -> None:
    text = (LOGS / TEXT_441).read_text().replace("| Fail ", "| Pass ")
    (run,) = parse_dcgm("$ dcgmi diag -r 2\n" + text, "ok.txt")
    assert (run.status, run.level, test(run, "pcie").result) == ("ok", 2, "Pass")


def test_text_3x_gpu_scopes() -> None:
    table = """+---------------------------+------------------------------------------------+
| Diagnostic                | Result                                         |
+===========================+================================================+
+-----  Hardware  ----------+------------------------------------------------+
| GPU Memory                | Pass - GPUs: 0, 1                              |
|                           | Fail - GPU: 2                                  |
+---------------------------+------------------------------------------------+
"""
    (run,) = parse_dcgm(table, "scoped.txt")
    memory = test(run, "GPU Memory")
    assert memory.result == "Fail"
    assert [(g.id, g.result) for g in memory.gpus] == [(0, "Pass"), (1, "Pass"), (2, "Fail")]


DCGM4_JSON = {
    "DCGM Diagnostic": {
        "test_categories": [
            {
                "category": "Hardware",
                "tests": [
                    {
                        "name": "memory",
                        "results": [
                            {
                                "entity_group": "GPU",
                                "entity_group_id": 1,
                                "entity_id": 0,
                                "status": "Pass",
                            },
                            {
                                "entity_group": "GPU",
                                "entity_group_id": 1,
                                "entity_id": 1,
                                "status": "Fail",
                                "warnings": [
                                    {
                                        "error_category": 1,
                                        "error_id": 83,
                                        "error_severity": 2,
                                        "warning": "Memory test failed on GPU 1",
                                    }
                                ],
                            },
                        ],
                        "test_summary": {"status": "Fail"},
                    }
                ],
            }
        ]
    },
    "metadata": {"version": "4.2.3", "Driver Version Detected": "570.148.08"},
}


def test_json_4x_from_its_schema() -> None:
    text = "$ dcgmi diag -r 4 -j\n" + json.dumps(DCGM4_JSON, indent=2)
    (run,) = parse_dcgm(text, "dcgm4.json")
    assert (run.status, run.dcgm_version, run.level) == ("failed", "4.2.3", 4)
    memory = test(run, "memory")
    assert [(g.id, g.result) for g in memory.gpus] == [(0, "Pass"), (1, "Fail")]
    assert memory.errors == ("Memory test failed on GPU 1",)


def test_json_4x_runtime_error() -> None:
    doc = {"DCGM Diagnostic": {"runtime_error": "Unable to connect to host engine"}}
    (run,) = parse_dcgm(json.dumps(doc), "err.json")
    assert (run.status, run.tests, run.errors) == (
        "failed",
        (),
        ("Unable to connect to host engine",),
    )


def test_not_dcgm_output() -> None:
    nccl = LOGS.parent / "nccl-tests" / "sendrecv-2node-2xA40-inplace-NA-TRUNCATED-excerpt.txt"
    with pytest.raises(IngestFormatError, match="not dcgmi diag output"):
        parse_dcgm(nccl.read_text(), "nccl.txt")
    with pytest.raises(IngestFormatError):
        parse_dcgm('{"hello": "world"}', "other.json")


@settings(max_examples=150, deadline=None)
@given(name=st.sampled_from([JSON_31, TEXT_338, CUT_JSON, TEXT_423, TEXT_441]), cut=st.floats(0, 1))
def test_any_cut_of_a_real_output_reads_without_a_traceback(name: str, cut: float) -> None:
    text = (LOGS / name).read_text()
    try:
        runs = parse_dcgm(text[: int(len(text) * cut)], name)
    except IngestFormatError:
        return
    assert all(run.status in ("ok", "failed", "truncated") for run in runs)
