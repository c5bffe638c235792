"""Trainer mode: the readiness plan as Kubeflow Trainer objects and plain Jobs (pure).

With `readiness.engine: trainer` NVCRE is not installed. Each NCCL test of a stage gets a
namespaced TrainingRuntime with an MPI policy, and each round and node group a TrainJob
on it; each per-node test gets a batch/v1 Job per round and node (`nodejob.py`).
Why the runtime runs the launcher as a node, and why deadlines are what they are:
docs/design/0003-trainer-mode.md.

A pool that names its nodes is split into groups of `nodesPerJob` nodes, as NVCRE splits
a pool, and every TrainJob is pinned to its group; a selector pool gets one TrainJob per
round, placed on any of its nodes by the scheduler.
"""

from __future__ import annotations

from dataclasses import replace

from nvcregen.compile.queue.prebuilt import with_prebuilt
from nvcregen.compile.queue.workloads import queue_labels, topology_annotations
from nvcregen.compile.readiness.components import READINESS as COMPONENT
from nvcregen.compile.readiness.launch import launch_of
from nvcregen.compile.readiness.mpi import (
    FRAMEWORK,
    GPU,
    GPU_PRESENT,
    LAUNCHER,
    NODE,
    RUNTIME_WAVE,
    SSH_RAW,
    dev_shm,
    mpi_runtime_spec,
    node_affinity,
    pod_template,
    replicated_job,
    runtime_object,
    runtime_ref,
    trainjob_object,
    worker_container,
)
from nvcregen.compile.readiness.network import pod_network
from nvcregen.compile.readiness.nodescript import outer_deadline_s
from nvcregen.compile.readiness.pods import pod_resources, tolerations
from nvcregen.compile.templating import render_packaged
from nvcregen.core.labels import EXPECTED_GDRDMA, EXPECTED_TRANSPORT, NODES, PLACEMENT_MANAGER
from nvcregen.core.manifest import Manifest, Obj, content_hash, hashed_name
from nvcregen.engines.readiness.trainer.runs import (
    run_labels,
    trainer_run_name,
    unit_catalog,
    unit_labels,
    unit_source,
    window_seconds,
)
from nvcregen.plan.model import TestUnit
from nvcregen.plan.rungroups import node_groups
from nvcregen.spec.v1alpha1 import Site

TEMPLATES = "nvcregen.engines.readiness.trainer"  # its templates/: the launchers' scripts
RUNTIME_NAME_MAX = 52


def nccl_manifests(site: Site, unit: TestUnit) -> list[Manifest]:
    """One TrainingRuntime for an NCCL test, and its TrainJobs per round and node group."""
    runtime = nccl_runtime(site, unit)
    jobs = [
        train_job(site, _sized(unit, group), runtime.name, round_, (index, group))
        for round_ in range(1, site.spec.readiness.rounds + 1)
        for index, group in enumerate(node_groups(unit))
    ]
    return [runtime, *with_prebuilt(site, unit.stage_index, jobs, runtime.obj)]


def _sized(unit: TestUnit, group: tuple[str, ...]) -> TestUnit:
    """The unit as one group runs it: a fabric group (a leaf, a leaf pair) has its own size."""
    if unit.grouping is None or len(group) == unit.nodes_per_job:
        return unit
    return replace(unit, nodes_per_job=len(group))


def nccl_runtime(site: Site, unit: TestUnit) -> Manifest:
    """The TrainingRuntime of an NCCL test: MPI, the launcher ranks as node 0.

    With `runLauncherAsNode`, Trainer gives `resourcesPerNode` to the launcher and the
    workers alike and makes `numNodes - 1` workers. A one-node test has no workers at all:
    a worker job would get one pod (Trainer's minimum), holding a second node's GPUs.
    """
    labels = {FRAMEWORK: "mpi", **unit_labels(site, unit)}
    net = pod_network(unit)
    placement = runtime_placement(unit) | net.fields
    resources = pod_resources(unit, resources_per_node(unit))
    launcher_pod = pod_template([launcher_container(unit.image, resources)], "Never", placement)
    launcher_pod |= pod_metadata(site, unit, 1)
    launcher = replicated_job(LAUNCHER, launcher_pod, trainer=True, backoffLimit=0)
    jobs = [launcher]
    if unit.nodes_per_job > 1:
        offline = site.spec.images.offline
        worker = worker_container(unit.image, resources, net.ssh_port, offline=offline)
        worker_pod = pod_template([worker], "OnFailure", placement)
        worker_pod |= pod_metadata(site, unit, unit.nodes_per_job - 1)
        jobs = [replicated_job(NODE, worker_pod), launcher]
        launcher["dependsOn"] = [{"name": NODE, "status": "Ready"}]  # sshd answers first
    policy = {
        "mpiImplementation": "OpenMPI",
        "numProcPerNode": unit.pool.gpus_per_node,
        "runLauncherAsNode": True,
    }
    spec = mpi_runtime_spec(policy, jobs)
    parts = [site.metadata.name, unit.stage.name, unit.test.name]
    name = hashed_name(parts, content_hash(spec), RUNTIME_NAME_MAX)
    metadata = {"labels": labels, "annotations": dict(RUNTIME_WAVE)}
    obj = runtime_object(name, site.spec.nvcre.namespace, metadata, spec)
    return Manifest(obj, COMPONENT, unit_source(unit), unit_catalog(unit))


