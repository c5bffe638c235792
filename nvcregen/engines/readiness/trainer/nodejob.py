"""Trainer mode's per-node tests: a batch/v1 Job per test, round and node (pure).

Every kind that runs once on each node (`TestKind.per_node`: DCGM diagnostics, node
health, burn-in, nvbandwidth, the RDMA rails, link counters) runs this way, its script
the one its kind names (`nodescript.py`).

As the field report ran DCGM before NVCRE: an ordinary Job holding every GPU of one node
(its RDMA NICs too, for a test over them), running the kind's script under an outer
`timeout` with a 10 s kill grace, so a hung run still prints its exit code and whatever
it produced to the pod's log; a kind whose script binds its log to its node prints a
first line naming the node and the pod (downward API) and the start time, by which
`nvcregen collect` binds the log to its node (`results/nodebind.py`). Each Job is pinned
to its node by name and still scheduled, so it waits for the node's GPUs instead of
failing admission; it names the site's LocalQueue, and Kueue admits it only when that
node has its GPUs free (docs/design/0007-admission.md).
"""

from __future__ import annotations

from nvcregen.compile.queue.prebuilt import with_prebuilt
from nvcregen.compile.queue.workloads import queue_labels, topology_annotations
from nvcregen.compile.readiness.components import READINESS as COMPONENT
from nvcregen.compile.readiness.mpi import node_affinity
from nvcregen.compile.readiness.network import pod_network
from nvcregen.compile.readiness.nodescript import node_container
from nvcregen.compile.readiness.pods import devices, pod_resources, tolerations
from nvcregen.core.labels import NODES
from nvcregen.core.manifest import Manifest, Obj, content_hash
from nvcregen.engines.readiness.trainer.runs import (
    run_labels,
    trainer_run_name,
    unit_catalog,
    unit_source,
    window_seconds,
)
from nvcregen.plan.model import TestUnit
from nvcregen.spec.v1alpha1 import Site


def node_jobs(site: Site, unit: TestUnit) -> list[Manifest]:
    """One Job per round and node of the pool; the pool must name its nodes (NVC321)."""
    nodes = unit.pool.spec.nodes
    if nodes is None:
        raise ValueError(f"{unit.test.name}: trainer mode pins per-node Jobs to named nodes")
    jobs = [
        node_job(site, unit, round_, (index, node))
        for round_ in range(1, site.spec.readiness.rounds + 1)
        for index, node in enumerate(nodes)
    ]
    return with_prebuilt(site, unit.stage_index, jobs)


def node_job(site: Site, unit: TestUnit, round_: int, node: tuple[int, str]) -> Manifest:
    """The Job of one round of a per-node test on one node."""
    index, name = node
    labels = run_labels(site, unit, round_)
    container = node_container(site, unit)
    # Every GPU of the node; its RDMA NICs too for a test over them (RDMA rails), which
    # also lock their memory (IPC_LOCK) and reach the NICs through the pool's pod network.
    container["resources"] = pod_resources(unit, devices(unit))
    net = pod_network(unit)
    if unit.nic_resource is not None or unit.network == "rdma":
        container["securityContext"] = {"capabilities": {"add": ["IPC_LOCK"]}}
    pod: Obj = {
        "restartPolicy": "Never",
        # No nodeSelector: Kueue writes the flavor's node labels into it at admission, and
        # it is one atomic field to server-side apply, so a second sync (Flux always
        # applies server-side, with force) would take it back from a running Job, whose
        # template is immutable. The affinity pins the node; the flavor adds the rest.
        "affinity": node_affinity(unit.pool.product_labels, (name,)),
        "containers": [container],
        **net.fields,
    }
    if found := tolerations(unit.pool):
        pod["tolerations"] = found
    template: Obj = {"labels": labels}
    if annotations := net.annotations | topology_annotations(site, 1):  # one pod, one node
        template["annotations"] = annotations
    spec: Obj = {
        "backoffLimit": 0,  # a failed diagnostic is a result, not something to retry
        "activeDeadlineSeconds": window_seconds(site),
        "template": {"metadata": template, "spec": pod},
    }
    metadata: Obj = {
        "name": trainer_run_name(site, unit, content_hash(spec), f"-r{round_}-n{index}"),
        "namespace": site.spec.nvcre.namespace,
        "labels": labels | queue_labels(site, unit.stage_index),
        "annotations": {NODES: name},
    }
    obj = {"apiVersion": "batch/v1", "kind": "Job", "metadata": metadata, "spec": spec}
    return Manifest(obj, COMPONENT, unit_source(unit), unit_catalog(unit))
