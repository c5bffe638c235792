"""Tests of trainer mode's TrainingRuntimes and TrainJobs (trainer/trainjobs.py).

The done-means assertions of issue #7 run on the example site `sites/h20-3e-trainer.yaml`
(two H20-3e nodes, `readiness.engine: trainer`); factory sites cover selector pools.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

import pytest
from sitefactory import POOL, edit, parse, site_yaml, units_of
from trainerfactory import (
    NCCL_ONLY,
    SELECTOR_POOL,
    compiled,
    example_manifests,
    example_text,
    jobs_named,
    of_kind,
    pinned_nodes,
    stage_of,
    trainer_text,
)

from nvcregen.check.crossref import Located
from nvcregen.check.objectcheck import object_findings
from nvcregen.check.webhooks import check_runtimes
from nvcregen.compile.postprocess import PRUNE_PROTECTION
from nvcregen.compile.readiness.mpi import RUN_NAME_MAX
from nvcregen.core.manifest import Manifest

RFC1035 = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
HCAS = "=" + ",".join(f"mlx5_{i}" for i in range(8))
WINDOW_S = 16 * 3600  # the example's window.deadline
Obj = dict[str, Any]


@pytest.fixture(scope="module")
def example() -> list[Manifest]:
    return list(example_manifests())


def env_of(job: Obj) -> dict[str, str]:
    return {e["name"]: e["value"] for e in job["spec"]["trainer"]["env"]}


def x_pairs(job: Obj) -> dict[str, str]:
    """The `-x NAME=value` pairs of a TrainJob's mpirun arguments."""
    args = job["spec"]["trainer"]["args"]
    values = [args[i + 1] for i, a in enumerate(args) if a == "-x" and "=" in args[i + 1]]
    return dict(v.split("=", 1) for v in values)


# Which objects


def test_example_site_objects_per_test_round_and_node(example: list[Manifest]) -> None:
    runtimes = of_kind(example, "TrainingRuntime")
    trainjobs = of_kind(example, "TrainJob")
    jobs = of_kind(example, "Job")
    assert {m.kind for m in example} == {"TrainingRuntime", "TrainJob", "Job", "Workload"}
    # Kueue's Workload of each run, written by nvcregen (prebuilt): one per TrainJob and Job
    assert len(of_kind(example, "Workload")) == len(trainjobs) + len(jobs)
    assert {m.component for m in example} == {"readiness"}
    # One runtime per NCCL test of a stage: 3 single-node, 4 two-node.
    assert Counter(stage_of(r) for r in runtimes) == {"single-node": 3, "two-node": 4}
    # Per round (3): each single-node test on each of the 2 nodes, each two-node test once.
    assert Counter(stage_of(j) for j in trainjobs) == {"single-node": 18, "two-node": 12}
    # DCGM: levels 1 and 2, 3 rounds, 2 nodes.
    assert len(jobs) == 12
    assert {o["metadata"]["namespace"] for m in example for o in [m.obj]} == {"nvcre"}


def test_every_object_is_prune_protected(example: list[Manifest]) -> None:
    for manifest in example:
        annotations = manifest.obj["metadata"]["annotations"]
        assert PRUNE_PROTECTION.items() <= annotations.items(), manifest.name


# TrainJobs


def test_rdma_trainjobs_carry_8_gpus_the_rdma_resource_and_pinned_ib(
    example: list[Manifest],
) -> None:
    two_node = [j for j in of_kind(example, "TrainJob") if stage_of(j) == "two-node"]
    rdma = [
        j for j in two_node if j["metadata"]["labels"]["nvcregen.io/test"] != "nccl-all-reduce-tcp"
    ]
    assert len(rdma) == 9
    for job in rdma:
        trainer = job["spec"]["trainer"]
        assert trainer["numNodes"] == 2
        assert trainer["numProcPerNode"] == 8
        assert trainer["resourcesPerNode"] == {
            "requests": {"cpu": "8", "memory": "32Gi"},  # catalog/pods.yaml: never BestEffort
            "limits": {"nvidia.com/gpu": 8, "rdma/hca": 8, "memory": "64Gi"},
        }
        for env in (env_of(job), x_pairs(job)):
            assert env["NCCL_NET"] == "IB"
            assert env["NCCL_IB_HCA"] == HCAS
            assert "NCCL_IB_DISABLE" not in env
        annotations = job["metadata"]["annotations"]
        assert annotations["nvcregen.io/expected-transport"] == "IB"
        assert annotations["nvcregen.io/expected-gdrdma"] == "true"


