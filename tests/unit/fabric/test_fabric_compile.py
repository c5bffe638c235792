"""What fabric-aware stages compile to: WorkloadRuns or testScales, TrainJobs, Kueue's Topology."""

from __future__ import annotations

from fabricfactory import fleet_inventory, fleet_site
from sitefactory import catalog, edit, site

from nvcregen.compile.queue.objects import queue_manifests
from nvcregen.core.manifest import Obj
from nvcregen.engines.readiness.nvcre.layer import readiness_manifests
from nvcregen.engines.readiness.trainer.layer import trainer_manifests
from nvcregen.plan.resolve import plan

LEAF = "network.topology.nvidia.com/leaf"


def compiled(text: str, count: int = 16, leaves: int = 4) -> tuple[list[Obj], list[Obj]]:
    parsed = site(text)
    units = plan(parsed, catalog(), fleet_inventory(count, leaves))
    engine = trainer_manifests if parsed.spec.readiness.engine == "trainer" else readiness_manifests
    readiness = [m.obj for m in engine(parsed, units)]
    return readiness, [m.obj for m in queue_manifests(parsed, units)]


def test_cross_leaf_is_a_workloadrun_per_leaf_pair() -> None:
    readiness, _ = compiled(fleet_site(16))
    runs = [o for o in readiness if o["kind"] == "WorkloadRun"]
    assert len(runs) == 6  # 4 leaves: 3 rounds of 2 pairs
    first = runs[0]["spec"]
    assert first["target"]["nodeNames"] == [f"gpu-{i:04d}" for i in (0, 1, 2, 3, 12, 13, 14, 15)]
    assert (first["numNodes"], first["orchestration"]["testScale"]) == (8, "full-scale")
    assert len({r["metadata"]["name"] for r in runs}) == 6


def test_pool_and_diagnose_are_nvcre_test_scales() -> None:
    readiness, _ = compiled(fleet_site(16, "pool"))
    (cert,) = [o for o in readiness if o["kind"] == "Certification"]
    options = cert["spec"]["categories"][0]["options"]
    assert (options["testScale"], options["nodesPerJob"]) == ("full-scale", 16)
    readiness, _ = compiled(fleet_site(16, "diagnose"))
    (cert,) = [o for o in readiness if o["kind"] == "Certification"]
    options = cert["spec"]["categories"][0]["options"]
    assert (options["testScale"], options["minGroupSize"]) == ("diagnose", 2)
    assert options["nodesPerJob"] == 2  # 16 nodes over the 64 jobs the window runs at once
    readiness, _ = compiled(
        edit(fleet_site(64, "diagnose"), "maxConcurrentJobs: 64", "maxConcurrentJobs: 5"), 64, 8
    )
    (cert,) = [o for o in readiness if o["kind"] == "Certification"]
    assert cert["spec"]["categories"][0]["options"]["nodesPerJob"] == 13  # ceil(64 / 5)
    assert cert["spec"]["maxConcurrent"] == 5  # the window's


def test_accelerator_is_intra_rack_only_on_nvcres_clique_label() -> None:
    clique = "fabric: {levels: {accelerator: nvidia.com/gpu.clique, leaf: " + LEAF + "}}"
    text = edit(fleet_site(16, "accelerator"), "fabric: {}", clique)
    parsed = site(text)
    units = plan(parsed, catalog(), fleet_inventory(16, 4))
    (cert,) = [
        m.obj for m in readiness_manifests(parsed, units) if m.obj["kind"] == "Certification"
    ]
    assert cert["spec"]["categories"][0]["options"]["testScale"] == "intra-rack"


def test_trainer_leaf_groups_stay_in_their_leaf() -> None:
    text = edit(fleet_site(16, "leaf"), "  readiness:\n", "  readiness:\n    engine: trainer\n")
    readiness, queues = compiled(text)
    jobs = [o for o in readiness if o["kind"] == "TrainJob"]
    assert [j["spec"]["trainer"]["numNodes"] for j in jobs] == [4, 4, 4, 4]
    (runtime,) = [o for o in readiness if o["kind"] == "TrainingRuntime"]
    pods = [
        j["template"]["spec"]["template"]["metadata"]["annotations"]
        for j in runtime["spec"]["template"]["spec"]["replicatedJobs"]
    ]
    assert {a.get("kueue.x-k8s.io/podset-required-topology") for a in pods} == {
        "kubernetes.io/hostname",  # the launcher: one pod
        LEAF,
    }
    topologies = {o["metadata"]["name"]: o for o in queues if o["kind"] == "Topology"}
    levels = [lv["nodeLabel"] for lv in topologies["fleet-fabric"]["spec"]["levels"]]
    assert levels == [
        "network.topology.nvidia.com/core",
        "network.topology.nvidia.com/spine",
        LEAF,
        "network.topology.nvidia.com/accelerator",
        "kubernetes.io/hostname",
    ]
    (flavor,) = [o for o in queues if o["kind"] == "ResourceFlavor"]
    assert flavor["spec"]["topologyName"] == "fleet-fabric"


def test_a_site_without_fabric_keeps_one_topology() -> None:
    text = edit(fleet_site(16), "      fabric: {}\n", "")
    parsed = site(edit(text, "        groups: cross-leaf\n", ""))
    queues = queue_manifests(parsed, plan(parsed, catalog()))
    assert [m.obj["metadata"]["name"] for m in queues if m.obj["kind"] == "Topology"] == [
        "fleet-nodes"
    ]
