"""The NVCRE preview: the Trainer objects each WorkloadRun will become, for review (pure).

Written to `out/<site>/preview/` (component "preview") so a pull request shows the
images, environment and per-node resources NVCRE will run, and validated like every
generated object, but applied by no GitOps object: NVCRE creates these itself.

Follows NVCRE 0.7.0's documented mapping (nvcre-api.md §1.4, `pkg/platform/runtime.go`):
a namespaced TrainingRuntime `<workloadrun>-runtime` labelled `app: <workloadrun>`, and a
TrainJob referencing it. For the `mpi` framework the runtime has an MPI policy with keys
at `/tmp/mpi-ssh-raw`, workers (`node`: sshd installed only when missing, ready on port
22, `IPC_LOCK`, restartPolicy OnFailure, the GPUs and RDMA NICs the WorkloadRun asks
for) and a `launcher` (the trainer step, after the workers are ready, with an init
container fixing SSH key permissions and limits of 2 CPUs and 1Gi), `/dev/shm` in memory
everywhere. The `exec` framework becomes one `node` job running the command.

Each TrainJob says which of its parts are certain and which assumed
(`nvcregen.io/preview-certain`, `nvcregen.io/preview-assumed`; `certainty`). What the
documentation leaves open is marked on each object (`nvcregen.io/preview`):
NVCRE's own name for the TrainJob (derived from its Workflow and Job, one per node group
and iteration; the preview shows one), the standard `mpirun` arguments it adds, and the
placement it applies per Job from the WorkloadRun's target.
"""

from __future__ import annotations

from collections.abc import Sequence

from nvcregen.compile.readiness.components import PREVIEW as COMPONENT
from nvcregen.compile.readiness.mpi import (
    FRAMEWORK,
    GPU,
    LAUNCHER,
    NODE,
    RUN_NAME_MAX,
    SSH_RAW,
    dev_shm,
    mpi_runtime_spec,
    pod_template,
    replicated_job,
    runtime_object,
    runtime_ref,
    trainjob_object,
    worker_container,
)
from nvcregen.core.labels import PREVIEW, PREVIEW_ASSUMED, PREVIEW_CERTAIN
from nvcregen.core.manifest import Manifest, Obj, hashed_name

SSH_HOME = "ssh-home"
SSH_SECRET_VOLUME = "mpi-ssh-auth"  # the volume Trainer's MPI plugin adds for the keys
LAUNCHER_LIMITS = {"cpu": "2", "memory": "1Gi"}
FIX_SSH = (
    "install -d -m 700 /root/.ssh && "
    f"install -m 600 {SSH_RAW}/id_rsa /root/.ssh/id_rsa && "
    "printf 'StrictHostKeyChecking no\\n' > /root/.ssh/config"
)


def preview_manifests(readiness: Sequence[Manifest]) -> list[Manifest]:
    """The TrainingRuntime and TrainJob of every WorkloadRun among `readiness`."""
    return [m for run in readiness if run.kind == "WorkloadRun" for m in preview_of(run)]


def preview_of(run: Manifest) -> list[Manifest]:
    """What NVCRE makes of one WorkloadRun: `<name>-runtime` and a TrainJob on it."""
    spec = run.obj["spec"]
    framework = spec["framework"]
    if "mpi" in framework:
        runtime_spec, trainer = _mpi(spec)
    elif "exec" in framework:
        runtime_spec, trainer = _exec(spec)
    else:
        raise ValueError(f"WorkloadRun {run.name}: no preview for framework {sorted(framework)}")
    namespace = str(run.obj["metadata"]["namespace"])
    runtime_name = f"{run.name}-runtime"
    labels = {"app": run.name} | ({FRAMEWORK: "mpi"} if "mpi" in framework else {})
    note = {PREVIEW: f"what NVCRE creates from WorkloadRun {run.name}; not applied"}
    runtime = runtime_object(
        runtime_name, namespace, {"labels": labels, "annotations": note}, runtime_spec
    )
    job_spec: Obj = {"runtimeRef": runtime_ref(runtime_name), "trainer": trainer}
    metadata: Obj = {
        "labels": dict(spec.get("workloadMetadata", {}).get("labels", {})),
        "annotations": {PREVIEW: _job_note(run.name, "mpi" in framework), **certainty(spec)},
    }
    job = trainjob_object(_job_name(run.name), namespace, metadata, job_spec)
    return [Manifest(obj, COMPONENT, run.source, run.catalog, run.notes) for obj in (runtime, job)]


def _mpi(spec: Obj) -> tuple[Obj, Obj]:
    mpi = spec["framework"]["mpi"]
    image = str(spec["image"])
    worker = worker_container(image, _node_resources(spec))
    worker_pod = pod_template([worker], "OnFailure", _tolerations(spec))
    launcher = replicated_job(LAUNCHER, _launcher_pod(image, _tolerations(spec)), trainer=True)
    launcher["dependsOn"] = [{"name": NODE, "status": "Ready"}]
    policy = {
        "mpiImplementation": mpi.get("mpiImplementation", "OpenMPI"),
        "numProcPerNode": spec["gpusPerNode"],
    }
    runtime = mpi_runtime_spec(policy, [replicated_job(NODE, worker_pod), launcher])
    trainer: Obj = {
        "image": image,
        "command": [mpi["mpirunPath"]],
        "args": [*mpi.get("mpiArgs", []), mpi["binary"], *mpi.get("args", [])],
        "numNodes": spec["numNodes"],
        "numProcPerNode": spec["gpusPerNode"],
    }
    if spec.get("env"):
        trainer["env"] = list(spec["env"])
    return runtime, trainer