def pod_metadata(site: Site, unit: TestUnit, pods: int) -> Obj:
    """A replicated job's pod labels, its Multus networks and Kueue topology request."""
    metadata: Obj = {"labels": unit_labels(site, unit)}
    level = domain_level(unit)
    if annotations := pod_network(unit).annotations | topology_annotations(site, pods, level):
        metadata["annotations"] = annotations
    return {"metadata": metadata}


def domain_level(unit: TestUnit) -> str | None:
    """The fabric level a run's pods must share: its leaf, or its NVLink domain (else None)."""
    fabric = unit.pool.spec.fabric
    if fabric is None or unit.grouping is None:
        return None
    if unit.grouping.kind == "leaf":
        return fabric.levels.leaf
    return fabric.levels.accelerator if unit.grouping.kind == "accelerator" else None


def runtime_placement(unit: TestUnit) -> Obj:
    """GPU nodes of the pool, tolerating its taints; named nodes are pinned per TrainJob."""
    placement: Obj = {"nodeSelector": {GPU_PRESENT: "true", **(unit.pool.spec.selector or {})}}
    if unit.pool.spec.nodes is None:
        placement["affinity"] = node_affinity(unit.pool.product_labels)
    if found := tolerations(unit.pool):
        placement["tolerations"] = found
    return placement


def launcher_container(image: str, resources: Obj) -> Obj:
    """The launcher's `node` container: the TrainJob's image and command run in it."""
    _, mount = dev_shm()
    return {
        "name": NODE,  # Trainer puts the TrainJob's trainer fields on the container `node`
        "image": image,
        "resources": resources,  # as resourcesPerNode, which Trainer sets here too
        "securityContext": {"capabilities": {"add": ["IPC_LOCK"]}},
        "volumeMounts": [mount],
    }


def train_job(
    site: Site, unit: TestUnit, runtime: str, round_: int, group: tuple[int, tuple[str, ...]]
) -> Manifest:
    """The TrainJob of one round of an NCCL test on one node group."""
    index, nodes = group
    launch = launch_of(unit)
    env = launch.env(unit)
    spec: Obj = {
        "runtimeRef": runtime_ref(runtime),
        "activeDeadlineSeconds": window_seconds(site),
        "trainer": {
            "image": unit.image,
            "command": ["/bin/bash", "-c", launcher_script(unit), "nvcregen-launcher"],
            "args": launch.command(unit, env),
            "numNodes": unit.nodes_per_job,
            "numProcPerNode": unit.pool.gpus_per_node,
            "resourcesPerNode": pod_resources(unit, resources_per_node(unit)),
            "env": [{"name": k, "value": v} for k, v in env.items()],
        },
    }
    if nodes:
        spec["runtimePatches"] = [pinned_patch(unit, nodes)]
    suffix = f"-r{round_}" + (f"-g{index}" if nodes else "")
    name = trainer_run_name(site, unit, content_hash(spec), suffix)
    labels = run_labels(site, unit, round_) | queue_labels(site, unit.stage_index)
    metadata = {"labels": labels, "annotations": _expected(unit, nodes)}
    obj = trainjob_object(name, site.spec.nvcre.namespace, metadata, spec)
    notes = tuple(t.derivation for t in unit.thresholds)
    return Manifest(obj, COMPONENT, unit_source(unit), unit_catalog(unit), notes)


def launcher_script(unit: TestUnit) -> str:
    """The launcher's command: usable SSH keys, then mpirun ("$@") under an outer deadline."""
    return render_packaged(
        TEMPLATES,
        "mpi-launcher.sh.j2",
        test=unit.test.name,
        nodes=unit.nodes_per_job,
        gpus=unit.pool.gpus_per_node,
        raw=SSH_RAW,
        port=pod_network(unit).ssh_port,
        deadline_s=outer_deadline_s(unit.timeout_ms),
    )


def resources_per_node(unit: TestUnit) -> dict[str, int]:
    """Every GPU of a node, and its RDMA NICs when the test's traffic crosses them.

    cpu and memory come on top, from the catalog (`nvcregen.compile.readiness.pods`).
    """
    limits = {GPU: unit.pool.gpus_per_node}
    if unit.nic_resource is not None:
        name, count = unit.nic_resource
        limits[name] = count
    return limits


def pinned_patch(unit: TestUnit, nodes: tuple[str, ...]) -> Obj:
    """A runtime patch keeping every pod of one TrainJob on its node group."""
    affinity = node_affinity(unit.pool.product_labels, nodes)
    names = [LAUNCHER, NODE] if unit.nodes_per_job > 1 else [LAUNCHER]
    jobs = [
        {"name": name, "template": {"spec": {"template": {"spec": {"affinity": affinity}}}}}
        for name in names
    ]
    return {
        "manager": PLACEMENT_MANAGER,
        "trainingRuntimeSpec": {"template": {"spec": {"replicatedJobs": jobs}}},
    }


def _expected(unit: TestUnit, nodes: tuple[str, ...]) -> dict[str, str]:
    """What collect should find: the transport (and GPUDirect RDMA), the nodes tested."""
    found: dict[str, str] = {}
    if unit.network == "rdma":
        found |= {EXPECTED_TRANSPORT: "IB", EXPECTED_GDRDMA: "true"}
    elif unit.network == "socket":
        found[EXPECTED_TRANSPORT] = "Socket"
    if nodes:
        found[NODES] = ",".join(nodes)
    return found
