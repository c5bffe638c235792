"""Trainer mode's pair runs: a server on one node, its client on the other (pure).

A pair kind (`TestKind.pair`: RDMA rails between two nodes) runs as a TrainJob of two
pods per round and pair, on a TrainingRuntime of the same shape as an NCCL test's (MPI,
the launcher as node 0), so Kueue, the replay and the webhook rules read it as they read
any two-node TrainJob. The worker (`node`) runs the servers instead of sshd and turns
ready once every server listens (its script writes the kind's ready file; the probe
reads it, never connecting: a perftest server takes one client). The launcher runs the
client and starts only then: JobSet's `dependsOn` the worker `Ready`, the pattern of the
MPI workers, whose sshd answers before `mpirun` starts (docs/design/0022-rdma-rails.md).
"""

from __future__ import annotations

from nvcregen.compile.queue.prebuilt import with_prebuilt
from nvcregen.compile.queue.workloads import queue_labels
from nvcregen.compile.readiness.components import READINESS as COMPONENT
from nvcregen.compile.readiness.mpi import (
    FRAMEWORK,
    LAUNCHER,
    NODE,
    RUNTIME_WAVE,
    dev_shm,
    mpi_runtime_spec,
    pod_template,
    replicated_job,
    runtime_object,
    runtime_ref,
    trainjob_object,
)
from nvcregen.compile.readiness.network import pod_network
from nvcregen.compile.readiness.nodescript import node_run
from nvcregen.compile.readiness.pods import pod_resources
from nvcregen.compile.templating import render_packaged
from nvcregen.core.labels import NODES, SERVER_LOG
from nvcregen.core.manifest import Manifest, Obj, content_hash, hashed_name
from nvcregen.engines.readiness.trainer.runs import (
    run_labels,
    trainer_run_name,
    unit_catalog,
    unit_labels,
    unit_source,
    window_seconds,
)
from nvcregen.engines.readiness.trainer.trainjobs import (
    RUNTIME_NAME_MAX,
    pinned_patch,
    pod_metadata,
    resources_per_node,
    runtime_placement,
)
from nvcregen.kindapi.protocol import PairScripts
from nvcregen.kindapi.registry import kind_of
from nvcregen.plan.model import TestUnit
from nvcregen.plan.rungroups import node_groups
from nvcregen.spec.v1alpha1 import Site


def pair_manifests(site: Site, unit: TestUnit) -> list[Manifest]:
    """One TrainingRuntime for a pair test, and its TrainJobs per round and pair."""
    scripts = kind_pair_scripts(site, unit)
    runtime = pair_runtime(site, unit, scripts)
    jobs = [
        pair_job(site, unit, runtime.name, scripts, (round_, index, pair))
        for round_ in range(1, site.spec.readiness.rounds + 1)
        for index, pair in enumerate(node_groups(unit))
    ]
    return [runtime, *with_prebuilt(site, unit.stage_index, jobs, runtime.obj)]


def kind_pair_scripts(site: Site, unit: TestUnit) -> PairScripts:
    """The kind's server and client scripts for this unit.

    Raises:
        ValueError: The test's kind runs no pairs (the plan never asks it to).

    """
    found = kind_of(unit.test).pair_scripts(unit.test, node_run(site, unit))
    if found is None:
        raise ValueError(f"test {unit.test.name} runs no server and client")
    return found


def pair_runtime(site: Site, unit: TestUnit, scripts: PairScripts) -> Manifest:
    """The runtime: the server as the worker, ready when it listens; the client after it."""
    env = kind_of(unit.test).node_env()
    net = pod_network(unit)
    placement = runtime_placement(unit) | net.fields
    resources = pod_resources(unit, resources_per_node(unit))
    _, mount = dev_shm()
    lock = {"capabilities": {"add": ["IPC_LOCK"]}}  # RDMA pins GPU and host memory
    given = scripts.server
    server_script = render_packaged(given.package, given.template, **given.values)
    server: Obj = {
        "name": NODE,
        "image": unit.image,
        "command": ["/bin/bash", "-c", server_script],
        "env": env,
        "readinessProbe": {
            "exec": {"command": ["test", "-f", scripts.ready_file]},
            "periodSeconds": 2,
        },
        "resources": resources,
        "securityContext": lock,
        "volumeMounts": [mount],
    }
    client: Obj = {
        "name": NODE,  # Trainer puts the TrainJob's image and command here
        "image": unit.image,
        "env": env,
        "resources": resources,
        "securityContext": lock,
        "volumeMounts": [mount],
    }
    server_pod = pod_template([server], "Never", placement) | pod_metadata(site, unit, 1)
    client_pod = pod_template([client], "Never", placement) | pod_metadata(site, unit, 1)
    launcher = replicated_job(LAUNCHER, client_pod, trainer=True, backoffLimit=0)
    launcher["dependsOn"] = [{"name": NODE, "status": "Ready"}]  # every server listens
    jobs = [replicated_job(NODE, server_pod, backoffLimit=0), launcher]
    policy = {"mpiImplementation": "OpenMPI", "numProcPerNode": 1, "runLauncherAsNode": True}
    spec = mpi_runtime_spec(policy, jobs)
    labels = {FRAMEWORK: "mpi", **unit_labels(site, unit)}
    parts = [site.metadata.name, unit.stage.name, unit.test.name]
    name = hashed_name(parts, content_hash(spec), RUNTIME_NAME_MAX)
    metadata = {"labels": labels, "annotations": dict(RUNTIME_WAVE)}
    obj = runtime_object(name, site.spec.nvcre.namespace, metadata, spec)
    return Manifest(obj, COMPONENT, unit_source(unit), unit_catalog(unit))


def pair_job(
    site: Site,
    unit: TestUnit,
    runtime: str,
    scripts: PairScripts,
    at: tuple[int, int, tuple[str, ...]],
) -> Manifest:
    """The TrainJob of one round of a pair test on one pair: the client's command."""
    round_, index, nodes = at
    given = scripts.client
    client_script = render_packaged(given.package, given.template, **given.values)
    spec: Obj = {
        "runtimeRef": runtime_ref(runtime),
        "activeDeadlineSeconds": window_seconds(site),
        "trainer": {
            "image": unit.image,
            "command": ["/bin/bash", "-c", client_script],
            "numNodes": 2,
            "numProcPerNode": 1,
            "resourcesPerNode": pod_resources(unit, resources_per_node(unit)),
        },
    }
    if nodes:
        spec["runtimePatches"] = [pinned_patch(unit, nodes)]
    suffix = f"-r{round_}" + (f"-g{index}" if nodes else "")
    name = trainer_run_name(site, unit, content_hash(spec), suffix)
    labels = run_labels(site, unit, round_) | queue_labels(site, unit.stage_index)
    annotations = {SERVER_LOG: NODE} | ({NODES: ",".join(nodes)} if nodes else {})
    metadata = {"labels": labels, "annotations": annotations}
    obj = trainjob_object(name, site.spec.nvcre.namespace, metadata, spec)
    return Manifest(obj, COMPONENT, unit_source(unit), unit_catalog(unit))
