"""Burn-in logs judged GPU by GPU at collect (issue #36, item 4): node + GPU in the verdict.

The DCGM lines are its format strings (NVIDIA/DCGM @ 72fa3fea, TargetedStress_wrapper.cpp
CheckGpuPerf and dcgm_errors.h); the begin line is the script's.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace

from sitefactory import catalog, parse
from trainerfactory import EXAMPLE, compiled, of_kind, without_packing

from nvcregen.plan.model import TestUnit
from nvcregen.plan.resolve import plan
from nvcregen.results.burninruns import read_burnin
from nvcregen.results.logrecords import RunLog
from nvcregen.results.logruns import assemble_log_runs
from nvcregen.results.models import RunState
from nvcregen.results.nodes import judge_nodes

STAGE = "      - name: single-node\n        scope: intra-node\n        tests: ["
TEXT = (
    without_packing(EXAMPLE.read_text())
    .replace("model: H20-3e", "model: H20")
    .replace("[NVIDIA-H20-3e]", "[NVIDIA-H20]")
    .replace(STAGE, STAGE + "burn-in, ", 1)
)
BASE = {"path": "logs/nvcre/x.log", "nodes": ("gpu-00",)}
FLOOR = 0.95 * 20850  # the H20's: 19807.5 GFLOPS


def burnin_unit() -> TestUnit:
    site, _ = parse(TEXT)
    return next(u for u in plan(site, catalog()) if u.test.name == "burn-in")


def log(
    figures: Mapping[int, str | None], node: str = "gpu-00", throttled: int | None = None
) -> str:
    """The script's begin line and DCGM's JSON: a figure a GPU (None: DCGM skipped it)."""
    results: list[dict[str, object]] = []
    for gpu, value in figures.items():
        if value is None:
            results.append({"gpu_ids": str(gpu), "status": "SKIP"})
            continue
        result: dict[str, object] = {
            "gpu_ids": str(gpu),
            "status": "PASS",
            "info": [f"GPU {gpu} relative stress level\t{value}"],
        }
        if gpu == throttled:
            line = f"Detected clocks event due to power violation in GPU {gpu}."
            result |= {"status": "FAIL", "warnings": [line]}
        results.append(result)
    doc = {
        "DCGM GPU Diagnostic": {
            "test_categories": [
                {"category": "Stress", "tests": [{"name": "targeted_stress", "results": results}]}
            ],
            "version": "3.3.7",
        }
    }
    begin = f"@@nvcregen-burnin begin node={node} pod=burn-x7k2p start=2026-12-06T09:00:00Z\n"
    return (
        begin + json.dumps(doc, indent=1) + "\nnvcregen: dcgmi diag --run targeted_stress exit=0\n"
    )


EVERY = dict.fromkeys(range(8), "20850")


def test_every_gpu_at_its_target_passes() -> None:
    record = read_burnin(log(EVERY), BASE, burnin_unit(), names_itself=True)
    assert (record.status, record.errors, record.hosts) == ("ok", (), ("gpu-00",))
    assert record.kind == "burnin" and record.versions == ("3.3.7",)


def test_a_gpu_under_the_floor_or_throttled_fails_its_node_by_name() -> None:
    figures = {**EVERY, 3: str(FLOOR - 0.5), 5: str(FLOOR)}
    record = read_burnin(log(figures, throttled=6), BASE, burnin_unit(), names_itself=True)
    assert record.status == "failed"
    assert record.errors == (
        "gpu-00 NVC768: GPU 3: 19807 GFLOPS (average), under the floor 19807.5 GFLOPS",
        "gpu-00 NVC766: GPU 6: Detected clocks event due to power violation in GPU 6.",
    )


def test_a_gpu_without_a_figure_is_no_evidence_and_a_figure_past_the_peak_fails() -> None:
    skipped = read_burnin(log({**EVERY, 7: None}), BASE, burnin_unit(), names_itself=True)
    assert skipped.status == "no-data"
    assert skipped.errors == ("gpu-00 NVC767: GPU 7: no GFLOPS figure (DCGM: Skip): not evidence",)
    seven = read_burnin(log(dict(list(EVERY.items())[:7])), BASE, burnin_unit(), names_itself=True)
    assert seven.status == "no-data"  # DCGM named only 7 of the node's 8 GPUs
    fast = read_burnin(log({**EVERY, 0: "44000.1"}), BASE, burnin_unit(), names_itself=True)
    assert fast.status == "failed" and fast.errors[0].startswith("gpu-00 NVC765: GPU 0: 44000.1")


def test_another_nodes_log_or_none_is_foreign_and_an_unjudged_model_no_data() -> None:
    other = read_burnin(log(EVERY, node="gpu-09"), BASE, burnin_unit(), names_itself=True)
    assert other.status == "foreign" and other.errors[0].startswith("NVC730: ")
    bare = log(EVERY).split("\n", 1)[1]
    assert read_burnin(bare, BASE, burnin_unit(), names_itself=True).status == "foreign"
    unit = burnin_unit()
    a100 = replace(
        unit,
        pool=replace(unit.pool, hardware=unit.pool.hardware.model_copy(update={"model": "A100"})),
    )
    record = read_burnin(log(EVERY), BASE, a100, names_itself=True)
    assert (record.status, record.errors) == (
        "no-data",
        ("no burn-in figures for A100 in the catalog",),
    )


def test_collect_fails_the_node_naming_its_gpu_and_the_verdict_holds_it() -> None:
    site, _ = parse(TEXT)
    units = plan(site, catalog())
    unit = next(u for u in units if u.test.name == "burn-in")
    node = (unit.pool.spec.nodes or [""])[0]
    jobs = of_kind(compiled(TEXT), "Job", "burn-in")
    (job,) = [j for j in jobs if j["metadata"]["name"].endswith("-r1-n0")]
    data = log({**EVERY, 4: "12000"}, node=node).encode()
    results = assemble_log_runs(
        site.metadata.name, [unit], 1, [RunLog("nvcre", job["metadata"]["name"], data)], []
    )
    (run,) = results.runs.runs
    assert run.state == RunState.FAILED
    (failed,) = [f for f in run.failed_nodes if f.name == node]
    assert failed.reason == "BurnInFailed"
    assert (
        f"{node} NVC768: GPU 4: 12000 GFLOPS (average), under the floor 19807.5" in failed.message
    )
    verdicts = judge_nodes(site, results.runs, {}, 1)
    (verdict,) = [v for v in verdicts if v.node == node]
    assert verdict.status == "failed" and "GPU 4: 12000 GFLOPS" in verdict.reasons[0]
