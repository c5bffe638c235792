"""Trainer mode's packed runs: a stage's tests one after the other in one run (pure).

With `readiness.packing: packed` (`nvcregen.plan.packs`), per round:

- a node pack is one batch/v1 Job per chunk of at most 64 named nodes (never more than
  `maxConcurrentJobs`, `nvcregen.plan.packs`),
  `completionMode: Indexed` with one index per node: every pod asks for all of a node's
  GPUs, so one lands on each node of the chunk (the node affinity names them). Each pod
  runs the pack's tests in sequence (`pack-node.sh.j2`). `backoffLimitPerIndex: 0`: a
  node whose tests failed is not retried and stops no other node; the Job ends Failed
  once every node is done when any failed, so the step is not Healthy, as before;
- a group pack is one TrainJob per node group (a pair, a leaf), on one TrainingRuntime
  for the stage, its launcher running every test's `mpirun` in sequence
  (`pack-launcher.sh.j2`). The runtime carries the widest network of the pack's tests
  (an RDMA test's NICs and networks); a socket test still pins `NCCL_NET=Socket` and
  disables IB in its own `mpirun`.

Each test keeps its own deadline (`outer_deadline_s` of its timeout) and a log section
from `@@nvcregen-pack begin test=...` to `@@nvcregen-pack end test=... rc=N`, which is
exactly what its own run's log would hold; `nvcregen collect` splits the sections back
into runs per test, round and node or group (`results/packlogs.py`).
"""

from __future__ import annotations

import shlex
from dataclasses import replace

