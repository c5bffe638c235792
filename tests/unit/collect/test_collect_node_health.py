"""The `node-health` test end to end: render, check, plan, collect from saved logs, report.

Both example sites (examples/node-health/) run `node-health` first on three H200 nodes;
saved logs are made from the hand-written 8-GPU capture (tests/fixtures/node/h200-8gpu),
one node's edited to show a fault. That node must be named failed in the report's first
lines, and the others cleared.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result
from fakelist import serve, write_kubeconfig
from nodehealthlogs import (
    EXAMPLES,
    XML,
    health_log,
)
from oncallfactory import dcgm_log

from nvcregen.cli import main
from nvcregen.cluster.retry import RetryPolicy
from nvcregen.collect.collector import collect
from nvcregen.collect.model import CollectOptions
from nvcregen.collect.podlogs import PodIndex
from nvcregen.kinds.node.reader import REFUSED
from nvcregen.report.writer import write_report

ROOT = Path(__file__).resolve().parents[3]
NARROW = "<current_link_width>8x</current_link_width>"
WIDE = "<current_link_width>16x</current_link_width>"


def run(*args: str | Path) -> Result:
    result = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    assert "Traceback" not in result.output
    return result


def one_narrow_link(xml: str) -> str:
    """GPU 2 of the eight trained at x8."""
    head, *gpus = xml.split("<gpu id=")
    gpus[2] = gpus[2].replace(WIDE, NARROW, 1)
    return "<gpu id=".join([head, *gpus])


def objects(tree: Path, kind: str) -> list[dict[str, Any]]:
    found = [yaml.safe_load(p.read_text()) for p in sorted(tree.rglob("*.yaml"))]
    return [o for o in found if isinstance(o, dict) and o.get("kind") == kind]


def health_objects(tree: Path, kind: str) -> list[dict[str, Any]]:
    return [
        o
        for o in objects(tree, kind)
        if o["metadata"]["labels"]["nvcregen.io/test"] == "node-health"
    ]


def test_both_sites_render_check_and_plan_with_node_health_first(rendered: dict[str, Path]) -> None:
    for mode, tree in rendered.items():
        checked = run("check", tree.parent)
        assert checked.exit_code == 0, checked.output
        plan = run("plan", EXAMPLES / f"h200-{mode}.yaml")
        assert plan.exit_code == 0, plan.output
        step = next(line for line in plan.stdout.splitlines() if "01-node-health" in line)
        assert "h200-a,h200-b,h200-c" in step
        assert step.split()[-2] == "0.4"  # GPU-hours: 3 nodes x 8 GPUs x 1m expected


def test_trainer_mode_pins_one_job_per_node_naming_its_node(rendered: dict[str, Path]) -> None:
    jobs = health_objects(rendered["trainer"], "Job")
    assert sorted(j["metadata"]["annotations"]["nvcregen.io/nodes"] for j in jobs) == [
        "h200-a",
        "h200-b",
        "h200-c",
    ]
    (container,) = jobs[0]["spec"]["template"]["spec"]["containers"]
    assert container["name"] == "node-health"
    assert container["image"].startswith("nvcr.io/nvidia/pytorch:26.01-py3@sha256:")
    assert {"name": "NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}} in (
        container["env"]
    )
    script = container["command"][2]
    assert "nvidia-smi -q -x" in script
    assert "begin node=${NODE_NAME" in script
    assert f'echo "{REFUSED},' in script  # the refusal `ingest node` recognises (NVC825)
    assert container["resources"]["limits"]["nvidia.com/gpu"] == 8


def test_nvcre_mode_runs_the_same_script_as_a_workloadrun(rendered: dict[str, Path]) -> None:
    (run_,) = health_objects(rendered["nvcre"], "WorkloadRun")
    job = health_objects(rendered["trainer"], "Job")[0]
    script = job["spec"]["template"]["spec"]["containers"][0]["command"]
    assert run_["spec"]["framework"]["exec"]["command"] == script
    assert run_["spec"]["target"]["nodeNames"] == ["h200-a", "h200-b", "h200-c"]
    assert run_["spec"]["env"][0]["valueFrom"] == {"fieldRef": {"fieldPath": "spec.nodeName"}}


def _collect_and_report(site: Path, saved: Path, tmp: Path) -> tuple[Result, str, dict[str, Any]]:
    results = tmp / "results"
    collected = run("collect", "--site", site, "--from", saved, "--out", results)
    written = write_report(
        results / yaml.safe_load(site.read_text())["metadata"]["name"], tmp / "report"
    )
    summary = (tmp / "report" / "summary.md").read_text()
    archive = next((results / written.site).iterdir())
    verdicts: dict[str, Any] = json.loads((archive / "verdicts.json").read_text())
    return collected, summary, verdicts


def test_trainer_mode_collects_saved_logs_and_fails_the_faulty_node(
    rendered: dict[str, Path], tmp_path: Path
) -> None:
    logs = tmp_path / "saved" / "logs" / "nvcre"
    logs.mkdir(parents=True)
    for job in objects(rendered["trainer"], "Job"):
        name, node = job["metadata"]["name"], job["metadata"]["annotations"]["nvcregen.io/nodes"]
        if job["metadata"]["labels"]["nvcregen.io/test"] == "node-health":
            text = health_log(node, one_narrow_link(XML) if node == "h200-b" else XML)
        else:
            text = dcgm_log(name, node)
        (logs / f"{name}.log").write_text(text)
    collected, summary, verdicts = _collect_and_report(
        EXAMPLES / "h200-trainer.yaml", tmp_path / "saved", tmp_path
    )
    assert collected.exit_code == 1
    first = summary.splitlines()[:3]
    assert first[0] == "## Readiness of node-health-trainer: ❌ fail"
    assert first[2] == "**Hold back 1 of 3 nodes: h200-b (failed).**"
    nodes = {n["node"]: n["status"] for n in verdicts["nodes"]}
    assert nodes == {"h200-a": "cleared", "h200-b": "failed", "h200-c": "cleared"}
    why = next(n for n in verdicts["nodes"] if n["node"] == "h200-b")["reasons"]
    assert any("NVC801 GPU 2 (00000000:3A:00.0): PCIe link at x8 of x16" in r for r in why)
    site = EXAMPLES / "h200-trainer.yaml"
    retest = run(
        "retest",
        tmp_path / "results" / "node-health-trainer",
        "--site",
        site,
        "--out",
        tmp_path / "r.yaml",
    )
    assert retest.exit_code == 0
    assert "h200-b failed alone, no retest needed" in retest.output  # failed, not suspect
    assert not (tmp_path / "r.yaml").exists()
    (archive,) = (tmp_path / "results" / "node-health-trainer").iterdir()
    quarantine = run("quarantine", archive, "--site", site, "--format", "json")
    assert quarantine.exit_code == 0, quarantine.output
    (marked,) = json.loads(quarantine.output)["nodes"]  # the node node-health failed
    assert marked["node"] == "h200-b"
    assert "PCIe link at x8 of x16" in marked["annotations"]["nvcregen.io/quarantine-reason"]


def test_nvcre_mode_collects_saved_node_health_logs(
    rendered: dict[str, Path], tmp_path: Path
) -> None:
    saved = _saved_workloadruns(rendered, tmp_path)
    failing = XML.replace("<remapped_row_failure>No", "<remapped_row_failure>Yes", 1)
    for node in ("h200-a", "h200-b", "h200-c"):
        text = health_log(node, failing if node == "h200-c" else XML)
        (saved / "logs" / "nvcre" / f"node-health-{node}.log").write_text(text)
    collected, summary, verdicts = _collect_and_report(
        EXAMPLES / "h200-nvcre.yaml", saved, tmp_path
    )
    assert collected.exit_code == 1
    assert summary.splitlines()[2] == "**Hold back 1 of 3 nodes: h200-c (failed).**"
    nodes = {n["node"]: n["status"] for n in verdicts["nodes"]}
    assert nodes == {"h200-a": "cleared", "h200-b": "cleared", "h200-c": "failed"}
    archive = next((tmp_path / "results" / "node-health-nvcre").iterdir())
    assert (archive / "logs" / "nvcre" / "node-health-h200-c.log").read_text() == health_log(
        "h200-c", failing
    )


def test_nvcre_mode_without_a_log_of_every_node_is_incomplete(
    rendered: dict[str, Path], tmp_path: Path
) -> None:
    saved = _saved_workloadruns(rendered, tmp_path)
    (saved / "logs" / "nvcre" / "a.log").write_text(health_log("h200-a"))
    (saved / "logs" / "nvcre" / "b.log").write_text(health_log("h200-b", end=False))  # cut short
    _, _, verdicts = _collect_and_report(EXAMPLES / "h200-nvcre.yaml", saved, tmp_path)
    run_ = next(r for r in verdicts["runs"] if r["test"] == "node-health")
    assert run_["word"] == "incomplete"
    nodes = {n["node"]: n["status"] for n in verdicts["nodes"]}
    assert nodes["h200-a"] == "cleared"
    assert nodes["h200-b"] != "cleared"


def test_nvcre_mode_one_node_health_log_saved_twice_clears_neither(
    rendered: dict[str, Path], tmp_path: Path
) -> None:
    """Issue #31: the same log content is evidence for one run at most, in NVCRE mode too.

    Without the comparison, h200-a was cleared by either copy (h200-b has no log).
    """
    saved = _saved_workloadruns(rendered, tmp_path)
    for name, node in (("a", "h200-a"), ("a-again", "h200-a"), ("c", "h200-c")):
        (saved / "logs" / "nvcre" / f"{name}.log").write_text(health_log(node))
    _, _, verdicts = _collect_and_report(EXAMPLES / "h200-nvcre.yaml", saved, tmp_path)
    nodes = {n["node"]: n["status"] for n in verdicts["nodes"]}
    assert nodes == {"h200-a": "untested", "h200-b": "untested", "h200-c": "cleared"}
    copied = [(f["code"], f["source"], f["nodes"]) for f in verdicts["findings"]
              if f["code"] in ("NVC740", "NVC741")]  # fmt: skip
    assert copied == [("NVC741", "a", ["h200-a"]), ("NVC741", "a-again", ["h200-a"])]
    (first, _) = (f for f in verdicts["findings"] if f["code"] == "NVC741")
    assert first["message"] == (  # one node's log twice: a copied round of that node
        "the same as h200-a round 1 (a-again), byte for byte: a copied round proves nothing"
    )


@pytest.mark.parametrize("mode", ["trainer", "nvcre"])
def test_node_health_in_an_inter_node_stage_still_runs_once_per_node(
    mode: str, tmp_path: Path
) -> None:
    text = (EXAMPLES / f"h200-{mode}.yaml").read_text()
    single = "      - name: single-node\n        scope: intra-node\n        tests: [dcgm-l1]\n"
    assert single in text
    site = tmp_path / f"h200-{mode}.yaml"
    site.write_text(
        text.replace(
            single,
            "      - name: pairs\n        scope: inter-node\n        nodesPerJob: 2\n"
            "        tests: [node-health]\n",
        )
    )
    result = run("render", "--out", tmp_path / "out", site)
    assert result.exit_code == 0, result.output
    tree = tmp_path / "out" / f"node-health-{mode}"
    if mode == "trainer":
        jobs = [
            j
            for j in health_objects(tree, "Job")
            if j["metadata"]["labels"]["nvcregen.io/stage"] == "pairs"
        ]
        nodes = sorted(j["metadata"]["annotations"]["nvcregen.io/nodes"] for j in jobs)
        assert nodes == ["h200-a", "h200-b", "h200-c"]
    else:
        (pairs,) = [
            w
            for w in health_objects(tree, "WorkloadRun")
            if w["metadata"]["labels"]["nvcregen.io/stage"] == "pairs"
        ]
        assert pairs["spec"]["numNodes"] == 1
        assert pairs["spec"]["orchestration"]["testScale"] == "intra-node"


def test_a_node_health_jobs_log_is_read_from_its_node_health_container() -> None:
    name = "node-health-node-health-00000000-r1-n0"
    job: dict[str, Any] = {
        "kind": "Job",
        "metadata": {"name": name},
        "spec": {"template": {"spec": {"containers": [{"name": "node-health"}]}}},
    }
    pod = {
        "metadata": {
            "name": "p",
            "labels": {"batch.kubernetes.io/job-name": name},
        }
    }
    assert PodIndex([pod]).pod_of(job) == (pod, "node-health")
    dcgm = {**job, "spec": {"template": {"spec": {"containers": [{"name": "dcgm-diag"}]}}}}
    assert PodIndex([pod]).pod_of(dcgm) == (pod, "dcgm-diag")


def test_a_log_from_another_node_than_the_job_was_pinned_to_is_not_judged(
    rendered: dict[str, Path], tmp_path: Path
) -> None:
    logs = tmp_path / "saved" / "logs" / "nvcre"
    logs.mkdir(parents=True)
    for job in objects(rendered["trainer"], "Job"):
        name, node = job["metadata"]["name"], job["metadata"]["annotations"]["nvcregen.io/nodes"]
        if job["metadata"]["labels"]["nvcregen.io/test"] == "node-health":
            text = health_log("h200-a" if node == "h200-b" else node)
        else:
            text = dcgm_log(name, node)
        (logs / f"{name}.log").write_text(text)
    collected, _, verdicts = _collect_and_report(
        EXAMPLES / "h200-trainer.yaml", tmp_path / "saved", tmp_path
    )
    assert collected.exit_code == 1  # incomplete
    run_ = next(r for r in verdicts["runs"] if r["test"] == "node-health")
    assert run_["word"] == "incomplete"
    archive = next((tmp_path / "results" / "node-health-trainer").iterdir())
    records = json.loads((archive / "summary.json").read_text())["logs"]
    wrong = [r for r in records if r["kind"] == "node" and r["status"] == "no-data"]
    assert [r["errors"] for r in wrong] == [
        ["the log is from node h200-a, but the run was pinned to h200-b"]
    ]


def test_trainer_mode_reads_node_health_logs_from_the_cluster(
    rendered: dict[str, Path], tmp_path: Path
) -> None:
    state: list[dict[str, Any]] = []
    logs: dict[tuple[str, str, str], bytes] = {}
    for job in objects(rendered["trainer"], "Job"):
        name, node = job["metadata"]["name"], job["metadata"]["annotations"]["nvcregen.io/nodes"]
        state.append(job)
        labels = {"nvcregen.io/site": "node-health-trainer", "batch.kubernetes.io/job-name": name}
        meta = {"name": f"{name}-x", "namespace": "nvcre", "labels": labels}
        state.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": meta | {"creationTimestamp": "2026-12-03T10:00:00Z"},
            }
        )
        if job["metadata"]["labels"]["nvcregen.io/test"] == "node-health":
            text = health_log(node, one_narrow_link(XML) if node == "h200-c" else XML)
            logs[("nvcre", f"{name}-x", "node-health")] = text.encode()
        else:
            logs[("nvcre", f"{name}-x", "dcgm-diag")] = dcgm_log(name, node).encode()
    outcome, _ = _collect_from_fake("h200-trainer.yaml", state, logs, tmp_path)
    assert outcome.archive.verified
    nodes = {n.node: n.status for n in outcome.verdicts.nodes}
    assert nodes == {"h200-a": "cleared", "h200-b": "cleared", "h200-c": "failed"}


def test_a_dcgm_log_whose_pod_ran_on_another_node_is_foreign_evidence(
    rendered: dict[str, Path], tmp_path: Path
) -> None:
    """From a cluster the pod's `spec.nodeName` binds too: h200-a's round-1 DCGM log,
    naming h200-a, from a pod the API placed on h200-b, is no evidence for h200-a."""
    state: list[dict[str, Any]] = []
    logs: dict[tuple[str, str, str], bytes] = {}
    moved = ""
    for job in objects(rendered["trainer"], "Job"):
        name, node = job["metadata"]["name"], job["metadata"]["annotations"]["nvcregen.io/nodes"]
        labels = job["metadata"]["labels"]
        test, round_ = labels["nvcregen.io/test"], labels["nvcregen.io/round"]
        ran_on = node
        if (test, round_, node) == ("dcgm-l1", "1", "h200-a"):
            ran_on, moved = "h200-b", name
        pod_labels = {
            "nvcregen.io/site": "node-health-trainer",
            "batch.kubernetes.io/job-name": name,
        }
        meta = {"name": f"{name}-x", "namespace": "nvcre", "labels": pod_labels,
                "creationTimestamp": "2026-12-03T10:00:00Z"}  # fmt: skip
        state += [job, {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
                        "spec": {"nodeName": ran_on}}]  # fmt: skip
        if test == "node-health":
            logs[("nvcre", f"{name}-x", "node-health")] = health_log(node).encode()
        else:
            logs[("nvcre", f"{name}-x", "dcgm-diag")] = dcgm_log(name, node).encode()
    outcome, _ = _collect_from_fake("h200-trainer.yaml", state, logs, tmp_path)
    nodes = {n.node: n.status for n in outcome.verdicts.nodes}
    assert nodes == {"h200-a": "failed", "h200-b": "cleared", "h200-c": "cleared"}
    (found,) = [f for f in outcome.verdicts.findings if f.code == "NVC730"]
    assert (found.nodes, found.round, found.source) == (("h200-a",), 1, moved)
    assert found.message.endswith("but the API scheduled its pod on h200-b: another run's evidence")


def test_a_node_off_its_pools_majority_is_warned_in_the_log_records(
    rendered: dict[str, Path], tmp_path: Path
) -> None:
    saved = _saved_workloadruns(rendered, tmp_path)
    other = XML.replace("<vbios_version>96.00.A5.00.1A<", "<vbios_version>96.00.A5.00.1B<")
    for node in ("h200-a", "h200-b", "h200-c"):  # the NVCRE site states no VBIOS
        text = health_log(node, other if node == "h200-b" else XML)
        (saved / "logs" / "nvcre" / f"node-health-{node}.log").write_text(text)
    collected, _, verdicts = _collect_and_report(EXAMPLES / "h200-nvcre.yaml", saved, tmp_path)
    assert collected.exit_code == 1  # single-node/dcgm-l1 has no result: incomplete
    archive = next((tmp_path / "results" / "node-health-nvcre").iterdir())
    records = {r["hosts"][0]: r for r in json.loads((archive / "summary.json").read_text())["logs"]}
    assert records["h200-b"]["warnings"] == [
        "NVC818 VBIOS 96.00.A5.00.1B, while 2 of 3 nodes of the pool run 96.00.A5.00.1A"
    ]
    assert records["h200-a"]["warnings"] == records["h200-c"]["warnings"] == []
    nodes = {n["node"]: n["status"] for n in verdicts["nodes"]}
    assert nodes["h200-b"] == "cleared"  # a warning, not a failure


def test_a_node_off_its_inventory_entry_is_failed_naming_the_inventory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The NVCRE site without `expect.driver`, naming an inventory that gives h200-b another."""
    project = tmp_path / "project"
    project.mkdir()
    text = (EXAMPLES / "h200-nvcre.yaml").read_text()
    assert "        driver: 580.159.04\n" in text
    text = text.replace("        driver: 580.159.04\n", "")
    text = text.replace("  nodePools:\n", "  inventory: inventory.yaml\n  nodePools:\n")
    (project / "site.yaml").write_text(text)
    nodes = [
        {
            "name": node,
            "gpu": {"product": "NVIDIA-H200", "count": 8},
            "driver": "570.86.15" if node == "h200-b" else "580.159.04",
        }
        for node in ("h200-a", "h200-b", "h200-c")
    ]
    inventory = {"apiVersion": "nvcregen.io/v1alpha1", "kind": "Inventory", "nodes": nodes}
    (project / "inventory.yaml").write_text(yaml.safe_dump(inventory))
    monkeypatch.chdir(project)
    rendered = run("render", "--out", tmp_path / "out", "site.yaml")
    assert rendered.exit_code == 0, rendered.output
    saved = tmp_path / "saved"
    (saved / "logs" / "nvcre").mkdir(parents=True)
    for path in (tmp_path / "out").rglob("workloadrun-*.yaml"):
        (saved / path.name).write_text(path.read_text())
    for node in ("h200-a", "h200-b", "h200-c"):  # every node runs 580.159.04
        (saved / "logs" / "nvcre" / f"node-health-{node}.log").write_text(health_log(node))
    collected, summary, verdicts = _collect_and_report(project / "site.yaml", saved, tmp_path)
    assert collected.exit_code == 1
    assert summary.splitlines()[2] == "**Hold back 1 of 3 nodes: h200-b (failed).**"
    nodes_ = {n["node"]: n["status"] for n in verdicts["nodes"]}
    assert nodes_ == {"h200-a": "cleared", "h200-b": "failed", "h200-c": "cleared"}
    why = next(n for n in verdicts["nodes"] if n["node"] == "h200-b")["reasons"]
    drift = (
        "NVC817 drift: driver 580.159.04, where the inventory (inventory.yaml) records "
        "570.86.15 for this node"
    )
    assert any(drift in r for r in why), why


