"""RDMA rails logs judged HCA by HCA (issue #36, item 2): a failing rail names node + HCA.

The perftest output in each rail is the public H200 GPUDirect sample (140.40 Gb/s at
8 MiB, tests/fixtures/captures/perftest/PROVENANCE.md); the markers are the script's.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from rdmasamples import FAILED, H200, HCAS
from sitefactory import catalog, parse
from trainerfactory import EXAMPLE, compiled, of_kind, without_packing

from nvcregen.fabric.inventory import Inventory, InventoryNode, SwitchPort
from nvcregen.kinds.rdma.kind import KIND as RDMA
from nvcregen.kinds.rdma.logs import read_rails
from nvcregen.plan.model import TestUnit
from nvcregen.plan.resolve import plan
from nvcregen.results.logrecords import RunLog
from nvcregen.results.logruns import assemble_log_runs
from nvcregen.results.models import RunState
from nvcregen.results.nodes import judge_nodes
from nvcregen.retest.pairs import plan_retest

ROOT = Path(__file__).resolve().parents[4]
STAGE = "      - name: single-node\n        scope: intra-node\n        tests: ["
TEXT = without_packing(EXAMPLE.read_text()).replace(STAGE, STAGE + "rdma-rails, ", 1)


def rails_unit(speed: str = "145Gb/s", floor: float = 0.95) -> TestUnit:
    site, _ = parse(TEXT.replace("speed: 200Gb/s", f"speed: {speed}"))
    unit = next(u for u in plan(site, catalog()) if u.test.name == "rdma-rails")
    rdma = RDMA.block(unit.test).model_copy(update={"floor": floor})
    return replace(unit, test=unit.test.model_copy(update={"rdma": rdma}))


def rail(hca: str, body: str, rc: int | None = 0) -> str:
    text = f"@@nvcregen-rdma rail begin hca={hca} gpu=0 numa=0\n{body}"
    return text + (
        "" if rc is None else f"@@nvcregen-rdma rail end hca={hca} rc={rc} server_rc=0\n"
    )


def rails_log(bodies: dict[str, tuple[str, int | None]], node: str = "gpu-00") -> str:
    text = f"@@nvcregen-rdma begin node={node} pod=rails-x7k2p start=2026-12-06T09:19:12Z\n"
    text += "".join(rail(h, b, rc) for h, (b, rc) in bodies.items())
    return text + "@@nvcregen-rdma end rc=0\n"


def every(body: str, rc: int | None = 0) -> dict[str, tuple[str, int | None]]:
    return dict.fromkeys(HCAS, (body, rc))


BASE = {"path": "logs/nvcre/x.log", "nodes": ("gpu-00",)}


def test_every_rail_above_its_floor_passes() -> None:
    # 145 Gb/s NICs: floor 137.75 Gb/s; the sample's 140.40 passes on every HCA
    record = read_rails(rails_log(every(H200.read_text())), BASE, rails_unit())
    assert (record["status"], record["errors"]) == ("ok", ())


def test_floor_boundary_and_the_rail_named() -> None:
    at = read_rails(rails_log(every(H200.read_text())), BASE, rails_unit("280.8Gb/s", 0.5))
    assert at["status"] == "ok"  # 0.5 x 280.8 = 140.4 exactly: at the floor passes
    below = read_rails(rails_log(every(H200.read_text())), BASE, rails_unit("280.8Gb/s", 0.5001))
    assert below["status"] == "failed" and len(below["errors"]) == 8
    assert below["errors"][3] == (
        "NVC832: gpu-00 mlx5_3: 140.40 Gb/s at 8MiB, below the floor 140.428 Gb/s "
        "(0.5001 of 280.8 Gb/s)"
    )


def test_a_figure_above_the_line_rate_is_not_evidence() -> None:
    record = read_rails(rails_log(every(H200.read_text())), BASE, rails_unit("140Gb/s", 0.5))
    assert record["status"] == "failed"
    assert record["errors"][0] == (
        "NVC830: gpu-00 mlx5_0: 140.40 Gb/s at 8MiB is above the NIC's line rate 140 Gb/s: "
        "not evidence"
    )
    exact = read_rails(rails_log(every(H200.read_text())), BASE, rails_unit("140.4Gb/s", 0.5))
    assert exact["status"] == "ok"  # at the line rate is possible


def test_missing_failed_and_unended_rails() -> None:
    bodies = every(H200.read_text())
    del bodies["mlx5_7"]
    bodies["mlx5_1"] = (FAILED.read_text(), 1)
    bodies["mlx5_2"] = (H200.read_text().split(" 4194304")[0], None)  # never ended
    record = read_rails(rails_log(bodies), BASE, rails_unit())
    assert record["status"] == "failed"
    assert record["errors"] == (
        "gpu-00 mlx5_1: failed: line 41: Completion with error at client; "
        "line 42: Failed status 10: wr_id 0 syndrom 0x88; "
        "line 44: Failed to complete run_iter_bw function successfully",
        "gpu-00 mlx5_7: no rail measured (the log has no section of it)",
    )
    unended = every(H200.read_text())
    unended["mlx5_2"] = (H200.read_text().split(" 4194304")[0], None)
    assert read_rails(rails_log(unended), BASE, rails_unit())["status"] == "truncated"


def test_collect_names_the_failing_rail_in_the_failed_node_entry() -> None:
    site, _ = parse(TEXT)
    units = plan(site, catalog())
    unit = next(u for u in units if u.test.name == "rdma-rails")
    jobs = of_kind(compiled(TEXT), "Job", "rdma-rails")
    bodies = every(H200.read_text())  # the example pool's NICs are 200 Gb/s: 140.40 is low
    first = (unit.pool.spec.nodes or [""])[0]
    logs = [
        RunLog("nvcre", j["metadata"]["name"], rails_log(bodies, first).encode())
        for j in jobs
        if j["metadata"]["name"].endswith("-r1-n0")
    ]
    assert len(logs) == 1
    results = assemble_log_runs(site.metadata.name, [unit], 1, logs, [])
    (run,) = results.runs.runs
    assert run.state == RunState.FAILED
    node = unit.pool.spec.nodes[0] if unit.pool.spec.nodes else ""
    failed = [f for f in run.failed_nodes if f.name == node]
    assert failed and failed[0].reason == "RailFailed"
    assert (
        f"NVC832: {node} mlx5_3: 140.40 Gb/s at 8MiB, below the floor 190 Gb/s" in failed[0].message
    )


def test_the_node_verdict_and_retest_name_the_rail() -> None:
    site, _ = parse(TEXT)
    units = plan(site, catalog())
    unit = next(u for u in units if u.test.name == "rdma-rails")
    jobs = of_kind(compiled(TEXT), "Job", "rdma-rails")
    first = (unit.pool.spec.nodes or [""])[0]
    logs = [
        RunLog("nvcre", j["metadata"]["name"], rails_log(every(H200.read_text()), first).encode())
        for j in jobs
        if j["metadata"]["name"].endswith("-r1-n0")
    ]
    runs = assemble_log_runs(site.metadata.name, [unit], 1, logs, []).runs
    verdicts = judge_nodes(site, runs, {}, 1)
    node = unit.pool.spec.nodes[0] if unit.pool.spec.nodes else ""
    (failed,) = [v for v in verdicts if v.node == node]
    assert failed.status == "failed"
    assert "RailFailed" in failed.reasons[0] and f"{node} mlx5_0: 140.40 Gb/s" in failed.reasons[0]
    retest = plan_retest(verdicts, dict.fromkeys(unit.pool.spec.nodes or (), "h20"))
    assert [v.node for v in retest.failed] == [node]  # failed alone: named, not re-paired
    assert not any(node in (p.suspect, p.cleared) for b in retest.batches for p in b.pairs)


def test_a_rails_log_from_another_node_is_not_its_runs_evidence() -> None:
    """Found by review: the begin line was never read; the record took the plan's node as
    its host, so a passing log of gpu-99 (or one with no begin line) cleared gpu-00."""
    passing = rails_log(every(H200.read_text()), "gpu-99")
    record = read_rails(passing, BASE, rails_unit())
    assert record["status"] == "foreign" and "NVC730" in record["errors"][0]
    assert "from node gpu-99" in record["errors"][0]
    own = read_rails(rails_log(every(H200.read_text())), BASE, rails_unit())
    assert (own["status"], own["hosts"]) == ("ok", ("gpu-00",))  # the node the log names
    headless = passing.split("\n", 1)[1]  # the begin line deleted
    unbound = read_rails(headless, BASE, rails_unit(), names_itself=True)
    assert unbound["status"] == "foreign"


def cabled_unit(unit: TestUnit, **ports: str) -> TestUnit:
    """The unit with an inventory whose cabling map gives gpu-00's HCAs these ports."""
    cabling = {hca: SwitchPort("leaf-07", port) for hca, port in ports.items()}
    inventory = Inventory("nodes.yaml", {"gpu-00": InventoryNode("gpu-00", cabling=cabling)})
    return replace(unit, pool=replace(unit.pool, inventory=inventory))


