"""The queues layer (nvcregen.compile.queue.objects): Kueue objects, valid and sufficient.

Every Kueue object goes through the same check machinery as render (vendored v1beta2
schema and its CEL rules); the ClusterQueue must cover every resource a readiness pod
requests, since Kueue's default BlockUndeclared makes such a run inadmissible.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from sitefactory import POOL, parse, plan_of, site_yaml
from trainerfactory import example_text, trainer_text

from nvcregen.check.objectcheck import object_findings
from nvcregen.compile.layers import site_manifests
from nvcregen.compile.postprocess import postprocess
from nvcregen.core.manifest import Manifest
from nvcregen.kubeschema.registry import default_registry

ROOT = Path(__file__).resolve().parents[3]
LAB = ROOT / "sites" / "h20-3e-lab.yaml"
KUEUE_KINDS = {"Topology", "ResourceFlavor", "ClusterQueue", "LocalQueue", "WorkloadPriorityClass"}
Obj = dict[str, Any]

SELECTOR_POOLS = """\
- name: h100
  model: H100
  selector: {node.kubernetes.io/instance-type: h100-8x}
  nodeCount: 4
  nics: {count: 2, fabric: ib, speed: 400Gb/s, hcas: [mlx5_0, mlx5_1], resourceName: rdma/ib}
- name: l20
  model: L20
  productLabels: [NVIDIA-L20, NVIDIA-L20-48GB]
  nodes: [l20-1, l20-2]
  nics: {count: 2, fabric: roce, speed: 200Gb/s, hcas: [mlx5_0, mlx5_1], resourceName: rdma/roce}
"""
TWO_POOL_STAGES = """\
- {name: fabric, scope: inter-node, pool: h100, nodesPerJob: 2, tests: [nccl-all-reduce]}
- {name: pairs, scope: inter-node, pool: l20, tests: [nccl-all-reduce]}
"""


def layers(text: str) -> list[Manifest]:
    site, _ = parse(text)
    built = site_manifests(plan_of(site), ROOT)
    return postprocess(built, site, "sites/lab.yaml")


def queues(found: list[Manifest]) -> dict[str, Obj]:
    return {m.kind: m.obj for m in found if m.component == "queues" and m.kind != "ResourceFlavor"}


def flavors(found: list[Manifest]) -> list[Obj]:
    return [m.obj for m in found if m.kind == "ResourceFlavor"]


def nominal(cluster_queue: Obj) -> dict[str, dict[str, Any]]:
    (group,) = cluster_queue["spec"]["resourceGroups"]
    return {
        f["name"]: {r["name"]: r["nominalQuota"] for r in f["resources"]} for f in group["flavors"]
    }


def lab_text() -> str:
    return LAB.read_text(encoding="utf-8")


def two_pools_text() -> str:
    return site_yaml(pools=SELECTOR_POOLS, stages=TWO_POOL_STAGES)


SITES: dict[str, Callable[[], str]] = {
    "h20-3e-lab (NVCRE)": lab_text,
    "h20-3e-trainer": example_text,
    "two pools": two_pools_text,
}


@pytest.fixture(scope="module", params=sorted(SITES))
def built(request: pytest.FixtureRequest) -> list[Manifest]:
    return layers(SITES[request.param]())


# Validity


def test_every_kueue_object_passes_the_vendored_schema_and_cel(built: list[Manifest]) -> None:
    kueue = [m for m in built if m.obj["apiVersion"].startswith("kueue.x-k8s.io/")]
    trainer = any(m.kind == "TrainJob" and m.component == "readiness" for m in built)
    assert {m.kind for m in kueue} == KUEUE_KINDS | ({"Workload"} if trainer else set())
    for manifest in kueue:
        assert manifest.obj["apiVersion"] == "kueue.x-k8s.io/v1beta2"
        assert default_registry().crd("kueue.x-k8s.io/v1beta2", manifest.kind) is not None
        assert object_findings(manifest.obj) == [], manifest.name


def test_a_flavor_missing_a_covered_resource_fails_kueues_cel_rule() -> None:
    cluster_queue = copy.deepcopy(queues(layers(example_text()))["ClusterQueue"])
    cluster_queue["spec"]["resourceGroups"][0]["flavors"][0]["resources"].pop()
    codes = {f.code for f in object_findings(cluster_queue)}
    assert "NVC610" in codes


# BlockUndeclared: every resource a readiness pod asks for is covered


def _requested(value: Any) -> Iterator[str]:
    """Every resource a run asks for: pod `limits` and `requests`, NVCRE's counts."""
    if isinstance(value, dict):
        for key, item in value.items():
            if key in {"limits", "requests"} and isinstance(item, dict):
                yield from (k for k, v in item.items() if not isinstance(v, dict))
            elif key == "gpusPerNode":
                yield "nvidia.com/gpu"
            elif key == "nicResourceName":
                yield item
            yield from _requested(item)
    elif isinstance(value, list):
        for item in value:
            yield from _requested(item)