def test_tcp_baseline_uses_sockets_and_no_rdma_nics(example: list[Manifest]) -> None:
    tcp = of_kind(example, "TrainJob", "nccl-all-reduce-tcp")
    assert len(tcp) == 3
    for job in tcp:
        trainer = job["spec"]["trainer"]
        assert trainer["numProcPerNode"] == 8
        assert trainer["resourcesPerNode"] == {
            "requests": {"cpu": "8", "memory": "32Gi"},
            "limits": {"nvidia.com/gpu": 8, "memory": "64Gi"},
        }
        for env in (env_of(job), x_pairs(job)):
            assert env["NCCL_NET"] == "Socket"
            assert env["NCCL_IB_DISABLE"] == "1"
            assert "NCCL_IB_HCA" not in env
        assert job["metadata"]["annotations"]["nvcregen.io/expected-transport"] == "Socket"
        assert "nvcregen.io/expected-gdrdma" not in job["metadata"]["annotations"]


def test_mpirun_runs_every_rank_of_the_group(example: list[Manifest]) -> None:
    for job in of_kind(example, "TrainJob"):
        trainer = job["spec"]["trainer"]
        args = trainer["args"]
        ranks = trainer["numNodes"] * trainer["numProcPerNode"]
        assert args[:4] == ["/usr/local/mpi/bin/mpirun", "--allow-run-as-root", "-np", str(ranks)]
        test = job["metadata"]["labels"]["nvcregen.io/test"]
        binary = {"nccl-all-gather": "all_gather_perf_mpi", "nccl-alltoall": "alltoall_perf_mpi"}
        assert binary.get(test.removesuffix("-tcp"), "all_reduce_perf_mpi") in " ".join(args)
        assert args[args.index("-b") + 1] == "8"
        # The script runs mpirun as "$@": the arguments stay visible in the object.
        assert trainer["command"][:2] == ["/bin/bash", "-c"]
        assert re.search(r'timeout --kill-after=10s \d+s "\$@"\n', trainer["command"][2])


def test_intra_node_trainjobs_request_no_nics_and_run_8_ranks(example: list[Manifest]) -> None:
    single = [j for j in of_kind(example, "TrainJob") if stage_of(j) == "single-node"]
    for job in single:
        trainer = job["spec"]["trainer"]
        assert trainer["numNodes"] == 1
        assert trainer["resourcesPerNode"] == {
            "requests": {"cpu": "8", "memory": "32Gi"},
            "limits": {"nvidia.com/gpu": 8, "memory": "64Gi"},
        }
        assert "NCCL_NET" not in env_of(job)
        assert "nvcregen.io/expected-transport" not in job["metadata"]["annotations"]