def test_a_failing_rail_names_its_switch_port_where_the_inventory_knows_it() -> None:
    bodies = every(H200.read_text())
    del bodies["mlx5_7"]
    unit = cabled_unit(rails_unit("280.8Gb/s", 0.5001), mlx5_3="Ethernet1/12", mlx5_7="Eth1/16")
    record = read_rails(rails_log(bodies), BASE, unit)
    assert record["errors"][3] == (
        "NVC832: gpu-00 mlx5_3 (leaf-07 Ethernet1/12): 140.40 Gb/s at 8MiB, below the floor"
        " 140.428 Gb/s (0.5001 of 280.8 Gb/s)"
    )
    assert record["errors"][2].startswith("NVC832: gpu-00 mlx5_2: 140.40")  # not in the map
    assert record["errors"][-1] == (
        "gpu-00 mlx5_7 (leaf-07 Eth1/16): no rail measured (the log has no section of it)"
    )
    plain = read_rails(rails_log(bodies), BASE, rails_unit("280.8Gb/s", 0.5001))
    assert plain["errors"][3].startswith("NVC832: gpu-00 mlx5_3: 140.40")  # no map: as before
    other = cabled_unit(rails_unit("280.8Gb/s", 0.5001), mlx5_3="Ethernet1/12")
    other = replace(other, pool=replace(other.pool, inventory=Inventory("x", {})))
    assert read_rails(rails_log(bodies), BASE, other)["errors"] == plain["errors"]
