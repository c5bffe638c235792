"""`retest --rail NODE/HCA` and the rails `retest` names (issue #36): a failing rail of a
run is re-run on its node alone (a loopback) or beside a cleared node (a pair's suspect).

A four-node trainer-mode site whose intra-node stage also runs `rdma-rails`, collected
from saved logs: every rail passes (the public H200 sample's table, its 8 MiB row lifted
to 196 Gb/s on the example's 200 Gb/s NICs) but node-a's mlx5_3, whose client hit
perftest's completion error (the public capture).
"""

from __future__ import annotations

import zlib
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from oncallfactory import site_text, write_logs

from nvcregen.catalog.load import Catalog
from nvcregen.cli import main
from nvcregen.fabric.inventory import Inventory
from nvcregen.plan.model import TestUnit
from nvcregen.plan.resolve import plan as resolve_plan
from nvcregen.results.nodes import NodeRun, NodeVerdict
from nvcregen.retest.pairs import plan_retest
from nvcregen.retest.rails import failing_rails, rail_lines, rail_target
from nvcregen.retest.railsite import switch_ports
from nvcregen.spec.v1alpha1 import Site

ROOT = Path(__file__).resolve().parent.parent
CAPTURES = ROOT / "tests" / "fixtures" / "captures" / "perftest"
PASSING = (
    (CAPTURES / "write-bw-gbits-h200-cuda-dmabuf.txt")
    .read_text()
    .replace(
        " 8388608    5000             140.55             140.40",
        " 8388608    5000             196.55             196.40",
    )
)
FAILED = (CAPTURES / "write-bw-gbits-host-completion-error.txt").read_text()
HCAS = [f"mlx5_{i}" for i in range(8)]
STAGE = "      - name: single-node\n        scope: intra-node\n        tests: ["


def rails_log(job: str, node: str, bad: str = "") -> str:
    crc = zlib.crc32(job.encode())
    pod = f"{job}-{crc % 36**5:05x}"[: len(job) + 6]
    text = f"@@nvcregen-rdma begin node={node} pod={pod} start=2026-12-03T10:00:00Z\n"
    for hca in HCAS:
        body, rc = (FAILED, 1) if hca == bad else (PASSING, 0)
        text += f"@@nvcregen-rdma rail begin hca={hca} gpu=0 numa=0\n{body}"
        text += f"@@nvcregen-rdma rail end hca={hca} rc={rc} server_rc=0\n"
    return text + "@@nvcregen-rdma end rc=0\n"


def collected(tmp: Path) -> tuple[Path, Path]:
    """The run's folder and its site, node-a's mlx5_3 failing its loopback."""
    text = site_text().replace(STAGE, STAGE + "rdma-rails, ", 1)
    site = tmp / "site.yaml"
    site.write_text(text, encoding="utf-8")
    saved = write_logs(tmp / "saved", text)
    for log in (saved / "logs").rglob("*rdma-rails*.log"):
        objects = yaml.safe_load((saved / "objects.yaml").read_text())["items"]
        (job,) = [o for o in objects if o["metadata"]["name"] == log.stem]
        node = job["metadata"]["annotations"]["nvcregen.io/nodes"]
        log.write_text(rails_log(log.stem, node, "mlx5_3" if node == "node-a" else ""))
    args = ["collect", "--site", str(site), "--from", str(saved), "--out", str(tmp / "results")]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 1, result.output  # node-a failed
    (run,) = (tmp / "results" / "h20-3e-four").iterdir()
    return run, site


@pytest.mark.slow
def test_retest_names_the_failing_rail_and_retest_rail_reruns_it_alone(tmp_path: Path) -> None:
    run, site = collected(tmp_path)
    runner = CliRunner()
    plain = runner.invoke(main, ["retest", str(run), "--out", str(tmp_path / "r.yaml"),
                                 "--site", str(site)])  # fmt: skip
    assert plain.exit_code == 0, plain.output
    assert (
        "rail node-a mlx5_3: failed alone; once repaired, `nvcregen retest --rail"
        " node-a/mlx5_3` re-runs its node's test\n"
    ) in plain.output
    out = tmp_path / "rail.yaml"
    args = ["retest", str(run), "--out", str(out), "--site", str(site), "--rail", "node-a/mlx5_3"]
    rail = runner.invoke(main, args)
    assert rail.exit_code == 0, rail.output
    assert rail.output.splitlines()[0] == (
        "retest h20-3e-four-retest: rail node-a mlx5_3: single-node / rdma-rails on node-a"
        " alone (every rail of the node)"
    )
    data = yaml.safe_load(out.read_text())
    (pool,) = data["spec"]["nodePools"]
    assert pool["nodes"] == ["node-a"]
    (stage,) = data["spec"]["readiness"]["stages"]
    assert (stage["scope"], stage["tests"]) == ("intra-node", ["rdma-rails"])
    assert "# Rail node-a mlx5_3 failed alone (its node's own test):\n" in out.read_text()
    assert runner.invoke(main, ["validate", str(out)]).exit_code == 0
    other = runner.invoke(main, [*args[:-1], "node-a/mlx5_2"])
    assert other.exit_code == 2
    assert (
        "NVC792: --rail node-a/mlx5_2: no rail that failed in this run (its failing rails:"
        " node-a/mlx5_3)"
    ) in other.output


