"""The rdmapair kind (issue #36, item 2): RDMA rails between two nodes, server then client."""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

import pytest
from rdmasamples import FAKE_TOOL, SAMPLE
from sitefactory import catalog, parse
from trainerfactory import EXAMPLE, compiled, jobs_named, of_kind, pinned_nodes, without_packing

from nvcregen.compile.templating import render_packaged
from nvcregen.core import codes
from nvcregen.engines.readiness.trainer.pairjobs import kind_pair_scripts
from nvcregen.fabric.groups import paired, plan_groups
from nvcregen.fabric.placement import Placement
from nvcregen.kindapi.protocol import FixedTime
from nvcregen.kindapi.registry import kind_of
from nvcregen.kinds.rdmapair.kind import KIND as RDMAPAIR
from nvcregen.kinds.rdmapair.kind import READY_FILE
from nvcregen.plan.resolve import plan
from nvcregen.plan.rungroups import node_groups
from nvcregen.validate.semantic import check_references

TWO_NODE = "tests: [nccl-all-reduce, nccl-all-gather, nccl-alltoall, nccl-all-reduce-tcp]"


def pair_site(text: str | None = None, *, nodes: str = "node-a, node-b") -> str:
    """The example trainer site (one run per test) with the pair test in its two-node stage."""
    text = without_packing(EXAMPLE.read_text()) if text is None else text
    assert TWO_NODE in text and "nodes: [node-a, node-b]" in text
    text = text.replace(TWO_NODE, "tests: [rdma-rails-pair, nccl-all-reduce]")
    return text.replace("nodes: [node-a, node-b]", f"nodes: [{nodes}]")


def pair_unit(text: str):  # type: ignore[no-untyped-def]
    site, _ = parse(text)
    return site, next(u for u in plan(site, catalog()) if u.test.name == "rdma-rails-pair")


def test_catalog_entry_kind_and_time() -> None:
    test = catalog().tests["rdma-rails-pair"]
    kind = kind_of(test)
    layout = (kind.name, kind.pair, kind.per_node, kind.collective)
    assert layout == ("rdmapair", True, False, False)
    assert test.scopes == ["inter-node"] and test.transport == "rdma"
    assert RDMAPAIR.block(test).floor == 0.95
    assert kind.fixed_time(test, "15s") == FixedTime(
        195.0,
        "15s start-up + the servers listening (at most 60s) + ib_write_bw on every HCA,"
        " one after the other 2m",
    )
    assert not kind_of(catalog().tests["rdma-rails"]).pair  # the loopback is not a pair


def test_pairs_are_the_nccl_pairs_of_the_stage_in_pool_order() -> None:
    site, unit = pair_unit(pair_site(nodes="node-a, node-b, node-c, node-d, node-e"))
    assert unit.nodes_per_job == 2 and unit.grouping is None
    nccl = next(u for u in plan(site, catalog()) if u.test.name == "nccl-all-reduce"
                and u.stage.scope == "inter-node")  # fmt: skip
    assert node_groups(unit) == node_groups(nccl) == [("node-a", "node-b"), ("node-c", "node-d")]


def test_a_pair_is_two_nodes_whatever_the_stages_nodes_per_job() -> None:
    text = pair_site(nodes="node-a, node-b, node-c, node-d")
    assert "        nodesPerJob: 2\n" in text
    site, unit = pair_unit(text.replace("        nodesPerJob: 2\n", "", 1))
    nccl = next(u for u in plan(site, catalog()) if u.test.name == "nccl-all-reduce"
                and u.stage.scope == "inter-node")  # fmt: skip
    assert nccl.nodes_per_job == 4  # the NCCL test spans the pool
    assert unit.nodes_per_job == 2
    assert node_groups(unit) == [("node-a", "node-b"), ("node-c", "node-d")]


def test_leaf_groups_pair_inside_each_leaf_and_cross_leaf_groups_across_the_two() -> None:
    nodes = ("a0", "a1", "a2", "b0", "b1", "c0", "c1")
    leaf = {"a0": "A", "a1": "A", "a2": "A", "b0": "B", "b1": "B", "c0": "C", "c1": "C"}
    placement = Placement(nodes, leaf, {})
    same = paired(plan_groups("leaf", placement))
    assert same.kind == "leaf"
    assert same.rounds == ((("a0", "a1"), ("b0", "b1"), ("c0", "c1")),)  # a2: no partner
    across = paired(plan_groups("cross-leaf", placement))
    assert across.kind == "cross-leaf"
    # the leaves' tournament (3 leaves: 3 rounds, one idle each), each pair across its two
    assert across.rounds == (
        (("b0", "c0"), ("b1", "c1")),
        (("a0", "c0"), ("a1", "c1")),
        (("a0", "b0"), ("a1", "b1")),  # a2 has no partner under B
    )
    for round_ in across.rounds:
        for a, b in round_:
            assert leaf[a] != leaf[b]
    whole = paired(plan_groups("pool", placement))
    assert whole.rounds == ((("a0", "a1"), ("a2", "b0"), ("b1", "c0")),)


