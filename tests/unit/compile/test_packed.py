"""Tests of trainer mode's packed runs (plan/packs.py, trainer/packed.py).

The shipped `sites/h20-3e-trainer.yaml` packs its runs; `tests/fixtures/perrun/` holds its
per-run copy.
"""

from __future__ import annotations

import os
import subprocess
from collections import Counter
from typing import Any

import pytest
from sitefactory import catalog, parse
from trainerfactory import EXAMPLE, SHIPPED, compiled, of_kind, pinned_nodes, without_packing

from nvcregen.compile.readiness.nodescript import node_script
from nvcregen.core.manifest import Manifest
from nvcregen.engines.readiness.trainer.packed import node_pack_script
from nvcregen.plan.packs import CHUNK, site_packs
from nvcregen.plan.resolve import plan
from tools.fleetsite import fleet_site

Obj = dict[str, Any]
RUN_KINDS = {"TrainJob", "Job", "JobSet"}


@pytest.fixture(scope="module")
def shipped() -> list[Manifest]:
    return compiled(SHIPPED.read_text(encoding="utf-8"))


def sections(container_command: list[str]) -> list[tuple[str, str, str]]:
    """The (test, deadline, script) triples a pack's command passes its script."""
    args = container_command[4:]
    assert len(args) % 3 == 0
    return [(args[i], args[i + 1], args[i + 2]) for i in range(0, len(args), 3)]


def test_the_tests_per_run_copy_differs_from_the_shipped_site_only_in_packing() -> None:
    shipped, copy = SHIPPED.read_text(encoding="utf-8"), EXAMPLE.read_text(encoding="utf-8")
    assert "    packing: packed\n" in shipped and "    packing: perRun\n" in copy
    assert without_packing(shipped) == without_packing(copy)


def test_the_shipped_site_packs_each_stage_into_a_run_per_round(shipped: list[Manifest]) -> None:
    runs = [m for m in shipped if m.kind in RUN_KINDS]
    found = Counter(
        (m.kind, m.obj["metadata"]["labels"]["nvcregen.io/stage"],
         m.obj["metadata"]["annotations"]["nvcregen.io/tests"])
        for m in runs
    )  # fmt: skip
    assert found == {
        ("Job", "single-node", "dcgm-l1,dcgm-l2"): 3,
        ("Job", "single-node", "nccl-all-reduce,nccl-all-gather,nccl-alltoall"): 3,
        ("TrainJob", "two-node",
         "nccl-all-reduce,nccl-all-gather,nccl-alltoall,nccl-all-reduce-tcp"): 3,
    }  # fmt: skip
    # one runtime for the inter-node pack; the intra-node tests need none
    assert len(of_kind(shipped, "TrainingRuntime")) == 1
    assert len(of_kind(shipped, "Workload")) == len(runs)  # a prebuilt Workload each
    labels = {m.obj["metadata"]["labels"]["nvcregen.io/test"] for m in runs}
    assert labels == {"pack-0", "pack-1"}


def test_a_node_pack_is_an_indexed_job_one_pod_per_node(shipped: list[Manifest]) -> None:
    site, _ = parse(SHIPPED.read_text(encoding="utf-8"))
    units = {(u.stage.name, u.test.name): u for u in plan(site, catalog())}
    (job,) = [
        j
        for j in of_kind(shipped, "Job", "pack-0")
        if j["metadata"]["labels"]["nvcregen.io/round"] == "2"
    ]
    spec = job["spec"]
    assert (spec["completionMode"], spec["completions"], spec["parallelism"]) == ("Indexed", 2, 2)
    assert spec["backoffLimitPerIndex"] == 0 and "backoffLimit" not in spec
    assert job["metadata"]["name"].endswith("-r2-c0")
    assert job["metadata"]["annotations"]["nvcregen.io/nodes"] == "node-a,node-b"
    pod = spec["template"]["spec"]
    assert pinned_nodes(pod) == ["node-a", "node-b"]
    (container,) = pod["containers"]
    assert container["resources"]["limits"]["nvidia.com/gpu"] == 8  # a whole node each
    assert container["command"][:2] == ["/bin/bash", "-c"]
    assert [e["name"] for e in container["env"]] == ["NODE_NAME", "POD_NAME"]
    found = sections(container["command"])
    assert [t for t, _, _ in found] == ["dcgm-l1", "dcgm-l2"]
    for test, deadline, script in found:
        unit = units[("single-node", test)]
        assert int(deadline) == unit.timeout_ms // 1000  # each test its own deadline
        assert script == node_script(site, unit)  # what its own Job would run