def verdict(node: str, status: str, reason: str, runs: tuple[NodeRun, ...] = ()) -> NodeVerdict:
    word = "pass" if status == "cleared" else "fail"
    return NodeVerdict(node=node, status=status, word=word, reasons=(reason,), runs=runs)


def test_the_rails_a_reason_names_are_the_sites_hcas_beside_the_node() -> None:
    pair = "only in failing groups of two-node / rdma-rails-pair g0 with node-b: round 1:"
    pair += " RailFailed: NVC832: node-a -> node-b mlx5_3 (node-a: leaf-a 1/3): 140.40 Gb/s"
    assert failing_rails(verdict("node-a", "suspect", pair), HCAS) == ("mlx5_3",)
    assert failing_rails(verdict("node-b", "suspect", pair), HCAS) == ("mlx5_3",)
    assert failing_rails(verdict("node-c", "suspect", pair), HCAS) == ()  # not its rail
    assert failing_rails(verdict("node-a", "cleared", pair), HCAS) == ()
    ports = "failed alone in s / link-counters: NVC762: node-a mlx5_1 port 1 (leaf leaf-0"
    ports += ", switch port leaf-0 E1/1): grew; node-a (leaf leaf-0) mlx5_10: traffic failed"
    assert failing_rails(verdict("node-a", "failed", ports), [*HCAS, "mlx5_10"]) == (
        "mlx5_1",
        "mlx5_10",
    )  # mlx5_1 is no prefix of mlx5_10: names end at their own characters
    assert failing_rails(verdict("node-a", "failed", "node-a mlx5_99: x"), HCAS) == ()
    assert failing_rails(verdict("node-a", "failed", "1: node-a mlx5_3: x"), HCAS) == ("mlx5_3",)
    assert failing_rails(verdict("node-a", "failed", "node-a mlx5_3:1 x"), HCAS) == ()


def test_retest_rail_of_a_pairs_suspect_and_the_lines_naming_it() -> None:
    pair = "only in failing groups of two-node / rdma-rails-pair g0 with node-b: round 1:"
    pair += " RailFailed: node-a -> node-b mlx5_3: no rail measured"
    run = NodeRun(stage="two-node", test="rdma-rails-pair", nodes=("node-a", "node-b"),
                  word="fail")  # fmt: skip
    nodes = [
        verdict("node-a", "suspect", pair, (run,)),
        verdict("node-b", "suspect", pair, (run,)),
        verdict("node-c", "cleared", ""),
    ]
    hcas = dict.fromkeys(("node-a", "node-b", "node-c"), tuple(HCAS))
    target = rail_target("node-b/mlx5_3", nodes, hcas)
    assert (target.node.node, target.hca, target.alone) == ("node-b", "mlx5_3", False)
    plan = plan_retest([target.node, nodes[2]], dict.fromkeys(hcas, "p"))
    lines = rail_lines(plan, {n.node: n for n in nodes}, hcas, lambda n, h: " (leaf-b 1/3)")
    assert lines == [
        "rail node-b mlx5_3 (leaf-b 1/3): re-run beside node-c (two-node / rdma-rails-pair:"
        " every rail of the pair)"
    ]


@pytest.mark.slow
def test_retest_rail_reads_the_sites_inventory_for_switch_ports_without_planning_the_site(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = yaml.safe_load((ROOT / "examples" / "fabric" / "fleet.yaml").read_text())
    inventory = (ROOT / "examples" / "fabric" / "inventory.yaml").read_text()
    cable = "  - cabling:\n      mlx5_0:\n        port: Ethernet1/12\n        switch: leaf-00\n"
    (tmp_path / "inventory.yaml").write_text(inventory.replace("  - cuda:", cable + "    cuda:", 1))
    data["spec"]["inventory"] = "inventory.yaml"
    planned: list[str] = []

    def counted(site: Site, catalog: Catalog, found: Inventory | None) -> list[TestUnit]:
        planned.append(site.metadata.name)
        return resolve_plan(site, catalog, found)

    monkeypatch.setattr("nvcregen.validate.site.plan", counted)
    ports = switch_ports(data, tmp_path)
    assert ports("gpu-0000", "mlx5_0") == " (leaf-00 Ethernet1/12)"
    assert ports("gpu-0000", "mlx5_1") == ports("gpu-0001", "mlx5_0") == ""
    assert planned == []  # the inventory alone is read, the site not loaded or planned
    # an inventory its loader refuses names no port: a missing file, a port cabled twice (NVC390)
    assert switch_ports(data, tmp_path / "elsewhere")("gpu-0000", "mlx5_0") == ""
    twice = inventory.replace("  - cuda:", cable + "    cuda:", 2)  # gpu-0000's and gpu-0001's
    (tmp_path / "inventory.yaml").write_text(twice)
    assert switch_ports(data, tmp_path)("gpu-0000", "mlx5_0") == ""