def test_the_cluster_queue_covers_every_resource_a_run_requests(built: list[Manifest]) -> None:
    runs = [m.obj for m in built if m.component in {"readiness", "preview"}]
    requested = {name for obj in runs for name in _requested(obj)}
    (group,) = queues(built)["ClusterQueue"]["spec"]["resourceGroups"]
    assert requested, "no run requests anything: the walk is broken"
    assert requested | {"pods"} <= set(group["coveredResources"])
    for flavor in group["flavors"]:  # Kueue's CEL: every flavor lists every covered resource
        assert [r["name"] for r in flavor["resources"]] == group["coveredResources"]


def test_the_lab_sites_quota_never_exceeds_the_pool() -> None:
    for text in (LAB.read_text(encoding="utf-8"), example_text()):
        ((_, quota),) = nominal(queues(layers(text))["ClusterQueue"]).items()
        # two nodes of 8 GPUs and 8 NICs; maxConcurrentJobs 2 x a two-node job would be 32
        assert (quota["nvidia.com/gpu"], quota["rdma/hca"]) == (16, 16)


def test_each_pool_has_its_flavor_and_its_own_nic_resource() -> None:
    found = layers(site_yaml(pools=SELECTOR_POOLS, stages=TWO_POOL_STAGES))
    names = {f["metadata"]["name"].rsplit("-", 1)[0]: f["metadata"]["name"] for f in flavors(found)}
    quota = nominal(queues(found)["ClusterQueue"])
    h100, l20 = quota[names["lab-h100"]], quota[names["lab-l20"]]
    assert (h100["rdma/ib"], h100["rdma/roce"]) == (8, 0)
    assert (l20["rdma/ib"], l20["rdma/roce"]) == (0, 4)
    assert (h100["nvidia.com/gpu"], l20["nvidia.com/gpu"]) == (32, 16)


# ResourceFlavors


def test_flavor_labels_follow_the_pool() -> None:
    found = layers(site_yaml(pools=SELECTOR_POOLS, stages=TWO_POOL_STAGES))
    by_pool = {f["metadata"]["name"].rsplit("-", 1)[0]: f["spec"] for f in flavors(found)}
    assert by_pool["lab-h100"]["nodeLabels"] == {
        "nvidia.com/gpu.present": "true",
        "node.kubernetes.io/instance-type": "h100-8x",
        "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3",
    }
    # two product labels cannot be one label value: the runs' affinity tells them apart
    assert by_pool["lab-l20"]["nodeLabels"] == {"nvidia.com/gpu.present": "true"}
    assert {spec["topologyName"] for spec in by_pool.values()} == {"lab-nodes"}


def test_a_flavor_whose_labels_change_gets_a_new_name() -> None:
    # nodeLabels are immutable once a flavor names a topology: a change is a new object.
    before = flavors(layers(site_yaml()))[0]["metadata"]["name"]
    labelled = POOL.replace("  model: H100\n", "  model: H100\n  productLabels: [X]\n")
    after = flavors(layers(site_yaml(pools=labelled)))
    assert after[0]["metadata"]["name"] != before


def test_the_topology_is_the_node() -> None:
    topology = queues(layers(site_yaml()))["Topology"]
    assert topology["spec"] == {"levels": [{"nodeLabel": "kubernetes.io/hostname"}]}


# ClusterQueue, LocalQueue, priorities


def test_the_cluster_queue_serves_the_readiness_namespace_only_and_never_preempts() -> None:
    found = queues(layers(site_yaml()))
    spec = found["ClusterQueue"]["spec"]
    assert spec["namespaceSelector"] == {"matchLabels": {"kubernetes.io/metadata.name": "nvcre"}}
    assert spec["preemption"] == {"withinClusterQueue": "Never", "reclaimWithinCohort": "Never"}
    assert found["LocalQueue"]["metadata"] == {
        **found["LocalQueue"]["metadata"],
        "name": "readiness",
        "namespace": "nvcre",
    }
    assert found["LocalQueue"]["spec"] == {"clusterQueue": "lab-readiness"}


def test_a_priority_class_per_stage_earlier_first() -> None:
    found = layers(site_yaml())
    classes = {
        m.obj["metadata"]["name"]: m.obj["value"]
        for m in found
        if m.kind == "WorkloadPriorityClass"
    }
    assert classes == {"lab-node": 200, "lab-fabric": 100}


def test_an_external_kueue_gets_only_a_bound_local_queue() -> None:
    bound = "kueue: {managed: false, localQueue: gpu, clusterQueue: shared-gpus}\n"
    found = [m for m in layers(site_yaml(dependencies=bound)) if m.component == "queues"]
    assert [(m.kind, m.obj["spec"]) for m in found] == [
        ("LocalQueue", {"clusterQueue": "shared-gpus"})
    ]
    named = "kueue: {managed: false, localQueue: gpu}\n"
    assert not [m for m in layers(site_yaml(dependencies=named)) if m.component == "queues"]


def test_a_gang_scheduler_site_has_no_kueue_at_all() -> None:
    gang = "gangScheduler: {schedulerName: kai-scheduler}\n"
    found = layers(site_yaml(dependencies=gang))
    assert not [m for m in found if "kueue" in m.obj["apiVersion"] or "kueue" in m.name]


def test_trainer_mode_has_the_same_queues() -> None:
    kinds = {m.kind for m in layers(trainer_text(site_yaml())) if m.component == "queues"}
    assert kinds == KUEUE_KINDS