def test_nvcre_mode_refuses_the_pair_form_nvc344() -> None:
    text = pair_site().replace("    engine: trainer", "    engine: nvcre")
    site, doc = parse(text)
    (found,) = [d for d in check_references(site, catalog(), doc) if d.code == codes.NVC344.code]
    assert found.path == "/spec/readiness/stages/1/tests/0"
    assert "rdma-rails-pair needs a server listening on one node" in found.message
    assert found.hint == (
        "set readiness.engine: trainer, or use rdma-rails (the loopback, intra-node)"
    )
    site, doc = parse(pair_site())
    assert not [d for d in check_references(site, catalog(), doc) if d.code == codes.NVC344.code]


def test_a_selector_pool_is_refused_in_trainer_mode_nvc345() -> None:
    selector = "nodeCount: 2\n      selector: {pool: h20}"
    text = pair_site().replace("nodes: [node-a, node-b]", selector)
    site, doc = parse(text)
    found = [d for d in check_references(site, catalog(), doc) if d.code == codes.NVC345.code]
    assert [d.path for d in found] == ["/spec/readiness/stages/1/tests/0"]
    assert "names none" in found[0].message
    assert not [d for d in check_references(site, catalog(), doc) if d.code == codes.NVC322.code]


def test_trainer_form_server_worker_ready_when_listening_client_launcher_after_it() -> None:
    found = compiled(pair_site())
    (runtime,) = of_kind(found, "TrainingRuntime", "rdma-rails-pair")
    jobs = jobs_named(runtime)
    assert jobs["launcher"]["dependsOn"] == [{"name": "node", "status": "Ready"}]
    server = jobs["node"]["template"]["spec"]["template"]["spec"]
    (container,) = server["containers"]
    assert container["readinessProbe"]["exec"]["command"] == ["test", "-f", READY_FILE]
    assert "tcpSocket" not in container["readinessProbe"]  # a connection would use a server up
    assert "$mark-server begin node=" in container["command"][2]
    assert container["resources"]["limits"]["rdma/hca"] == 8
    assert container["securityContext"] == {"capabilities": {"add": ["IPC_LOCK"]}}
    assert server["restartPolicy"] == "Never"  # a restarted server would print a second log
    env = {e["name"] for e in container["env"]}
    assert env == {"NODE_NAME", "POD_NAME", "JOBSET_NAME"}
    trainjobs = of_kind(found, "TrainJob", "rdma-rails-pair")
    assert len(trainjobs) == 3  # one per round, one pair
    job = trainjobs[0]
    assert job["metadata"]["annotations"]["nvcregen.io/server-log"] == "node"
    assert job["metadata"]["annotations"]["nvcregen.io/nodes"] == "node-a,node-b"
    client = job["spec"]["trainer"]
    assert client["numNodes"] == 2 and "$mark-client begin node=" in client["command"][2]
    patch = job["spec"]["runtimePatches"][0]["trainingRuntimeSpec"]["template"]["spec"]
    for rjob in patch["replicatedJobs"]:
        assert pinned_nodes(rjob["template"]["spec"]["template"]["spec"]) == ["node-a", "node-b"]


def _scripts(tmp_path: Path, speed: str) -> tuple[str, str]:
    site, unit = pair_unit(pair_site().replace("speed: 200Gb/s", f"speed: {speed}"))
    found = kind_pair_scripts(site, unit)
    ready = tmp_path / "ready"
    server_values = {**found.server.values, "ready_file": str(ready),
                     "hcas": ["mlx5_0", "mlx5_1"]}  # fmt: skip
    client_values = {**found.client.values, "hcas": ["mlx5_0", "mlx5_1"]}
    assert found.server.package == found.client.package == "nvcregen.kinds.rdmapair"
    server = render_packaged(found.server.package, found.server.template, **server_values)
    client = render_packaged(found.client.package, found.client.template, **client_values)
    # the server's DNS name (JobSet's worker 0) is this machine's loopback here
    line = 'server="${JOBSET_NAME:?JOBSET_NAME is not set}-node-0-0.${JOBSET_NAME}"'
    assert line in client
    return server, client.replace(line, "server=127.0.0.1")


