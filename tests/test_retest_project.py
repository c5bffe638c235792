"""`nvcregen retest` writes a site that renders beside the original (issue #21).

The retest runs on the original's cluster, in the original's repository: it must install
nothing the original installs (NVC690), and a plain `nvcregen render` of the project must
still pass with it in `sites/`. Pairing stays within a pool, batches when suspects
outnumber cleared nodes, and says when a pool has no cleared node.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from oncallfactory import site_text, write_logs
from test_oncall import two_node_pair_ab_slow

from nvcregen.cli import main
from nvcregen.results.nodes import NodeRun, NodeVerdict
from nvcregen.retest.pairs import Batch, Pair, plan_retest

ROOT = Path(__file__).resolve().parent.parent
NAME = "h20-3e-four"


def four_node_text() -> str:
    """The four-node trainer site on a cluster of its own, within its window."""
    text = site_text().replace("cluster: h20-3e-trainer", f"cluster: {NAME}")
    text = text.replace("path: out/h20-3e-trainer", f"path: out/{NAME}")
    return text.replace("deadline: 16h, gpuHours: 260", "deadline: 96h, gpuHours: 4000")


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the project's sites with the four-node site, its failing pair collected."""
    shutil.copytree(ROOT / "sites", tmp_path / "sites")
    (tmp_path / "sites" / f"{NAME}.yaml").write_text(four_node_text(), encoding="utf-8")
    write_logs(tmp_path / "saved", four_node_text(), two_node_pair_ab_slow)
    monkeypatch.chdir(tmp_path)
    args = ["collect", "--site", NAME, "--from", "saved", "--out", "results"]
    assert CliRunner().invoke(main, args).exit_code == 1  # the (a, b) pair failed
    return tmp_path