def _launcher_pod(image: str, extra: Obj) -> Obj:
    """The launcher: keys made usable by an init container, 2 CPUs and 1Gi for mpirun."""
    ssh_home: Obj = {"name": SSH_HOME, "mountPath": "/root/.ssh"}
    fix = {
        "name": "fix-ssh-permissions",
        "image": image,
        "command": ["/bin/sh", "-c", FIX_SSH],
        "volumeMounts": [{"name": SSH_SECRET_VOLUME, "mountPath": SSH_RAW}, ssh_home],
    }
    node = {
        "name": NODE,
        "image": image,
        "resources": {"limits": dict(LAUNCHER_LIMITS)},
        "volumeMounts": [ssh_home, dev_shm()[1]],
    }
    pod = pod_template([node], "OnFailure", {**extra, "initContainers": [fix]})
    pod["spec"]["volumes"].append({"name": SSH_HOME, "emptyDir": {}})
    return pod


def _exec(spec: Obj) -> tuple[Obj, Obj]:
    command = spec["framework"]["exec"]
    container = {
        "name": NODE,
        "image": spec["image"],
        "resources": _node_resources(spec),
        "volumeMounts": [dev_shm()[1]],
    }
    pod = pod_template([container], "Never", _tolerations(spec))
    runtime: Obj = {
        "mlPolicy": {"numNodes": spec["numNodes"]},
        "template": {"spec": {"replicatedJobs": [replicated_job(NODE, pod, trainer=True)]}},
    }
    trainer: Obj = {"image": spec["image"], "command": list(command["command"])}
    if command.get("args"):
        trainer["args"] = list(command["args"])
    trainer["numNodes"] = spec["numNodes"]
    if spec.get("env"):
        trainer["env"] = list(spec["env"])
    return runtime, trainer


def _node_resources(spec: Obj) -> Obj:
    """What NVCRE requests per node: `gpusPerNode` GPUs, `mlnxPerNode` RDMA NICs.

    The WorkloadRun's own `resources` (cpu, memory) come on top.
    """
    limits: dict[str, int | str] = {GPU: int(spec["gpusPerNode"])}
    nics = int(spec.get("mlnxPerNode", 0))
    if nics and spec.get("nicResourceName"):
        limits[str(spec["nicResourceName"])] = nics
    own = spec.get("resources") or {}
    limits |= own.get("limits") or {}
    resources: Obj = {"limits": limits}
    if own.get("requests"):
        resources = {"requests": dict(own["requests"]), **resources}
    return resources


def _tolerations(spec: Obj) -> Obj:
    """The tolerations NVCRE gives the pods for the target's `taintSelectors`."""
    found = []
    for selector in (spec.get("target") or {}).get("taintSelectors") or []:
        toleration = {"key": selector["key"], "operator": "Exists"}
        if selector.get("value"):
            toleration = {**toleration, "operator": "Equal", "value": selector["value"]}
        if selector.get("effect"):
            toleration["effect"] = selector["effect"]
        found.append(toleration)
    return {"tolerations": found} if found else {}


def certainty(spec: Obj) -> dict[str, str]:
    """Which parts of the preview are certain (the WorkloadRun says them) and which assumed.

    Certain: what the WorkloadRun states and NVCRE passes on as documented (image,
    command, environment, node count), and the devices its own `resources` name. Assumed:
    the runtime's shape and names (NVCRE's documented mapping, not its code), devices left
    to `gpusPerNode`/`mlnxPerNode`, and, for RDMA runs, the pod network, for which NVCRE
    0.7.0 documents no field.
    """
    limits = (spec.get("resources") or {}).get("limits") or {}
    certain = ["image", "command and arguments", "environment", f"{spec['numNodes']} node(s)"]
    assumed = [
        "runtime shape and object names (NVCRE's documented mapping)",
        "placement",
        "namespace (the WorkloadRun's, as NVCRE's controllers create TrainJobs: NVC381)",
    ]
    if GPU in limits:
        certain.append(f"{limits[GPU]} GPUs per node (resources)")
    else:
        assumed.append(f"{spec['gpusPerNode']} GPUs per node (from gpusPerNode)")
    nic = spec.get("nicResourceName")
    if nic and nic in limits:
        certain.append(f"{limits[nic]} {nic} per node (resources)")
    elif int(spec.get("mlnxPerNode", 0)):
        assumed.append("RDMA NICs per node (mlnxPerNode/nicResourceName, per model)")
    if any(e.get("name") == "NCCL_NET" and e.get("value") == "IB" for e in spec.get("env") or []):
        assumed.append("pod network for RDMA (host network or Multus: no NVCRE field)")
    return {PREVIEW_CERTAIN: "; ".join(certain), PREVIEW_ASSUMED: "; ".join(assumed)}


def _job_name(run: str) -> str:
    """A TrainJob name short enough for JobSet's pod names, keeping the run's hash."""
    prefix, _, digest = run.rpartition("-")
    return hashed_name([prefix], digest, RUN_NAME_MAX)


def _job_note(run: str, mpi: bool) -> str:
    note = (
        f"the shape of the TrainJobs NVCRE creates from WorkloadRun {run} (one per node "
        "group and iteration, named by NVCRE); not applied"
    )
    if mpi:
        note += "; NVCRE adds its standard mpirun arguments"
    return note
