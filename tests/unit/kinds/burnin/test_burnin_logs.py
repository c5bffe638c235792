"""Burn-in logs judged GPU by GPU at collect (issue #36, item 4): node + GPU in the verdict.

The DCGM lines are its format strings (NVIDIA/DCGM @ 72fa3fea, TargetedStress_wrapper.cpp
CheckGpuPerf and dcgm_errors.h); the begin line is the script's.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from packfactory import PackLog, packed, write_packed_logs
from sitefactory import catalog, parse
from trainerfactory import EXAMPLE, compiled, example_text, of_kind, without_packing

from nvcregen.collect.collector import collect
from nvcregen.collect.model import CollectOptions
from nvcregen.kinds.burnin.logs import read_burnin
from nvcregen.plan.model import TestUnit
from nvcregen.plan.resolve import plan
from nvcregen.results.logrecords import RunLog
from nvcregen.results.logruns import assemble_log_runs
from nvcregen.results.models import RunState
from nvcregen.results.nodes import judge_nodes

ROOT = Path(__file__).resolve().parents[4]
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
    figures: Mapping[int, str | None],
    node: str = "gpu-00",
    throttled: int | None = None,
    pod: str = "burn-x7k2p",
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
    begin = f"@@nvcregen-burnin begin node={node} pod={pod} start=2026-12-06T09:00:00Z\n"
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


def test_a_packed_collect_fails_the_node_whose_gpu_burned_slow(tmp_path: Path) -> None:
    """The shipped trainer site packed, on H20, with burn-in: node-b's GPU 5 slow in round 2."""
    text = (
        packed(example_text())
        .replace("model: H20-3e", "model: H20")
        .replace("[NVIDIA-H20-3e]", "[NVIDIA-H20]")
        .replace(STAGE, STAGE + "burn-in, ", 1)
        .replace("deadline: 16h, gpuHours: 260", "deadline: 24h, gpuHours: 400")
    )

    def burn(logs: list[PackLog]) -> None:
        for found in logs:
            for i, s in enumerate(found.sections):
                if s.test != "burn-in":  # the NCCL logs' ranks on the H20, as the site says
                    body = s.body.replace("NVIDIA H20-3e", "NVIDIA H20")
                else:
                    slow = s.node == "node-b" and s.round == 2
                    body = log({**EVERY, 5: "9000"} if slow else EVERY, s.node, pod=s.pod)
                found.sections[i] = replace(s, body=body)

    (tmp_path / "site.yaml").write_text(text)
    write_packed_logs(tmp_path / "saved", text, edit=burn)
    site = str(tmp_path / "site.yaml")
    options = CollectOptions(site, tmp_path / "r", ROOT, from_dir=tmp_path / "saved")
    outcome = collect(options)
    nodes = {n.node: n for n in outcome.verdicts.nodes}
    assert str(nodes["node-b"].status) == "failed"
    (reason,) = [r for r in nodes["node-b"].reasons if "burn-in" in r]
    assert "BurnInFailed" in reason and "node-b NVC768: GPU 5: 9000 GFLOPS" in reason
    assert not [r for r in nodes["node-a"].reasons if "burn-in" in r]  # its GPUs passed
    words = sorted(str(r.word) for r in outcome.verdicts.runs if r.test == "burn-in")
    assert words == ["fail"]  # the stage's burn-in run, over its rounds