@pytest.mark.slow
def test_retest_in_sites_renders_with_every_site_of_the_project(project: Path) -> None:
    result = CliRunner().invoke(main, ["retest", f"results/{NAME}"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == f"retest {NAME}-retest: node-a with node-c; node-b with node-d"
    assert lines[1].startswith("Budget of this retest: worst case ")
    assert lines[-1] == f"wrote {project / 'sites' / f'{NAME}-retest.yaml'}"
    runner = CliRunner()
    validated = runner.invoke(main, ["validate"])
    assert validated.exit_code == 0, validated.output
    rendered = runner.invoke(main, ["render"])  # every site of sites/, the retest among them
    assert rendered.exit_code == 0, rendered.output
    sites = {p.stem for p in (project / "sites").glob("*.yaml")}
    assert {p.name for p in (project / "out").iterdir()} == sites
    files = [p.name for p in (project / "out" / f"{NAME}-retest").rglob("*.yaml")]
    assert not [f for f in files if f.startswith("namespace-")], files
    assert not [f for f in files if "kueue" in f or "kubeflow-trainer" in f], files
    assert "configmap-argocd-cm.yaml" not in files
    assert "localqueue-readiness.yaml" not in files
    jobs = [
        yaml.safe_load(p.read_text())
        for p in (project / "out" / f"{NAME}-retest").rglob("trainjob-*.yaml")
    ]
    assert {j["metadata"]["namespace"] for j in jobs} == {"nvcre"}  # the original's
    queued = {j["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] for j in jobs}
    assert queued == {"readiness"}  # the original's LocalQueue


@pytest.mark.slow
def test_a_retest_that_would_break_the_project_is_not_written(project: Path) -> None:
    """A site already named like the retest: NVC503, and the new file is removed again."""
    taken = project / "sites" / "taken.yaml"
    text = four_node_text().replace(f"name: {NAME}\n", f"name: {NAME}-retest\n", 1)
    taken.write_text(text.replace("path: out/h20-3e-four", "path: out/taken"))
    out = project / "sites" / "new-retest.yaml"
    result = CliRunner().invoke(main, ["retest", f"results/{NAME}", "--out", str(out)])
    assert result.exit_code == 2
    assert "NVC503" in result.output + result.stderr
    assert "does not render beside the sites of its project; nothing written" in result.stderr
    assert "wrote" not in result.output
    assert not out.exists()


def verdict(node: str, status: str, group: tuple[str, ...] = ()) -> NodeVerdict:
    runs = (
        (NodeRun(stage="two-node", test="nccl-all-reduce", nodes=group, word="fail"),)
        if status == "suspect"
        else ()
    )
    word = {"suspect": "fail", "cleared": "pass", "failed": "fail"}[status]
    return NodeVerdict(node=node, status=status, word=word, runs=runs)


POOLS = {"a1": "x", "a2": "x", "a3": "x", "a4": "x", "a5": "x", "b1": "y", "b2": "y", "b3": "y"}


def test_each_suspect_pairs_with_a_cleared_node_of_its_own_pool() -> None:
    nodes = [
        verdict("a1", "suspect", ("a1", "a2")),
        verdict("a2", "suspect", ("a1", "a2")),
        verdict("b1", "suspect", ("b1", "b2")),
        verdict("b3", "cleared"),  # pool y's only cleared node comes first in plan order
        verdict("a3", "cleared"),
        verdict("a4", "cleared"),
    ]
    plan = plan_retest(nodes, POOLS)
    tests = (("two-node", "nccl-all-reduce"),)
    assert plan.batches == (
        Batch((Pair("a1", "a3"), Pair("a2", "a4")), tests),
        Batch((Pair("b1", "b3"),), tests),
    )
    assert plan.unpaired == ()


def test_a_pool_without_a_cleared_node_is_named_and_its_suspects_not_paired() -> None:
    nodes = [
        verdict("a1", "suspect", ("a1", "a2")),
        verdict("b1", "suspect", ("b1", "b2")),
        verdict("b2", "suspect", ("b1", "b2")),
        verdict("a3", "cleared"),  # pool x only: never a partner for pool y
    ]
    plan = plan_retest(nodes, POOLS)
    assert plan.batches == (Batch((Pair("a1", "a3"),), (("two-node", "nccl-all-reduce"),)),)
    assert plan.unpaired == ("b1", "b2")
    from nvcregen.retest.writer import _notes

    assert _notes(plan, POOLS) == [
        "b1, b2: suspect, not retested: pool y has no cleared node to pair them with"
        " (retest beside a node known to be good)"
    ]


def test_more_suspects_than_cleared_nodes_run_in_batches_reusing_them() -> None:
    nodes = [verdict(n, "suspect", ("a1", "a2")) for n in ("a1", "a2", "a3", "a4", "a5")]
    nodes += [verdict("b1", "cleared"), verdict("a9", "cleared"), verdict("a8", "cleared")]
    pools = {**POOLS, "a8": "x", "a9": "x"}
    plan = plan_retest(nodes, pools)
    assert [b.pairs for b in plan.batches] == [
        (Pair("a1", "a9"), Pair("a2", "a8")),
        (Pair("a3", "a9"), Pair("a4", "a8")),
        (Pair("a5", "a9"),),
    ]


def test_batches_and_two_pools_render_beside_the_original(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A two-pool site whose suspects outnumber its cleared nodes: the retest renders."""
    from nvcregen.chain.model import Options
    from nvcregen.chain.sites import compile_sites
    from nvcregen.emit.canonical import dump_yaml, load_yaml_plain
    from nvcregen.retest.sitefile import retest_data

    data = load_yaml_plain(four_node_text())
    assert isinstance(data, dict)
    (pool,) = data["spec"]["nodePools"]
    second = {**pool, "name": "h20b", "nodes": ["node-e", "node-f", "node-g"]}
    pool["nodes"] = ["node-a", "node-b", "node-c", "node-d"]
    data["spec"]["nodePools"].append(second)
    for stage in data["spec"]["readiness"]["stages"]:
        stage["pool"] = "h20"
    data["spec"]["readiness"]["stages"].append(
        {**data["spec"]["readiness"]["stages"][1], "name": "two-node-b", "pool": "h20b"}
    )
    pool_of = {n: p["name"] for p in data["spec"]["nodePools"] for n in p["nodes"]}
    nodes = [verdict(n, "suspect", ("node-a", "node-b")) for n in ("node-a", "node-b", "node-c")]
    nodes += [verdict("node-e", "suspect", ("node-e", "node-f"))]
    nodes += [verdict(n, "cleared") for n in ("node-d", "node-f", "node-g")]
    plan = plan_retest(nodes, pool_of)
    assert [b.pairs for b in plan.batches] == [
        (Pair("node-a", "node-d"),),
        (Pair("node-b", "node-d"),),
        (Pair("node-c", "node-d"),),
        (Pair("node-e", "node-f"),),
    ]
    (tmp_path / "sites").mkdir()
    (tmp_path / "sites" / "two.yaml").write_text(dump_yaml(data))
    retest = retest_data(data, plan, pool_of)
    (tmp_path / "sites" / "two-retest.yaml").write_text(dump_yaml(retest))
    assert [p["nodes"] for p in retest["spec"]["nodePools"]] == [
        ["node-a", "node-d"],
        ["node-b", "node-d"],
        ["node-c", "node-d"],
        ["node-e", "node-f"],
    ]
    monkeypatch.chdir(tmp_path)
    results = compile_sites(tmp_path, [], Options())
    errors = [d.message for r in results for d in r.diagnostics if d.severity == "error"]
    assert errors == []
    assert all(r.tree is not None for r in results)


def test_an_nvcre_mode_retest_uses_the_original_nvcre_and_its_monitoring(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """NVCRE is installed once per cluster: the retest adds readiness runs, nothing else."""
    from nvcregen.chain.model import Options
    from nvcregen.chain.sites import compile_sites
    from nvcregen.emit.canonical import dump_yaml, load_yaml_plain
    from nvcregen.retest.sitefile import retest_data

    (tmp_path / "sites").mkdir()
    shutil.copy(ROOT / "sites" / "h20-3e-lab.yaml", tmp_path / "sites")
    data = load_yaml_plain((ROOT / "sites" / "h20-3e-lab.yaml").read_text())
    assert isinstance(data, dict) and data["spec"]["readiness"].get("engine", "nvcre") == "nvcre"
    nodes = [verdict("node-a", "suspect", ("node-a", "node-x")), verdict("node-b", "cleared")]
    pool_of = {"node-a": "h20", "node-b": "h20"}
    retest = retest_data(data, plan_retest(nodes, pool_of), pool_of)
    assert retest["spec"]["nvcre"]["managed"] is False
    (tmp_path / "sites" / "h20-3e-lab-retest.yaml").write_text(dump_yaml(retest))
    monkeypatch.chdir(tmp_path)
    results = compile_sites(tmp_path, [], Options())
    errors = [d.message for r in results for d in r.diagnostics if d.severity == "error"]
    assert errors == []
    (mine,) = [r for r in results if r.site == "h20-3e-lab-retest"]
    assert mine.tree is not None
    kinds = {located.obj["kind"] for located in mine.objects}
    assert "WorkloadRun" in kinds  # the two-node test, on the original's NVCRE
    assert not kinds & {"Namespace", "ServiceMonitor", "PrometheusRule", "HelmRelease", "Role"}


def test_a_retest_of_a_periodic_site_runs_once() -> None:
    """The retest's stages are renamed and it must leave no CronJob: periodic is dropped."""
    from periodicfactory import periodic_text
    from sitefactory import catalog, parse

    from nvcregen.emit.canonical import dump_yaml, load_yaml_plain
    from nvcregen.retest.sitefile import retest_data
    from nvcregen.validate.semantic import check_references

    data = load_yaml_plain(periodic_text())
    assert isinstance(data, dict)
    assert "periodic" in data["spec"]["readiness"]
    pool_of = {"node-a": "h20", "node-b": "h20"}
    nodes = [verdict("node-a", "suspect", ("node-a", "node-b")), verdict("node-b", "cleared")]
    retest = retest_data(data, plan_retest(nodes, pool_of), pool_of)
    assert "periodic" not in retest["spec"]["readiness"]
    assert "periodic" in data["spec"]["readiness"]  # the original is left as it was
    site, doc = parse(dump_yaml(retest))
    assert [d.code for d in check_references(site, catalog(), doc) if d.is_error] == []