def test_a_node_packs_nccl_tests_run_on_the_node_alone(shipped: list[Manifest]) -> None:
    job = of_kind(shipped, "Job", "pack-1")[0]
    (container,) = job["spec"]["template"]["spec"]["containers"]
    found = sections(container["command"])
    assert [t for t, _, _ in found] == ["nccl-all-reduce", "nccl-all-gather", "nccl-alltoall"]
    for _, _, script in found:
        assert "mpirun --allow-run-as-root --host localhost:8 -np 8" in script
        assert "NCCL_NET" not in script  # inside one node: no network pinned
    assert container["resources"]["requests"]["cpu"] == "8"  # an NCCL pod's size
    # Found by review: as every per-run MPI pod, the ranks lock memory and share a
    # memory-backed /dev/shm (the runtime's 64 MiB default fails NCCL's SHM transport)
    pod = job["spec"]["template"]["spec"]
    (volume,) = pod["volumes"]
    assert volume["emptyDir"] == {"medium": "Memory"}
    assert container["volumeMounts"] == [{"name": volume["name"], "mountPath": "/dev/shm"}]
    assert container["securityContext"] == {"capabilities": {"add": ["IPC_LOCK"]}}
    (dcgm,) = of_kind(shipped, "Job", "pack-0")[:1]
    dcgm_pod = dcgm["spec"]["template"]["spec"]
    assert "volumes" not in dcgm_pod  # DCGM alone needs neither
    assert "securityContext" not in dcgm_pod["containers"][0]


def test_a_group_pack_runs_every_test_of_a_pair_in_one_trainjob(shipped: list[Manifest]) -> None:
    jobs = of_kind(shipped, "TrainJob")
    assert sorted(j["metadata"]["name"][-6:] for j in jobs) == ["-r1-g0", "-r2-g0", "-r3-g0"]
    trainer = jobs[0]["spec"]["trainer"]
    assert "args" not in trainer and trainer["numNodes"] == 2
    found = {t: s for t, _, s in sections(trainer["command"])}
    assert list(found) == [
        "nccl-all-reduce", "nccl-all-gather", "nccl-alltoall", "nccl-all-reduce-tcp"
    ]  # fmt: skip
    assert "-x NCCL_NET=IB" in found["nccl-all-reduce"]
    assert "-x NCCL_NET=Socket -x NCCL_IB_DISABLE=1" in found["nccl-all-reduce-tcp"]
    assert all("-np 16" in s for s in found.values())
    patch = jobs[0]["spec"]["runtimePatches"][0]["trainingRuntimeSpec"]["template"]["spec"]
    assert [j["name"] for j in patch["replicatedJobs"]] == ["launcher", "node"]
    (runtime,) = of_kind(shipped, "TrainingRuntime")
    (launcher,) = [
        j for j in runtime["spec"]["template"]["spec"]["replicatedJobs"] if j["name"] == "launcher"
    ]
    pod = launcher["template"]["spec"]["template"]
    assert "roce-0" in pod["metadata"]["annotations"]["k8s.v1.cni.cncf.io/networks"]
    assert pod["spec"]["containers"][0]["resources"]["limits"]["rdma/hca"] == 8


def _packed_site(nodes: int, concurrent: int) -> str:
    text = fleet_site(nodes)
    return text.replace(
        f"maxConcurrentJobs: {min(nodes, 1024)}", f"maxConcurrentJobs: {concurrent}"
    )


