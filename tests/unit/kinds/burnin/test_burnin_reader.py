"""`nvcregen ingest burnin` (issue #36, item 4): DCGM stress results read GPU by GPU.

The captures are DCGM's own published JSON (tests/fixtures/captures/burnin/PROVENANCE.md);
the targeted-stress and clocks-event lines of the written logs are DCGM's format strings
(NVIDIA/DCGM @ 72fa3fea: TargetedStress_wrapper.cpp CheckGpuPerf, dcgm_errors.h
DCGM_FR_STRESS_LEVEL_MSG and DCGM_FR_CLOCKS_EVENT_*_MSG, DcgmRecorder.cpp).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from nvcregen.cli import main
from nvcregen.ingest.models import IngestFormatError
from nvcregen.kinds.burnin.ingest import bounds_of
from nvcregen.kinds.burnin.judge import Bounds, judge
from nvcregen.kinds.burnin.reader import parse_burnin

ROOT = Path(__file__).resolve().parents[4]
CAPTURES = ROOT / "tests" / "fixtures" / "captures" / "burnin"
V13 = CAPTURES / "dcgm-1.3-json-4gpu-sm-stress-3-under-target.json"
PER_GPU = CAPTURES / "dcgm-per-gpu-json-4gpu-sm-stress-error-objects.json"
SKIPPED = (
    ROOT
    / "tests"
    / "fixtures"
    / "real-logs"
    / "dcgm"
    / "dcgm-3.x-diag-r3-json-T400-all-skip-user-elided-TRUNCATED-excerpt.txt"
)
REAL_LOGS = ROOT / "tests" / "fixtures" / "real-logs" / "dcgm"
P100 = Bounds("P100", 2850.0, 9300.0)  # DCGM's 3000 target at 0.95; P100 FP32 9.3 TFLOPS


def stress(*results: dict[str, object], version: str = "3.3.7") -> str:
    """A `dcgmi diag -r targeted_stress --json` document holding these results."""
    test = {"name": "targeted_stress", "results": list(results)}
    category = {"category": "Stress", "tests": [test]}
    doc = {"DCGM GPU Diagnostic": {"test_categories": [category], "version": version}}
    return "@@nvcregen-burnin begin node=gpu-07 pod=b-x start=2026-12-06T09:00:00Z\n" + (
        json.dumps(doc)
    )


def passed(gpu: int, gflops: str) -> dict[str, object]:
    return {
        "gpu_ids": str(gpu),
        "status": "PASS",
        "info": [f"GPU {gpu} relative stress level\t{gflops}"],
    }


def under(gpu: int, best: str, target: str = "29250.0") -> dict[str, object]:
    line = (
        f"Max stress level of {best} did not reach desired stress level of {target} for GPU {gpu}"
    )
    return {"gpu_ids": str(gpu), "status": "FAIL", "warnings": [{"warning": line, "error_id": 50}]}


def test_the_dcgm_13_capture_gives_every_gpu_its_figure() -> None:
    run = parse_burnin(V13.read_text(), "v13")
    assert (run.test, run.dcgm_version, run.status) == ("sm_stress", "1.3", "failed")
    assert [(g.gpu, g.gflops, g.basis) for g in run.gpus] == [
        (0, 2128.7, "best"),
        (1, 577.0, "average"),
        (2, 1096.5, "best"),
        (3, 1099.7, "best"),
    ]


def test_a_gpu_dcgm_passed_under_the_floor_fails() -> None:
    run = parse_burnin(PER_GPU.read_text(), "per-gpu")
    assert [(g.gpu, g.result) for g in run.gpus] == [
        (0, "Fail"),
        (1, "Pass"),
        (2, "Fail"),
        (3, "Fail"),
    ]
    verdict = judge(run, P100, 4)
    assert [g.outcome for g in verdict.gpus] == ["failed"] * 4 and verdict.evidence
    assert verdict.gpus[1].why == "NVC768: GPU 1: 577 GFLOPS (average), under the floor 2850 GFLOPS"


def test_skipped_stress_tests_are_no_evidence_never_a_pass() -> None:
    run = parse_burnin(SKIPPED.read_text(), "t400")
    verdict = judge(run, P100)
    assert run.gpus and all(g.gflops is None for g in run.gpus)
    assert not verdict.passed and not verdict.evidence
    assert verdict.gpus[0].why == "NVC767: GPU 0: no GFLOPS figure (DCGM: Skip): not evidence"


def test_targeted_stress_figures_floor_and_peak_boundaries() -> None:
    run = parse_burnin(
        stress(passed(0, "27787.5"), under(1, "27787.4"), passed(2, "67000"), passed(3, "67000.1")),
        "x",
    )
    verdict = judge(run, Bounds("H100", 27787.5, 67000.0), 4)
    assert [g.outcome for g in verdict.gpus] == ["passed", "failed", "passed", "impossible"]
    assert (
        verdict.gpus[1].why
        == "NVC768: GPU 1: 27787.4 GFLOPS (best), under the floor 27787.5 GFLOPS"
    )
    assert verdict.gpus[3].why == (
        "NVC765: GPU 3: 67000.1 GFLOPS is above the H100's fp32 peak 67000 GFLOPS: not evidence"
    )


def test_a_throttled_or_erroring_gpu_fails_at_any_figure() -> None:
    hw = (
        "Clocks event for GPU 2 because of clocks event starting 41.0 seconds into the test."
        " clocks_event_reason_hw_slowdown: either the temperature is too high or there is a"
        " power supply problem (the power brake assertion has been tripped)."
    )
    thermal = "Detected clocks event due to thermal violation in GPU 3."
    cuda = "GPU 1 Error using CUDA API cudaStreamCreate"
    results = [
        passed(0, "29300"),
        {**passed(1, "29300"), "status": "FAIL", "warnings": [cuda]},
        {**passed(2, "29300"), "status": "FAIL", "warnings": [{"warning": hw, "error_id": 43}]},
        {**passed(3, "29300"), "status": "FAIL", "warnings": [thermal]},
    ]
    verdict = judge(parse_burnin(stress(*results), "x"), Bounds("H100", 27787.5, 67000.0), 4)
    assert [g.outcome for g in verdict.gpus] == ["passed", "failed", "failed", "failed"]
    assert verdict.gpus[1].why == f"GPU 1: {cuda}"
    assert verdict.gpus[2].why == f"NVC766: GPU 2: {hw}"
    assert verdict.gpus[3].why == f"NVC766: GPU 3: {thermal}"
    old = "Clocks are being throttled for GPU 0 because of clock throttling starting 3.0 seconds"
    throttled = parse_burnin(stress({**passed(0, "29300"), "warnings": [old]}), "x")
    assert throttled.gpus[0].throttled == (old,)


def test_a_log_without_every_gpus_figure_is_no_evidence_unless_one_failed() -> None:
    h100 = Bounds("H100", 27787.5, 67000.0)
    partial = judge(parse_burnin(stress(passed(0, "29300"), passed(1, "29300")), "x"), h100, 4)
    assert not partial.passed and not partial.evidence
    assert [g.why for g in partial.gpus[2:]] == [
        "NVC767: GPU 2: DCGM names it nowhere",
        "NVC767: GPU 3: DCGM names it nowhere",
    ]
    failing = judge(parse_burnin(stress(passed(0, "29300"), under(1, "100.0")), "x"), h100, 4)
    assert failing.evidence and not failing.passed
    whole = judge(parse_burnin(stress(passed(0, "29300"), passed(1, "29300")), "x"), h100, 2)
    assert whole.passed and whole.evidence


def test_another_test_dcgm_failed_in_the_same_run_fails_it() -> None:
    doc = json.loads(stress(passed(0, "29300")).split("\n", 1)[1])
    persistence = {
        "name": "Persistence Mode",
        "results": [
            {
                "gpu_ids": "0",
                "status": "FAIL",
                "warnings": ["Persistence mode for GPU 0 is disabled."],
            }
        ],
    }
    doc["DCGM GPU Diagnostic"]["test_categories"].insert(
        0, {"category": "Deployment", "tests": [persistence]}
    )
    run = parse_burnin(json.dumps(doc), "x")
    assert run.errors == ("Persistence Mode failed: Persistence mode for GPU 0 is disabled.",)
    verdict = judge(run, Bounds("H100", 27787.5, 67000.0), 1)
    assert verdict.gpus[0].outcome == "passed" and not verdict.passed


def test_a_gpu_outside_the_nodes_count_and_a_run_level_error_fail_the_run() -> None:
    h100 = Bounds("H100", 27787.5, 67000.0)
    extra = judge(parse_burnin(stress(passed(0, "29300"), passed(9, "29300")), "x"), h100, 1)
    assert extra.problems == ("GPU 9: not one of the node's 1 GPUs",) and not extra.passed
    lone = {**passed(0, "29300"), "warnings": ["The diagnostic was stopped by a signal"]}
    stopped = judge(parse_burnin(stress(lone), "x"), h100, 1)
    assert stopped.problems == ("DCGM: The diagnostic was stopped by a signal",)


def test_a_pass_average_wins_over_a_best_and_hostile_numbers_are_not_figures() -> None:
    both = {**under(0, "1.0"), "info": ["GPU 0 relative stress level\t29300"]}
    assert parse_burnin(stress(both), "x").gpus[0].gflops == 29300.0
    huge = passed(0, "9" * 40)  # more digits than any figure: not read as one
    assert parse_burnin(stress(huge), "x").gpus[0].gflops is None
    long_line = passed(0, "29300")
    long_line["info"] = ["x" * 70_000 + " GPU 0 relative stress level\t1"]
    assert parse_burnin(stress(long_line), "x").gpus[0].gflops is None  # past MAX_LINE


def test_other_text_and_dcgm_output_without_a_stress_test_are_refused() -> None:
    with pytest.raises(IngestFormatError, match="not dcgmi diag output"):
        parse_burnin("just some text\n", "x")
    passing = REAL_LOGS / "dcgm-3.1.0-diag-json-with-warning-prefix-and-nulls.txt"
    with pytest.raises(IngestFormatError, match="without a targeted_stress or sm_stress result"):
        parse_burnin(passing.read_text(), "x")  # a DCGM run that failed nothing and ran no load
    gave_up = "Error: Unable to complete diagnostic for entities 0,1. Return: (-30) : DCGM GPU\n"
    run = parse_burnin(gave_up, "x")
    assert (run.test, run.status, run.gpus) == ("", "failed", ())
    assert judge(run, Bounds("H100", 1, 2), 2).problems[-1] == "DCGM ran no stress test"


def test_the_catalog_gives_bounds_per_model() -> None:
    h20 = bounds_of("h20")  # as the catalog's hardware names it, case ignored
    assert h20 == Bounds("H20", 0.95 * 20850, 44000, "fp32")
    assert bounds_of("A100") is None  # a model of the catalog without figures
    assert bounds_of("Z9") is None  # no model of the catalog


def test_cli_exit_codes(tmp_path: Path) -> None:
    runner = CliRunner()
    good = tmp_path / "good.json"
    good.write_text(stress(passed(0, "29300"), passed(1, "29300")))
    ok = runner.invoke(main, ["ingest", "burnin", str(good), "--model", "H100"])
    assert ok.exit_code == 0, ok.output
    assert "GPU 0: 29300 GFLOPS (average), DCGM Pass passed" in ok.output
    failed = runner.invoke(main, ["ingest", "burnin", str(V13), "--model", "H100"])
    assert failed.exit_code == 1 and "verdict: failed" in failed.output
    read_only = runner.invoke(main, ["ingest", "burnin", str(good), "--format", "json"])
    assert read_only.exit_code == 0
    assert json.loads(read_only.output)["runs"][0]["gpus"][1]["gflops"] == 29300.0
    other = tmp_path / "other.txt"
    other.write_text("# nvcregen\nnot a DCGM output\n")
    refused = runner.invoke(main, ["ingest", "burnin", str(other)])
    assert refused.exit_code == 2 and "error[NVC700]" in refused.output
    unknown = runner.invoke(main, ["ingest", "burnin", str(good), "--model", "A100"])
    assert unknown.exit_code == 2 and "no burn-in expectation" in unknown.output


def test_verdicts_name_the_uuid_the_script_printed_and_nothing_else() -> None:
    uuid = "GPU-8c1e3a7d-0000-4000-8000-000000000003"
    lines = (
        f"@@nvcregen-gpu index=3 uuid={uuid}\n"
        "2026-12-06T09:00:00.000000000Z @@nvcregen-gpu index=2 uuid=GPU-aa\n"  # kubectl's time
        "@@nvcregen-gpu index=3 uuid=GPU-bb\n"  # a second line for GPU 3: the first wins
        "@@nvcregen-gpu index=1 uuid=not-a-uuid; rm -rf /\n"  # no UUID: not read
        f"@@nvcregen-gpu index=0 uuid=GPU-{'a' * 65}\n"  # longer than any UUID: not read
    )
    run = parse_burnin(lines + stress(passed(0, "1"), passed(2, "1"), passed(3, "1")), "x")
    assert run.uuids == ((2, "GPU-aa"), (3, uuid))
    verdict = judge(run, Bounds("H100", 27787.5, 67000.0), 4)
    assert (
        verdict.gpus[3].why
        == f"NVC768: GPU 3 ({uuid}): 1 GFLOPS (average), under the floor 27787.5 GFLOPS"
    )
    assert verdict.gpus[1].why == "NVC767: GPU 1: DCGM names it nowhere"
    assert parse_burnin(lines + stress(passed(0, "1")), "x").to_json()["uuids"] == {
        "2": "GPU-aa",
        "3": uuid,
    }


def test_a_run_dcgm_stopped_before_its_load_is_a_failed_burn_in() -> None:
    """DCGM 3.3.8 `--run 3 --fail-early` on 8 H100s: GPU Memory failed (cuInit), no stress."""
    text = (REAL_LOGS / "dcgm-3.3.8-diag-r3-text-8xH100-gpu-memory-fail-cuinit.txt").read_text()
    run = parse_burnin(text, "x")
    assert (run.test, run.status, run.gpus) == ("", "failed", ())
    assert run.errors[0].startswith("GPU Memory failed: GPU 0 Error using CUDA API cuInit")
    verdict = judge(run, Bounds("H100", 27787.5, 67000.0), 8)
    assert verdict.evidence and not verdict.passed  # a failure, never no-data
    assert verdict.problems[-1] == "DCGM ran no stress test"
    pcie = (REAL_LOGS / "dcgm-4.2.3-diag-text-4gpu-pcie-fail-internal-error.txt").read_text()
    cut = parse_burnin(pcie, "y")  # cut short, and its PCIe test failed: failed, not cut
    assert cut.status == "failed" and cut.errors[1].startswith("pcie failed: There was an")


def test_cli_reads_a_stopped_run_as_failed_and_names_each_problem_once() -> None:
    stopped = REAL_LOGS / "dcgm-3.3.8-diag-r3-text-8xH100-gpu-memory-fail-cuinit.txt"
    judged = CliRunner().invoke(main, ["ingest", "burnin", str(stopped), "--model", "H100"])
    assert judged.exit_code == 1
    assert judged.output.count("GPU Memory failed: GPU 0 Error using CUDA API cuInit") == 1
    assert "  DCGM ran no stress test\n  verdict: failed\n" in judged.output
    read = CliRunner().invoke(main, ["ingest", "burnin", str(stopped)])
    assert read.exit_code == 1 and read.output.count("DCGM: GPU Memory failed") == 1


def test_ingest_finds_the_kind_reading_its_own_output_by_its_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`ingest burnin` is the burn-in package's `ingest.INGEST` (`ingest/kindingest.py`)."""
    from nvcregen.ingest import kindingest
    from nvcregen.kinds.burnin.ingest import INGEST

    assert kindingest.ingest_names()["burnin"] is INGEST is kindingest.ingest_of("burnin")
    assert kindingest.ingest_of("training") is None  # a kind that reads no output of its own
    good = tmp_path / "good.json"
    good.write_text(stress(passed(0, "29300")))
    runner = CliRunner()
    others = runner.invoke(main, ["ingest", "burnin", str(good), "--pool", "p"])
    assert others.exit_code == 2 and "--format markdown are not for it" in others.output
    monkeypatch.setattr(type(INGEST), "options", frozenset())
    no_model = runner.invoke(main, ["ingest", "burnin", str(good), "--model", "H100"])
    assert no_model.exit_code == 2 and "--model is not for `ingest burnin`" in no_model.output
    monkeypatch.setattr(kindingest, "ingest_of", lambda kind: None)
    gone = runner.invoke(main, ["ingest", "burnin", str(good)])  # no longer one of its kinds
    assert gone.exit_code == 2 and "Invalid value" in gone.output and "'burnin'" in gone.output