@pytest.mark.slow
@pytest.mark.parametrize(("speed", "exit_code"), [("200Gb/s", 1), ("145Gb/s", 0)])
def test_servers_listen_first_then_the_client_takes_each_rail(
    tmp_path: Path, speed: str, exit_code: int
) -> None:
    bash, python = shutil.which("bash"), shutil.which("python3")
    if bash is None or python is None or not Path("/proc/net/tcp").exists():
        pytest.skip("needs bash, python3 and /proc/net/tcp")
    server, client = _scripts(tmp_path, speed)
    for script in (server, client):
        assert subprocess.run([bash, "-n", "-c", script], check=False).returncode == 0
    tool = tmp_path / "ib_write_bw"
    tool.write_text(FAKE_TOOL.replace("#!/usr/bin/env python3", f"#!{python}"))
    tool.chmod(0o755)
    (tmp_path / "ib_write_bw.out").write_text(SAMPLE.read_text())
    smi = tmp_path / "nvidia-smi"
    smi.write_text("#!/bin/sh\nfor i in 0 1 2 3 4 5 6 7; do echo 00000000:1$i:00.0; done\n")
    smi.chmod(0o755)
    base = {"PATH": f"{tmp_path}:/usr/bin:/bin", "JOBSET_NAME": "pair-r1-g0"}
    served = subprocess.Popen(
        [bash, "-c", server],
        env={**base, "NODE_NAME": "node-b", "POD_NAME": "pair-r1-g0-node-0-0-x1"},
        stdout=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while not (tmp_path / "ready").exists() and time.monotonic() < deadline:
        time.sleep(0.1)  # the readiness probe: the client starts only now
    assert (tmp_path / "ready").exists()
    done = subprocess.run(
        [bash, "-c", client],
        env={**base, "NODE_NAME": "node-a", "POD_NAME": "pair-r1-g0-launcher-0-0-x2"},
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    out, _ = served.communicate(timeout=60)
    assert done.returncode == exit_code, done.stdout + done.stderr
    assert served.returncode == 0  # the server's verdict is in its log, read with the client's
    assert done.stdout.startswith("@@nvcregen-rdma-client begin node=node-a pod=pair-r1-g0-")
    assert out.startswith("@@nvcregen-rdma-server begin node=node-b pod=pair-r1-g0-node-0-0-x1")
    for hca, port in (("mlx5_0", 18515), ("mlx5_1", 18516)):
        assert f"@@nvcregen-rdma rail begin hca={hca}" in done.stdout
        assert f"-d {hca} -p {port} " in done.stdout  # the client on its server's port
        assert f"@@nvcregen-rdma rail end hca={hca} rc=0" in done.stdout
        assert f"@@nvcregen-rdma rail end hca={hca} rc=0" in out
    if exit_code:
        assert "nvcregen: mlx5_0 " in done.stdout and "below 190.0 Gb/s" in done.stdout


def test_the_budget_counts_every_pair_of_every_round_each_running_its_rails_in_turn() -> None:
    from dataclasses import replace

    from nvcregen.plan.budget import unit_cost

    site, unit = pair_unit(pair_site(nodes="a0, a1, b0, b1, c0, c1"))
    flat = unit_cost(site, unit, at_once=1)
    assert flat is not None and flat.jobs == 3  # (a0, a1), (b0, b1), (c0, c1)
    leaf = {"a0": "A", "a1": "A", "b0": "B", "b1": "B", "c0": "C", "c1": "C"}
    placement = Placement(("a0", "a1", "b0", "b1", "c0", "c1"), leaf, {})
    across = replace(unit, grouping=paired(plan_groups("cross-leaf", placement)))
    cost = unit_cost(site, across, at_once=1)
    assert cost is not None and cost.jobs == 6  # 3 rounds of 2 pairs, not 6 nodes // 2
    rounds = site.spec.readiness.rounds
    assert cost.expected_wall_hours == pytest.approx(6 * rounds * unit.expected_ms / 3_600_000)
    assert unit.expected_ms == 30_000 + 60_000 + 120_000  # a pod start, servers, the 8 rails


def test_the_budget_counts_a_run_per_group_of_every_round_for_any_grouped_test() -> None:
    """A grouped NCCL test compiles a TrainJob per group of every round (`node_groups`), so
    the budget counts as many; it counted nodes // nodesPerJob (1 here, for 3 groups),
    and fixed that for the pair form only."""
    from dataclasses import replace

    from nvcregen.plan.budget import unit_cost

    site, _ = pair_unit(pair_site(nodes="a0, a1, b0, b1, c0, c1"))
    nccl = next(u for u in plan(site, catalog()) if u.test.name == "nccl-all-reduce")
    leaf = {"a0": "A", "a1": "A", "b0": "B", "b1": "B", "c0": "C", "c1": "C"}
    grouping = plan_groups("cross-leaf", Placement(tuple(leaf), leaf, {}))
    across = replace(nccl, grouping=grouping, nodes_per_job=grouping.largest)
    compiled_jobs = len(node_groups(across))
    assert compiled_jobs == 3
    cost = unit_cost(site, across, at_once=1)
    assert cost is not None and cost.jobs == compiled_jobs