from nvcregen.compile.queue.prebuilt import with_prebuilt
from nvcregen.compile.queue.workloads import queue_labels, topology_annotations
from nvcregen.compile.readiness.components import READINESS as COMPONENT
from nvcregen.compile.readiness.launch import launch_of
from nvcregen.compile.readiness.mpi import (
    FRAMEWORK,
    GPU,
    LAUNCHER,
    NODE,
    PACK_CONTAINER,
    RUN_NAME_MAX,
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
from nvcregen.compile.readiness.nodescript import node_env, node_script, outer_deadline_s
from nvcregen.compile.readiness.pods import pod_resources, tolerations
from nvcregen.compile.templating import render_packaged
from nvcregen.core.labels import NODES, ROUND, SITE, STAGE, TEST, TESTS
from nvcregen.core.manifest import Manifest, Obj, content_hash, hashed_name
from nvcregen.engines.readiness.trainer.runs import window_seconds
from nvcregen.engines.readiness.trainer.trainjobs import (
    RUNTIME_NAME_MAX,
    TEMPLATES,
    domain_level,
    launcher_container,
    pinned_patch,
    resources_per_node,
    runtime_placement,
)
from nvcregen.kindapi.protocol import begin_env
from nvcregen.kindapi.registry import kind_of
from nvcregen.plan.model import TestUnit
from nvcregen.plan.packs import Pack
from nvcregen.plan.rungroups import node_groups
from nvcregen.spec.v1alpha1 import Site


def packed_manifests(site: Site, pack: Pack) -> list[Manifest]:
    """Every run of a pack: its Jobs (a node pack) or its runtime and TrainJobs."""
    if pack.per_node:
        return node_pack_jobs(site, pack)
    return group_pack_manifests(site, pack)


def pack_labels(site: Site, pack: Pack) -> dict[str, str]:
    """Site, stage and the pack's name as `nvcregen.io/test` (the tests are annotated)."""
    return {SITE: site.metadata.name, STAGE: pack.first.stage.name, TEST: pack.name}


def pack_run_name(site: Site, pack: Pack, digest: str, suffix: str) -> str:
    """`<site>-<stage>-pack-<n>-<hash><suffix>`, cut as `trainer_run_name` cuts one."""
    limit = RUN_NAME_MAX - len(suffix)
    parts = [site.metadata.name, pack.first.stage.name, pack.name]
    if len("-".join(parts)) + 1 + len(digest) > limit:
        parts = parts[1:]
    return hashed_name(parts, digest, limit) + suffix


def _source(pack: Pack) -> str:
    return f"/spec/readiness/stages/{pack.first.stage_index}"


def _catalog(pack: Pack) -> tuple[str, ...]:
    return tuple(
        sorted({u.pool.catalog_file for u in pack.units} | {u.test_file for u in pack.units})
    )


def _annotations(pack: Pack, nodes: tuple[str, ...]) -> dict[str, str]:
    return {TESTS: ",".join(pack.tests), NODES: ",".join(nodes)}


def _sections(pack: Pack, body: dict[str, str]) -> list[str]:
    """The script's arguments: test, deadline in seconds, script, for each test in order."""
    return [
        arg
        for unit in pack.units
        for arg in (unit.test.name, str(unit.timeout_ms // 1000), body[unit.test.name])
    ]


# --- node packs: one Indexed Job per chunk of nodes and round ----------------------------


def node_pack_jobs(site: Site, pack: Pack) -> list[Manifest]:
    """One Indexed Job per round and chunk of the pool's named nodes."""
    if pack.first.pool.spec.nodes is None:
        raise ValueError(f"{pack.name}: a node pack runs on named nodes")
    jobs = [
        node_pack_job(site, pack, round_, (index, chunk))
        for round_ in range(1, site.spec.readiness.rounds + 1)
        for index, chunk in enumerate(pack.chunks())
    ]
    return with_prebuilt(site, pack.first.stage_index, jobs)


def node_pack_job(
    site: Site, pack: Pack, round_: int, chunk: tuple[int, tuple[str, ...]]
) -> Manifest:
    """The Job of one round of a node pack on one chunk: one pod per node, in sequence."""
    index, nodes = chunk
    unit = pack.first
    labels = pack_labels(site, pack) | {ROUND: str(round_)}
    container: Obj = {
        "name": PACK_CONTAINER,
        "image": unit.image,
        "command": [
            "/bin/bash",
            "-c",
            node_pack_script(pack),
            "nvcregen-pack",
            *_sections(pack, {u.test.name: _node_body(site, u) for u in pack.units}),
        ],
        "env": _node_env(pack),
        "resources": pod_resources(_sized(pack), _devices(pack)),
    }
    pod: Obj = {
        "restartPolicy": "Never",
        "affinity": node_affinity(unit.pool.product_labels, nodes),
        "containers": [container],
    }
    # A test over the node's RDMA NICs (RDMA rails) locks memory and needs the pool's pod
    # network. NCCL's ranks inside the node lock memory too and share buffers through a
    # memory-backed `/dev/shm`, as every MPI pod of a per-run test has (`mpi.pod_template`,
    # `launcher_container`): the runtime's 64 MiB default fails NCCL's SHM segments.
    rdma = next((u for u in pack.units if u.network == "rdma"), None)
    net = pod_network(rdma) if rdma is not None else None
    collective = any(kind_of(u.test).collective for u in pack.units)
    if net is not None or collective:
        container["securityContext"] = {"capabilities": {"add": ["IPC_LOCK"]}}
    if collective:
        volume, mount = dev_shm()
        container["volumeMounts"] = [mount]
        pod["volumes"] = [volume]
    if net is not None:
        pod |= net.fields
    if found := tolerations(unit.pool):
        pod["tolerations"] = found
    template: Obj = {"labels": labels}
    networks = net.annotations if net is not None else {}
    if annotations := networks | topology_annotations(site, len(nodes)):
        template["annotations"] = annotations
    spec: Obj = {
        "completionMode": "Indexed",
        "completions": len(nodes),
        "parallelism": len(nodes),
        "backoffLimitPerIndex": 0,  # a failed test is a result, not something to retry
        "activeDeadlineSeconds": window_seconds(site),
        "template": {"metadata": template, "spec": pod},
    }
    metadata: Obj = {
        "name": pack_run_name(site, pack, content_hash(spec), f"-r{round_}-c{index}"),
        "namespace": site.spec.nvcre.namespace,
        "labels": labels | queue_labels(site, unit.stage_index),
        "annotations": _annotations(pack, nodes),
    }
    obj = {"apiVersion": "batch/v1", "kind": "Job", "metadata": metadata, "spec": spec}
    return Manifest(obj, COMPONENT, _source(pack), _catalog(pack))


def node_pack_script(pack: Pack) -> str:
    """The pod's command: each test of the pack under its deadline, a log section each."""
    return render_packaged(
        TEMPLATES, "pack-node.sh.j2", stage=pack.first.stage.name, tests=", ".join(pack.tests)
    )


def _node_body(site: Site, unit: TestUnit) -> str:
    """One test's script inside a node pack: what its own Job or launcher would run."""
    if kind_of(unit.test).per_node:
        return node_script(site, unit)
    local = _command(unit, local=True)  # one node: the launcher starts its ranks itself
    deadline = outer_deadline_s(unit.timeout_ms)
    return (
        f"start=$(date +%s)\ntimeout --kill-after=10s {deadline}s {shlex.join(local)}\nrc=$?\n"
        f'echo "nvcregen: {unit.test.name} exit=$rc seconds=$(( $(date +%s) - start ))"\n'
        'exit "$rc"\n'
    )


def _node_env(pack: Pack) -> list[Obj]:
    """NODE_NAME and POD_NAME for every begin line; what node-health needs besides."""
    env = {e["name"]: e for e in begin_env()}  # the node and pod every begin line names
    for unit in pack.units:
        env |= {e["name"]: e for e in node_env(unit) if e["name"] not in env}
    return list(env.values())


def _sized(pack: Pack) -> TestUnit:
    """The test whose pod size the pack takes: an NCCL test's (the largest), else the first."""
    return next((u for u in pack.units if kind_of(u.test).collective), pack.first)


def _devices(pack: Pack) -> dict[str, int]:
    """Every GPU of the node, and the most RDMA NICs any test of the pack needs."""
    devices = {GPU: pack.first.pool.gpus_per_node}
    for unit in pack.units:
        if unit.nic_resource is not None:
            name, count = unit.nic_resource
            devices[name] = max(devices.get(name, 0), count)
    return devices


# --- group packs: one TrainJob per node group and round -----------------------------------


def group_pack_manifests(site: Site, pack: Pack) -> list[Manifest]:
    """The pack's TrainingRuntime, and its TrainJobs per round and node group."""
    runtime = group_pack_runtime(site, pack)
    jobs = [
        group_pack_job(site, _group_sized(pack, group), runtime.name, round_, (index, group))
        for round_ in range(1, site.spec.readiness.rounds + 1)
        for index, group in enumerate(node_groups(pack.first))
    ]
    return [runtime, *with_prebuilt(site, pack.first.stage_index, jobs, runtime.obj)]


def _widest(pack: Pack) -> TestUnit:
    """The test whose network and NICs the runtime carries: an RDMA test's, else the first."""
    return next((u for u in pack.units if u.network == "rdma"), pack.first)


def _group_sized(pack: Pack, group: tuple[str, ...]) -> Pack:
    """The pack as one group runs it: a fabric group (a leaf) has its own size."""
    unit = pack.first
    if unit.grouping is None or len(group) == unit.nodes_per_job:
        return pack
    units = tuple(replace(u, nodes_per_job=len(group)) for u in pack.units)
    return Pack(pack.name, units, pack.chunk)


def group_pack_runtime(site: Site, pack: Pack) -> Manifest:
    """The MPI runtime of a group pack: the launcher ranks as node 0, the widest network."""
    unit = _widest(pack)
    labels = {FRAMEWORK: "mpi", **pack_labels(site, pack)}
    net = pod_network(unit)
    placement = runtime_placement(unit) | net.fields
    resources = pod_resources(unit, _group_devices(pack))
    launcher_pod = pod_template([launcher_container(unit.image, resources)], "Never", placement)
    launcher_pod |= _pod_metadata(site, pack, unit, 1)
    launcher = replicated_job(LAUNCHER, launcher_pod, trainer=True, backoffLimit=0)
    offline = site.spec.images.offline
    worker = worker_container(unit.image, resources, net.ssh_port, offline=offline)
    worker_pod = pod_template([worker], "OnFailure", placement)
    worker_pod |= _pod_metadata(site, pack, unit, unit.nodes_per_job - 1)
    launcher["dependsOn"] = [{"name": NODE, "status": "Ready"}]  # sshd answers first
    policy = {
        "mpiImplementation": "OpenMPI",
        "numProcPerNode": unit.pool.gpus_per_node,
        "runLauncherAsNode": True,
    }
    spec = mpi_runtime_spec(policy, [replicated_job(NODE, worker_pod), launcher])
    parts = [site.metadata.name, unit.stage.name, pack.name]
    name = hashed_name(parts, content_hash(spec), RUNTIME_NAME_MAX)
    metadata = {"labels": labels, "annotations": dict(RUNTIME_WAVE)}
    obj = runtime_object(name, site.spec.nvcre.namespace, metadata, spec)
    return Manifest(obj, COMPONENT, _source(pack), _catalog(pack))


def _pod_metadata(site: Site, pack: Pack, unit: TestUnit, pods: int) -> Obj:
    """A replicated job's pod labels, its Multus networks and Kueue topology request."""
    metadata: Obj = {"labels": pack_labels(site, pack)}
    level = domain_level(unit)
    if annotations := pod_network(unit).annotations | topology_annotations(site, pods, level):
        metadata["annotations"] = annotations
    return {"metadata": metadata}


def _group_devices(pack: Pack) -> dict[str, int]:
    """Every GPU of each node, and the NICs of the pack's RDMA test."""
    return resources_per_node(_widest(pack))


def group_pack_job(
    site: Site, pack: Pack, runtime: str, round_: int, group: tuple[int, tuple[str, ...]]
) -> Manifest:
    """The TrainJob of one round of a group pack on one node group."""
    index, nodes = group
    unit = _widest(pack)
    bodies = {u.test.name: _group_body(u) for u in pack.units}
    spec: Obj = {
        "runtimeRef": runtime_ref(runtime),
        "activeDeadlineSeconds": window_seconds(site),
        "trainer": {
            "image": unit.image,
            "command": [
                "/bin/bash",
                "-c",
                group_pack_script(pack, unit),
                "nvcregen-launcher",
                *_sections(pack, bodies),
            ],
            "numNodes": unit.nodes_per_job,
            "numProcPerNode": unit.pool.gpus_per_node,
            "resourcesPerNode": pod_resources(unit, _group_devices(pack)),
        },
    }
    if nodes:
        spec["runtimePatches"] = [pinned_patch(unit, nodes)]
    name = pack_run_name(site, pack, content_hash(spec), f"-r{round_}-g{index}")
    labels = pack_labels(site, pack) | {ROUND: str(round_)} | queue_labels(site, unit.stage_index)
    metadata = {"labels": labels, "annotations": _annotations(pack, nodes)}
    obj = trainjob_object(name, site.spec.nvcre.namespace, metadata, spec)
    notes = tuple(t.derivation for u in pack.units for t in u.thresholds)
    return Manifest(obj, COMPONENT, _source(pack), _catalog(pack), notes)


def group_pack_script(pack: Pack, unit: TestUnit) -> str:
    """The launcher's command: usable SSH keys, then each test's mpirun in sequence."""
    return render_packaged(
        TEMPLATES,
        "pack-launcher.sh.j2",
        stage=unit.stage.name,
        tests=", ".join(pack.tests),
        nodes=unit.nodes_per_job,
        gpus=unit.pool.gpus_per_node,
        raw=SSH_RAW,
        port=pod_network(unit).ssh_port,
    )


def _group_body(unit: TestUnit) -> str:
    """One test's mpirun line under its outer deadline (the hostfile is Trainer's)."""
    deadline = outer_deadline_s(unit.timeout_ms)
    return f"timeout --kill-after=10s {deadline}s {shlex.join(_command(unit))}"


def _command(unit: TestUnit, *, local: bool = False) -> list[str]:
    """The launcher's command line of a collective test, with its kind's environment."""
    launch = launch_of(unit)
    return launch.command(unit, launch.env(unit), local=local)
