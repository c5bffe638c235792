"""Issue #21: evidence bound to the plan, numbers under the links' ceiling, sweep shapes.

The trainer-mode example site plans H20-3e nodes `node-a` and `node-b`; the saved logs of
`trainerlogs` are the real OCI capture made to show those nodes. Each test puts one log
nobody here wrote (or a changed one) in place of a planned run's and reads the verdicts.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from trainerlogs import (
    IB_LINES,
    OCI,
    REAL,
    default_log,
    is_two_node_all_reduce,
    labels,
    write_saved_logs,
)

from nvcregen.cli import main
from nvcregen.collect.collector import collect
from nvcregen.collect.model import CollectOptions, CollectOutcome
from nvcregen.core.errors import ExitCode
from nvcregen.results.binding import MARGIN

ROOT = Path(__file__).resolve().parents[3]
SITE = ROOT / "tests" / "fixtures" / "perrun" / "h20-3e-trainer.yaml"
SPARK = REAL / "nccl-tests" / "allgather-2node-2xGB10-dgxspark-v2.18.3-qsfp-healthy-21GBps.txt"
COLLAPSE = (
    REAL / "nccl-tests" / "alltoall-2node-16gpu-v2.18.3-nccl2.30.3-spcx-inplace-NA-bw-collapse.txt"
)
Obj = dict[str, Any]


def run(folder: Path, out: Path, site: Path = SITE) -> CollectOutcome:
    return collect(CollectOptions(str(site), out, ROOT, from_dir=folder))


def codes(outcome: CollectOutcome, stage: str, test: str) -> list[str]:
    return [f.code for f in outcome.verdicts.findings if (f.stage, f.test) == (stage, test)]


def threshold(outcome: CollectOutcome, test: str, scope: str) -> dict[str, Any]:
    data = json.loads((outcome.archive.path / "verdicts.json").read_text())
    (found,) = [v for v in data["thresholds"] if (v["test"], v["scope"]) == (test, scope)]
    return found  # type: ignore[no-any-return]


def is_run(verdict: Any, stage: str, test: str) -> bool:
    return bool((verdict.stage, verdict.test) == (stage, test))


def is_test(obj: Obj, stage: str, test: str) -> bool:
    found = labels(obj)
    return obj["kind"] != "Job" and (found["nvcregen.io/stage"], found["nvcregen.io/test"]) == (
        stage,
        test,
    )


def test_the_planned_logs_bind_and_pass(tmp_path: Path) -> None:
    outcome = run(write_saved_logs(tmp_path / "saved"), tmp_path / "results")
    assert outcome.exit_code is ExitCode.OK
    assert [f for f in outcome.verdicts.findings if f.word != "pass"] == []
    provenance = json.loads((outcome.archive.path / "provenance.json").read_text())
    assert provenance["gpu_models"] == ["NVIDIA H20-3e"]  # who produced it, as the logs say
    report = tmp_path / "report"
    CliRunner().invoke(main, ["report", str(outcome.archive.path), "--out", str(report)])
    assert "- GPUs (device lists): NVIDIA H20-3e" in (report / "summary.md").read_text()


@pytest.mark.slow
def test_foreign_hosts_and_h100s_never_pass_and_are_named_first(tmp_path: Path) -> None:
    def foreign(obj: Obj) -> str:  # the untouched OCI capture: two H100 hosts at OCI
        return IB_LINES + OCI.read_text() if is_two_node_all_reduce(obj) else default_log(obj)

    outcome = run(write_saved_logs(tmp_path / "saved", foreign), tmp_path / "results")
    assert outcome.exit_code is ExitCode.DRIFT
    found = set(codes(outcome, "two-node", "nccl-all-reduce"))
    assert found == {"NVC730", "NVC731", "NVC741"}  # and the one capture in every round
    verdict = threshold(outcome, "nccl-all-reduce", "inter-node")
    assert verdict["word"] == "fail"
    assert {r["code"] for r in verdict["reasons"]} == {"unbound", "anomaly"}  # 446 GB/s passes
    host = next(f for f in outcome.verdicts.findings if f.code == "NVC730")
    assert "inst-xxxxx-h100-ol89, inst-yyyyy-h100-ol89" in host.message
    assert "expected node-a, node-b" in host.message
    model = next(f for f in outcome.verdicts.findings if f.code == "NVC731")
    assert model.message == (
        "devices are NVIDIA H100 80GB HBM3 (8 on inst-xxxxx-h100-ol89, 8 on"
        " inst-yyyyy-h100-ol89), where pool h20 plans H20-3e (NVIDIA-H20-3e); as"
        " nvidia.com/gpu.product labels: NVIDIA H100 80GB HBM3 -> NVIDIA-H100-80GB-HBM3."
        " Check spec.nodePools[0].model and spec.nodePools[0].productLabels against the"
        " nodes' nvidia.com/gpu.product label, or whether the log is of these nodes"
    )
    printed = CliRunner().invoke(
        main,
        [
            "collect",
            "--site",
            str(SITE),
            "--from",
            str(tmp_path / "saved"),
            "--out",
            str(tmp_path / "cli"),
        ],
    )
    assert printed.exit_code == 1
    first = "evidence   Unbound evidence (NVC730), two-node/nccl-all-reduce g0, rounds 1, 2, 3: "
    assert printed.stdout.splitlines()[1] == (
        f"{first}ranks ran on inst-xxxxx-h100-ol89, inst-yyyyy-h100-ol89, which the plan does"
        " not name for this run (expected node-a, node-b)"
    )  # one line for the three rounds
    report = tmp_path / "report"
    done = CliRunner().invoke(main, ["report", str(outcome.archive.path), "--out", str(report)])
    assert done.exit_code == 0, done.output
    assert "Unbound evidence (NVC730), two-node/nccl-all-reduce" in done.stdout.splitlines()[1]
    summary = (report / "summary.md").read_text().splitlines()
    assert summary[2].startswith(
        "- **Unbound evidence (NVC730), two-node/nccl-all-reduce g0, rounds"
    )
    assert "ranks ran on inst-xxxxx-h100-ol89" in summary[2]
    assert 'id="evidence"' in (report / "index.html").read_text()


def test_a_dgx_spark_log_is_unbound_by_host_model_and_ranks(tmp_path: Path) -> None:
    def spark(obj: Obj) -> str:
        return (
            SPARK.read_text() if is_test(obj, "two-node", "nccl-all-gather") else default_log(obj)
        )

    outcome = run(write_saved_logs(tmp_path / "saved", spark), tmp_path / "results")
    found = codes(outcome, "two-node", "nccl-all-gather")
    assert set(found) == {"NVC730", "NVC731", "NVC732", "NVC741"}  # one log in every round
    ranks = next(f for f in outcome.verdicts.findings if f.code == "NVC732")
    assert (
        "2 ranks on 2 host(s) (1 on spark-fb97, 1 on spark-4440), where the plan runs"
        " 2 nodes x 8 GPUs (16 ranks): fewer"
    ) in (ranks.message)
    run_verdict = next(v for v in outcome.verdicts.runs if is_run(v, "two-node", "nccl-all-gather"))
    assert run_verdict.word == "fail"


def test_one_rank_short_is_unbound_and_pods_of_the_run_bind(tmp_path: Path) -> None:
    def short(obj: Obj) -> str:
        text = default_log(obj)
        if is_test(obj, "single-node", "nccl-all-reduce"):
            lines = text.splitlines(keepends=True)
            return "".join(line for line in lines if "Rank  7 Group" not in line)
        if is_two_node_all_reduce(obj):  # a pod network: hosts are the run's pods
            name = obj["metadata"]["name"]
            text = text.replace(" on node-a ", f" on {name}-launcher-0-0 ")
            return text.replace(" on node-b ", f" on {name}-node-0-0.{name} ")
        return text

    outcome = run(write_saved_logs(tmp_path / "saved", short), tmp_path / "results")
    assert set(codes(outcome, "single-node", "nccl-all-reduce")) == {"NVC732"}
    assert codes(outcome, "two-node", "nccl-all-reduce") == []
    assert threshold(outcome, "nccl-all-reduce", "inter-node")["word"] == "pass"


def test_a_bandwidth_above_the_pools_ceiling_is_implausible(tmp_path: Path) -> None:
    text = SITE.read_text()
    text = text.replace("count: 8\n", "count: 4\n").replace(", mlx5_4, mlx5_5, mlx5_6, mlx5_7", "")
    text = text.replace(", roce-4, roce-5, roce-6, roce-7", "")
    text = text.replace('busbw: ">= 2880 Gb/s"', 'busbw: ">= 100 GB/s"')
    text = text.replace(",\n       baseline: h20-3e-2node-roce-all-reduce", "")
    site = tmp_path / "four-nics.yaml"
    site.write_text(text)
    limit = 187.5 * (1 + MARGIN)  # 4 x 200 Gb/s: 100 GB/s x 2(n-1)/n, the NVC351 ceiling

    def at(busbw: str) -> Any:
        def log(obj: Obj) -> str:
            found = default_log(obj)
            if not is_two_node_all_reduce(obj):
                return found
            (row,) = [x for x in found.splitlines() if x.startswith("  1073741824")]
            return found.replace(row, row.replace(row.split()[7], busbw, 1))

        return log

    over = run(write_saved_logs(tmp_path / "over", at("441.00")), tmp_path / "r1", site)
    verdict = threshold(over, "nccl-all-reduce", "inter-node")
    assert verdict["word"] == "fail"
    found = [f for f in over.verdicts.findings if f.code == "NVC735"]
    assert found and "is above the 196.9 GB/s the plan's links allow" in found[0].message
    assert "4 x 200Gb/s roce per node: 187.5 GB/s, +5% margin" in found[0].message
    assert f"{limit:.4g}" == "196.9"


def test_an_all_to_all_that_collapses_fails_though_no_threshold_names_it(tmp_path: Path) -> None:
    def collapsing(obj: Obj) -> str:
        if not is_test(obj, "two-node", "nccl-alltoall"):
            return default_log(obj)
        text = COLLAPSE.read_text().replace("R6KD-CX8aaS-GPU-14", "node-a")
        return text.replace("R6KD-CX8aaS-GPU-15", "node-b")

    outcome = run(write_saved_logs(tmp_path / "saved", collapsing), tmp_path / "results")
    assert "NVC736" in codes(outcome, "two-node", "nccl-alltoall")
    assert "NVC730" not in codes(outcome, "two-node", "nccl-alltoall")
    (verdict,) = [v for v in outcome.verdicts.runs if is_run(v, "two-node", "nccl-alltoall")]
    assert verdict.word == "fail"
    reason, *_ = [r for r in verdict.reasons if r.message.startswith("NVC736")]  # per round
    assert "collapses from 30.22 to 0.79 GB/s at 16MiB to 2GiB (8 sizes), back after 2GiB" in (
        reason.message
    )
    assert outcome.exit_code is ExitCode.DRIFT


def test_nvcre_rounds_on_a_node_the_pool_does_not_name_are_unbound(tmp_path: Path) -> None:
    from labstate import find, lab_state, write_export

    objects = lab_state()
    wf = find(objects, "Workflow", "lab-two-node-0002-communication-nccl-all-reduce")
    wf["status"]["orchestration"]["groups"][0]["nodes"] = ["node-a", "spark-fb97"]
    folder = write_export(tmp_path / "export", objects)
    lab = ROOT / "tests" / "fixtures" / "collect" / "site.yaml"
    outcome = run(folder, tmp_path / "results", lab)
    found = [f for f in outcome.verdicts.findings if f.code == "NVC733"]
    assert found and "measured on spark-fb97, which pool h20 does not name" in found[0].message
    verdict = threshold(outcome, "nccl-all-reduce", "inter-node")
    assert verdict["word"] == "fail"
    wf["status"]["orchestration"]["groups"][0]["nodes"] = ["node-a"]  # one of two
    alone = run(write_export(tmp_path / "alone", objects), tmp_path / "results-alone", lab)
    fewer = [f for f in alone.verdicts.findings if f.code == "NVC732"]
    assert fewer and "1 node(s) (node-a), where the plan runs 2 nodes x 8 GPUs: fewer" in (
        fewer[0].message
    )
    clean = run(write_export(tmp_path / "clean", lab_state()), tmp_path / "results-clean", lab)
    assert [f.code for f in clean.verdicts.findings] == []
    assert clean.exit_code is ExitCode.OK


def test_a_workflow_group_naming_a_node_outside_the_plan_gives_it_no_verdict(
    tmp_path: Path,
) -> None:
    """Issue #31: NVCRE mode, a group naming prod-control-plane-1 and a path-like name."""
    from labstate import find, lab_state, write_export

    objects = lab_state()
    wf = find(objects, "Workflow", "lab-two-node-0002-communication-nccl-all-reduce")
    wf["status"]["orchestration"]["groups"][0]["nodes"] = ["node-a", "prod-control-plane-1"]
    wf["status"]["orchestration"]["excludedNodes"] = ["node-b/status"]
    folder = write_export(tmp_path / "export", objects)
    lab = ROOT / "tests" / "fixtures" / "collect" / "site.yaml"
    outcome = run(folder, tmp_path / "results", lab)
    nodes = [n.node for n in outcome.verdicts.nodes]
    assert "prod-control-plane-1" not in nodes and "node-b/status" not in nodes
    found = [f for f in outcome.verdicts.findings if f.code == "NVC750"]
    assert [(f.group, f.message.split(":")[0]) for f in found] == [
        ("group-0", "no verdict for prod-control-plane-1"),
        ("", "no verdict for node-b/status"),
    ]
    assert {f.code for f in outcome.verdicts.findings} >= {"NVC733", "NVC750"}
    assert outcome.exit_code is ExitCode.DRIFT