def test_nvcre_mode_refuses_two_saved_logs_of_one_name(
    rendered: dict[str, Path], tmp_path: Path
) -> None:
    """`x.log` and `x.txt` (#20's NVC711) in NVCRE mode's node-health logs too: one was
    judged and the other archived under the same name, a verdict its archive contradicts."""
    saved = _saved_workloadruns(rendered, tmp_path)
    failing = XML.replace("<remapped_row_failure>No", "<remapped_row_failure>Yes", 1)
    for node in ("h200-a", "h200-b", "h200-c"):
        (saved / "logs" / "nvcre" / f"node-health-{node}.log").write_text(health_log(node))
    (saved / "logs" / "nvcre" / "node-health-h200-c.txt").write_text(health_log("h200-c", failing))
    results = tmp_path / "results"
    collected = run(
        "collect", "--site", EXAMPLES / "h200-nvcre.yaml", "--from", saved, "--out", results
    )
    assert collected.exit_code == 2, collected.output
    assert (
        "logs/nvcre/node-health-h200-c.txt: error[NVC711]: logs/nvcre/node-health-h200-c.log"
        " is the log of the same run (nvcre/node-health-h200-c); keep one of them"
    ) in collected.output
    assert not results.exists()  # nothing archived


def test_a_node_of_another_gpu_model_fails_node_health(
    rendered: dict[str, Path], tmp_path: Path
) -> None:
    """#21's binding for node health: H100s in the H200 pool were cleared (every fact
    the pool states matched), so another model's node passed the readiness gate."""
    saved = _saved_workloadruns(rendered, tmp_path)
    h100 = XML.replace(
        "<product_name>NVIDIA H200</product_name>",
        "<product_name>NVIDIA H100 80GB HBM3</product_name>",
    )
    for node in ("h200-a", "h200-b", "h200-c"):
        text = health_log(node, h100 if node == "h200-c" else XML)
        (saved / "logs" / "nvcre" / f"node-health-{node}.log").write_text(text)
    collected, _, verdicts = _collect_and_report(EXAMPLES / "h200-nvcre.yaml", saved, tmp_path)
    assert collected.exit_code == 1, collected.output
    nodes = {n["node"]: n["status"] for n in verdicts["nodes"]}
    assert nodes == {"h200-a": "cleared", "h200-b": "cleared", "h200-c": "failed"}
    assert (
        "NVC817 drift: GPU model NVIDIA H100 80GB HBM3 (8 GPUs), the pool expects NVIDIA-H200"
        in collected.output
    )