@pytest.mark.parametrize(
    ("nodes", "concurrent", "sizes"),
    [
        (CHUNK, 1024, [CHUNK]),  # at the chunk: one Job
        (CHUNK + 1, 1024, [CHUNK, 1]),  # one over: a second Job
        (8, 4, [4, 4]),  # never more nodes than the quota admits at once
        (8, 3, [3, 3, 2]),
    ],
)
def test_node_packs_are_chunked_by_64_and_by_the_window(
    nodes: int, concurrent: int, sizes: list[int]
) -> None:
    site, _ = parse(_packed_site(nodes, concurrent))
    packs = site_packs(site, plan(site, catalog()))
    node_pack = next(p for p in packs if p.per_node)
    assert [len(c) for c in node_pack.chunks()] == sizes
    flat = [n for c in node_pack.chunks() for n in c]
    assert flat == list(site.spec.node_pools[0].nodes or [])  # every node once, in order


def test_per_run_and_lone_tests_are_not_packed() -> None:
    per_run = compiled(EXAMPLE.read_text(encoding="utf-8"))
    assert not [
        m for m in per_run if "nvcregen.io/tests" in m.obj["metadata"].get("annotations", {})
    ]
    # a stage whose only test is alone in its pack keeps runs of its own
    text = SHIPPED.read_text(encoding="utf-8").replace(
        "tests: [dcgm-l1, dcgm-l2, nccl-all-reduce, nccl-all-gather, nccl-alltoall]",
        "tests: [dcgm-l1, nccl-all-reduce, nccl-all-gather]",
    )
    found = compiled(text)
    singles = {j["metadata"]["labels"]["nvcregen.io/test"] for j in of_kind(found, "Job")}
    assert singles == {"dcgm-l1", "pack-0"}  # dcgm-l1 per node; the two NCCL tests packed


@pytest.mark.slow
def test_a_1024_node_copy_fits_the_issue_budget_and_objects_per_node_do_not_grow() -> None:
    per_node = {}
    for nodes in (1024, 4096):
        found = compiled(fleet_site(nodes))
        runs = [m for m in found if m.kind in RUN_KINDS]
        per_node[nodes] = len(found) / nodes
        if nodes == 1024:
            assert len(found) <= 4096, len(found)
            assert len(runs) <= 2048, len(runs)
    assert per_node[4096] <= per_node[1024]


@pytest.mark.slow
def test_the_node_script_runs_every_test_and_fails_when_one_did(tmp_path: Any) -> None:
    site, _ = parse(SHIPPED.read_text(encoding="utf-8"))
    packs = site_packs(site, plan(site, catalog()))
    script = node_pack_script(packs[0])
    args = [
        "first", "5", "echo one; exit 0",
        "second", "5", "echo two >&2; exit 3",
        "third", "1", "sleep 30",  # past its deadline: stopped, the next still runs
        "fourth", "5", "echo four",
    ]  # fmt: skip
    env = {"PATH": os.environ["PATH"], "NODE_NAME": "node-a", "POD_NAME": "pod-0"}
    done = subprocess.run(
        ["/bin/bash", "-c", script, "nvcregen-pack", *args],
        capture_output=True, text=True, env=env, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 1
    lines = [line for line in done.stdout.splitlines() if line.startswith("@@")]
    begins = [line for line in lines if " begin " in line]
    assert [b.split()[2] for b in begins] == [
        "test=first",
        "test=second",
        "test=third",
        "test=fourth",
    ]
    assert all(" node=node-a pod=pod-0 start=" in b for b in begins)
    ends = [line for line in lines if " end " in line]
    assert ends == [
        "@@nvcregen-pack end test=first rc=0",
        "@@nvcregen-pack end test=second rc=3",
        "@@nvcregen-pack end test=third rc=124",
        "@@nvcregen-pack end test=fourth rc=0",
    ]
    ok = subprocess.run(
        ["/bin/bash", "-c", script, "nvcregen-pack", "only", "5", "true"],
        capture_output=True, text=True, env=env, timeout=60, check=False,
    )  # fmt: skip
    assert ok.returncode == 0
    unnamed = subprocess.run(
        ["/bin/bash", "-c", script, "nvcregen-pack", "only", "5", "true"],
        capture_output=True, text=True, env={"PATH": os.environ["PATH"]}, timeout=60, check=False,
    )  # fmt: skip
    assert unnamed.returncode != 0 and "NODE_NAME is not set" in unnamed.stderr