def test_active_deadline_is_the_test_window_and_the_run_ends_inside_it(
    example: list[Manifest],
) -> None:
    timeouts = {(u.stage.name, u.test.name): u.timeout_ms // 1000 for u in units_of(example_text())}
    for job in of_kind(example, "TrainJob"):
        assert job["spec"]["activeDeadlineSeconds"] == WINDOW_S
        outer = re.search(r"timeout --kill-after=10s (\d+)s", job["spec"]["trainer"]["command"][2])
        assert outer is not None
        timeout = timeouts[stage_of(job), job["metadata"]["labels"]["nvcregen.io/test"]]
        assert int(outer[1]) == timeout - 60  # a minute before the test's own timeout
    # The physics timeouts differ per test: two-node all-to-all is expected to take 35m.
    assert timeouts["two-node", "nccl-alltoall"] == 70 * 60
    assert timeouts["single-node", "nccl-all-gather"] == 9 * 60


def test_each_group_is_pinned_to_its_nodes(example: list[Manifest]) -> None:
    for job in of_kind(example, "TrainJob"):
        (patch,) = job["spec"]["runtimePatches"]
        assert patch["manager"] == "nvcregen.io/placement"
        patched = patch["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"]
        names = [p["name"] for p in patched]
        nodes = job["metadata"]["annotations"]["nvcregen.io/nodes"].split(",")
        if stage_of(job) == "two-node":
            assert names == ["launcher", "node"]
            assert nodes == ["node-a", "node-b"]
        else:
            assert names == ["launcher"]
        for p in patched:
            assert pinned_nodes(p["template"]["spec"]["template"]["spec"]) == nodes
    single = of_kind(example, "TrainJob", "nccl-all-reduce")
    per_node = Counter(
        j["metadata"]["annotations"]["nvcregen.io/nodes"]
        for j in single
        if stage_of(j) == "single-node"
    )
    assert per_node == {"node-a": 3, "node-b": 3}  # every node, every round


def test_names_are_short_rfc1035_labels_unique_per_round(example: list[Manifest]) -> None:
    names = [m.name for m in example]
    assert len(set(names)) == len(names)
    for manifest in example:
        assert RFC1035.match(manifest.name), manifest.name
        # a run's Workload is `<run>-workload`, within the 63 of the label that names it
        limits = {"TrainingRuntime": 52, "Workload": RUN_NAME_MAX + len("-workload")}
        limit = limits.get(manifest.kind, RUN_NAME_MAX)
        assert len(manifest.name) <= limit, manifest.name
    for job in of_kind(example, "TrainJob") + of_kind(example, "Job"):
        round_ = job["metadata"]["labels"]["nvcregen.io/round"]
        assert re.search(rf"-r{round_}-[gn]\d+$", job["metadata"]["name"])
        # The test stays readable in the name (the site is dropped first when too long).
        assert job["metadata"]["labels"]["nvcregen.io/test"] in job["metadata"]["name"]
    assert RUN_NAME_MAX == 44


def test_a_changed_spec_gets_new_names() -> None:
    text = example_text()
    before = {m.name for m in compiled(text)}
    after = {m.name for m in compiled(edit(text, "rounds: 3", "rounds: 1"))}
    assert after < before  # same specs, fewer rounds
    changed = compiled(edit(text, "deadline: 16h", "deadline: 15h"))
    runs = {m.name for m in changed if m.kind in {"TrainJob", "Job"}}
    runtimes = {m.name for m in changed if m.kind == "TrainingRuntime"}
    assert len(runs) == 42
    assert not runs & before  # activeDeadlineSeconds is immutable: every run is new
    assert runtimes <= before  # the runtimes did not change


# TrainingRuntimes


def test_two_node_runtime_is_mpi_with_sshd_workers_and_the_pinned_image(
    example: list[Manifest],
) -> None:
    site, _ = parse(example_text())
    image = site.spec.images.nccl
    for runtime in (r for r in of_kind(example, "TrainingRuntime") if stage_of(r) == "two-node"):
        spec = runtime["spec"]
        assert spec["mlPolicy"] == {
            "mpi": {
                "mpiImplementation": "OpenMPI",
                "numProcPerNode": 8,
                "sshAuthMountPath": "/tmp/mpi-ssh-raw",
                "runLauncherAsNode": True,
            }
        }
        assert runtime["metadata"]["labels"]["trainer.kubeflow.org/framework"] == "mpi"
        assert runtime["metadata"]["annotations"]["argocd.argoproj.io/sync-wave"] == "-1"
        template = spec["template"]["spec"]
        assert [j["name"] for j in template["replicatedJobs"]] == ["node", "launcher"]
        assert template["successPolicy"] == {
            "operator": "All",
            "targetReplicatedJobs": ["launcher"],
        }
        jobs = jobs_named(runtime)
        launcher, worker = jobs["launcher"], jobs["node"]
        assert launcher["template"]["metadata"]["labels"] == {
            "trainer.kubeflow.org/trainjob-ancestor-step": "trainer"
        }
        assert launcher["dependsOn"] == [{"name": "node", "status": "Ready"}]
        assert "dependsOn" not in worker
        assert launcher["template"]["spec"]["backoffLimit"] == 0
        (sshd,) = worker["template"]["spec"]["template"]["spec"]["containers"]
        assert sshd["name"] == "node"
        assert sshd["image"] == image
        script = sshd["command"][2]
        # openssh-server is installed only when the image has no sshd.
        assert "test -x /usr/sbin/sshd || (apt-get update && apt-get install" in script
        assert script.count("apt-get install") == 1
        assert script.rstrip().endswith("exec /usr/sbin/sshd -De")
        assert sshd["readinessProbe"]["tcpSocket"] == {"port": 22}
        for job in (launcher, worker):
            pod = job["template"]["spec"]["template"]["spec"]
            (container,) = pod["containers"]
            assert container["name"] == "node"
            assert container["image"] == image
            assert container["securityContext"]["capabilities"]["add"] == ["IPC_LOCK"]
            assert {"name": "dshm", "emptyDir": {"medium": "Memory"}} in pod["volumes"]
            assert pod["restartPolicy"] in {"Never", "OnFailure"}


def test_one_node_runtime_has_no_worker_job(example: list[Manifest]) -> None:
    for runtime in (r for r in of_kind(example, "TrainingRuntime") if stage_of(r) == "single-node"):
        assert list(jobs_named(runtime)) == ["launcher"]
        assert "dependsOn" not in jobs_named(runtime)["launcher"]


def test_every_trainjob_names_a_generated_runtime(example: list[Manifest]) -> None:
    located = [Located(m.name, m.obj) for m in example]
    assert list(check_runtimes(located)) == []
    runtimes = {m.name for m in example if m.kind == "TrainingRuntime"}
    refs = {j["spec"]["runtimeRef"]["name"] for j in of_kind(example, "TrainJob")}
    assert refs == runtimes


# Validation


def test_every_object_passes_the_upstream_schemas_cel_and_webhook_rules(
    example: list[Manifest],
) -> None:
    for manifest in example:
        assert object_findings(manifest.obj, kube_version="1.30") == [], manifest.name


def test_every_object_of_a_selector_pool_site_passes_too() -> None:
    text = trainer_text(site_yaml(pools=SELECTOR_POOL, stages=NCCL_ONLY))
    found = compiled(text)
    assert found
    for manifest in found:
        assert object_findings(manifest.obj, kube_version="1.30") == [], manifest.name


# Selector pools


def test_a_selector_pool_gets_one_unpinned_trainjob_per_round() -> None:
    found = compiled(trainer_text(site_yaml(pools=SELECTOR_POOL, stages=NCCL_ONLY, rounds=2)))
    trainjobs = of_kind(found, "TrainJob")
    assert Counter(stage_of(j) for j in trainjobs) == {"node": 2, "fabric": 2}
    for job in trainjobs:
        assert "runtimePatches" not in job["spec"]
        assert job["metadata"]["name"].endswith(
            f"-r{job['metadata']['labels']['nvcregen.io/round']}"
        )
    for runtime in of_kind(found, "TrainingRuntime"):
        for job in jobs_named(runtime).values():
            pod = job["template"]["spec"]["template"]["spec"]
            assert pod["nodeSelector"] == {
                "nvidia.com/gpu.present": "true",
                "node.kubernetes.io/instance-type": "h100-8x",
            }
            (term,) = pod["affinity"]["nodeAffinity"][
                "requiredDuringSchedulingIgnoredDuringExecution"
            ]["nodeSelectorTerms"]
            assert "matchFields" not in term


def test_nodes_left_after_the_last_full_group_are_not_tested() -> None:
    pools = POOL.replace("nodes: [gpu-1, gpu-2]", "nodes: [gpu-1, gpu-2, gpu-3]")
    found = compiled(trainer_text(site_yaml(pools=pools, stages=NCCL_ONLY)))
    fabric = [j for j in of_kind(found, "TrainJob") if stage_of(j) == "fabric"]
    assert [j["metadata"]["annotations"]["nvcregen.io/nodes"] for j in fabric] == ["gpu-1,gpu-2"]
    node = [j for j in of_kind(found, "TrainJob") if stage_of(j) == "node"]
    assert len(node) == 3