def _saved_workloadruns(rendered: dict[str, Path], tmp_path: Path) -> Path:
    """A `--from` folder holding NVCRE mode's WorkloadRuns and an empty `logs/nvcre/`."""
    saved = tmp_path / "saved"
    (saved / "logs" / "nvcre").mkdir(parents=True)
    for path in rendered["nvcre"].rglob("workloadrun-*.yaml"):
        (saved / path.name).write_text(path.read_text())
    return saved


RUN_CREATED = "2026-12-03T10:00:00Z"  # the WorkloadRun; its TrainJobs come after it


def _nvcre_trainjob(
    run: dict[str, Any], name: str, created: str = "2026-12-03T10:00:02Z"
) -> dict[str, Any]:
    """The TrainJob NVCRE makes of a WorkloadRun: its workloadMetadata labels and NVCRE's."""
    labels = run["spec"]["workloadMetadata"]["labels"] | {"nvcre.nvidia.com/job": name}
    meta = {"name": name, "namespace": "nvcre", "labels": labels, "creationTimestamp": created}
    return {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob", "metadata": meta}


def _jobset_pod(trainjob: str, node: str, containers: list[str], created: str) -> dict[str, Any]:
    meta = {
        "name": f"{trainjob}-node-0-0-{created[-3:-1]}",
        "namespace": "nvcre",
        "labels": {"jobset.sigs.k8s.io/jobset-name": trainjob},
        "creationTimestamp": created,
    }
    spec = {"nodeName": node, "containers": [{"name": c} for c in containers]}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def _nvcre_cluster(rendered: dict[str, Path]) -> tuple[list[dict[str, Any]], dict[Any, bytes]]:
    """The node-health WorkloadRun, the three TrainJobs NVCRE made of it and their pods.

    h200-a's pod has one container (any name), h200-b's two of which one is `node`;
    h200-c's TrainJob has an older pod with a healthy log and a newer one with the fault.
    """
    (run,) = health_objects(rendered["nvcre"], "WorkloadRun")
    run["metadata"]["creationTimestamp"] = RUN_CREATED
    state: list[dict[str, Any]] = [run]
    logs: dict[tuple[str, str, str], bytes] = {}
    shapes = {"h200-a": ["exec"], "h200-b": ["sidecar", "node"], "h200-c": ["exec"]}
    for node, containers in shapes.items():
        name = f"nh-{node}"
        state.append(_nvcre_trainjob(run, name))
        pod = _jobset_pod(name, node, containers, "2026-12-03T10:00:05Z")
        state.append(pod)
        text = health_log(node, one_narrow_link(XML) if node == "h200-c" else XML)
        logs["nvcre", pod["metadata"]["name"], containers[-1]] = text.encode()
    older = _jobset_pod("nh-h200-c", "h200-c", ["exec"], "2026-12-03T09:00:01Z")
    state.append(older)
    logs["nvcre", older["metadata"]["name"], "exec"] = health_log("h200-c", XML).encode()
    return state, logs


def _collect_nvcre(state: list[dict[str, Any]], logs: dict[Any, bytes], tmp_path: Path) -> Any:
    return _collect_from_fake("h200-nvcre.yaml", state, logs, tmp_path)


def _collect_from_fake(
    site: str,
    state: list[dict[str, Any]],
    logs: dict[Any, bytes],
    tmp_path: Path,
    unserved: tuple[str, ...] = (),
) -> Any:
    """Collect an example site from a fake API server; the outcome and the log queries."""
    with serve(state) as fake:
        fake.logs = logs
        fake.served -= set(unserved)
        outcome = collect(
            CollectOptions(
                str(EXAMPLES / site),
                tmp_path / "results",
                ROOT,
                context="lab",
                kubeconfig=write_kubeconfig(tmp_path / "kubeconfig", fake.url),
                policy=RetryPolicy(
                    attempts=2, backoff=0.01, max_backoff=0.05, timeout=(2.0, 2.0), restarts=1
                ),
                sleep=lambda _: None,
            )
        )
        return outcome, [r.query for r in fake.received if r.path.endswith("/log")]


def test_nvcre_mode_reads_node_health_logs_from_the_pods_of_nvcres_trainjobs(
    rendered: dict[str, Path], tmp_path: Path
) -> None:
    state, logs = _nvcre_cluster(rendered)
    outcome, queries = _collect_nvcre(state, logs, tmp_path)
    nodes = {n.node: n.status for n in outcome.verdicts.nodes}
    assert nodes == {"h200-a": "cleared", "h200-b": "cleared", "h200-c": "failed"}
    # the newest pod of each TrainJob, its one container or `node`, at most 16 MiB + 1 byte
    assert sorted(q["container"][0] for q in queries) == ["exec", "exec", "node"]
    assert {q["limitBytes"][0] for q in queries} == {str(16 * 1024 * 1024 + 1)}
    archive = next((tmp_path / "results" / "node-health-nvcre").iterdir())
    assert (archive / "logs" / "nvcre" / "nh-h200-c.log").read_bytes() == health_log(
        "h200-c", one_narrow_link(XML)
    ).encode()


def test_nvcre_mode_names_a_pod_whose_log_it_cannot_choose_and_leaves_its_node_unjudged(
    rendered: dict[str, Path], tmp_path: Path
) -> None:
    state, logs = _nvcre_cluster(rendered)
    pod = next(o for o in state if o["kind"] == "Pod" and o["spec"]["nodeName"] == "h200-b")
    pod["spec"]["containers"] = [{"name": "sidecar"}, {"name": "exec"}]
    state = [o for o in state if o["kind"] != "TrainJob" or o["metadata"]["name"] != "nh-h200-a"]
    outcome, _ = _collect_nvcre(state, logs, tmp_path)
    assert any(
        "TrainJob nh-h200-b: pod nh-h200-b-node-0-0-05 has several containers and none is `node`"
        in note
        for note in outcome.notes
    ), outcome.notes
    nodes = {n.node: n.status for n in outcome.verdicts.nodes}
    assert nodes["h200-c"] == "failed"
    assert nodes["h200-a"] == "untested"  # no TrainJob, no log: never cleared
    assert nodes["h200-b"] == "untested"


def test_nvcre_mode_reads_no_trainjob_made_before_the_sites_workloadrun(
    rendered: dict[str, Path], tmp_path: Path
) -> None:
    """A reclaim leaves an earlier run's TrainJobs behind: their logs clear no node now."""
    state, logs = _nvcre_cluster(rendered)
    (run,) = (o for o in state if o["kind"] == "WorkloadRun")
    run["metadata"]["creationTimestamp"] = "2026-12-04T10:00:00Z"  # a day after them all
    outcome, queries = _collect_nvcre(state, logs, tmp_path)
    assert queries == []
    nodes = {n.node: n.status for n in outcome.verdicts.nodes}
    assert set(nodes.values()) == {"untested"}, nodes
    assert "TrainJob nh-h200-a: made before the WorkloadRun of" in " ".join(outcome.notes)
    # at the WorkloadRun's own second, a TrainJob is its (not earlier)
    for obj in state:
        if obj["kind"] == "TrainJob":
            obj["metadata"]["creationTimestamp"] = "2026-12-04T10:00:00Z"
    (tmp_path / "again").mkdir()
    outcome, queries = _collect_nvcre(state, logs, tmp_path / "again")
    assert len(queries) == 3


def test_nvcre_mode_without_trainer_installed_says_so_and_clears_no_node(
    rendered: dict[str, Path], tmp_path: Path
) -> None:
    state, logs = _nvcre_cluster(rendered)
    outcome, queries = _collect_from_fake(
        "h200-nvcre.yaml", state, logs, tmp_path, unserved=("trainjobs",)
    )
    assert queries == []
    assert "the cluster serves no TrainJob (its CRD is not installed)" in outcome.notes
    assert {n.status for n in outcome.verdicts.nodes} == {"untested"}


def test_nvcre_mode_does_not_judge_a_log_from_another_node_than_its_pods(
    rendered: dict[str, Path], tmp_path: Path
) -> None:
    """The log names h200-b, but Kubernetes ran its pod elsewhere: no evidence for h200-b."""
    state, logs = _nvcre_cluster(rendered)
    pod = next(o for o in state if o["kind"] == "Pod" and o["spec"]["nodeName"] == "h200-b")
    pod["spec"]["nodeName"] = "some-other-node"
    outcome, _ = _collect_nvcre(state, logs, tmp_path)
    nodes = {n.node: n.status for n in outcome.verdicts.nodes}
    assert nodes["h200-a"] == "cleared"  # the name outside the plan (NVC750) fails no node
    assert nodes["h200-b"] != "cleared"
    assert "some-other-node" not in nodes


def test_the_pod_index_takes_each_runs_newest_pod_whatever_the_listing_order() -> None:
    def pod(name: str, created: str, **labels: str) -> dict[str, Any]:
        meta = {"name": name, "creationTimestamp": created, "labels": labels}
        return {"kind": "Pod", "metadata": meta, "spec": {"nodeName": f"node-{name}"}}

    jobset = "jobset.sigs.k8s.io/jobset-name"
    role = {"jobset.sigs.k8s.io/replicatedjob-name": "launcher"}
    pods = [
        pod("l2", "2026-12-03T10:00:02Z", **{jobset: "t"}, **role),
        pod("w9", "2026-12-03T10:00:09Z", **{jobset: "t"}),  # newest, but not the launcher
        pod("l1", "2026-12-03T10:00:01Z", **{jobset: "t"}, **role),
        pod("j1", "2026-12-03T10:00:01Z", **{"job-name": "j"}),
        pod("j3", "2026-12-03T10:00:03Z", **{"batch.kubernetes.io/job-name": "j"}),
    ]
    train = {"kind": "TrainJob", "metadata": {"name": "t"}}
    job = {"kind": "Job", "metadata": {"name": "j"}}
    for order in (pods, pods[::-1]):
        index = PodIndex(order)
        assert index.pod_of(train)[0]["metadata"]["name"] == "l2"  # type: ignore[index]
        assert index.pod_of(job)[0]["metadata"]["name"] == "j3"  # type: ignore[index]
        assert index.jobsets["t"]["metadata"]["name"] == "w9"  # NVCRE mode: any of its pods
        assert index.pod_of({"kind": "TrainJob", "metadata": {"name": "x"}}) == (None, "node")
