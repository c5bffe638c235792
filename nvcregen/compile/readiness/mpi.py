"""Kubeflow Trainer building blocks shared by trainer mode and the NVCRE preview (pure).

Both build namespaced `TrainingRuntime`s, mostly with an MPI policy whose JobSet template
has a `node` replicated job (workers running sshd) and a `launcher` (the one labelled as
the TrainJob's `trainer` step), and the `TrainJob`s that reference them. Facts about Trainer
2.2.1 used here (docs/design/0003-trainer-mode.md):

- the MPI plugin mounts the TrainJob's SSH key Secret (`id_rsa`, `authorized_keys`) into
  containers named `node`, group-readable, at `mlPolicy.mpi.sshAuthMountPath`; ssh and
  sshd refuse keys that others can read, so each pod copies them to `/root/.ssh` first;
- `trainer.image`, `command` and `args` reach only the `node` container of the launcher.
"""

from __future__ import annotations

from nvcregen.compile.templating import render_template
from nvcregen.core.kube import LABEL_MAX, POD_SUFFIX
from nvcregen.core.manifest import Obj

TRAINER_GROUP = "trainer.kubeflow.org"
TRAINER_API = f"{TRAINER_GROUP}/v1alpha1"
ANCESTOR = f"{TRAINER_GROUP}/trainjob-ancestor-step"
FRAMEWORK = f"{TRAINER_GROUP}/framework"
NODE = "node"  # the worker job and the container name Trainer looks for in every job
LAUNCHER = "launcher"
PACK_CONTAINER = "tests"  # the container of a packed run's pod: its tests, one after another
SSH_RAW = "/tmp/mpi-ssh-raw"  # as NVCRE's MPI runtimes: keys are copied from here
SSH_PORT = 22
DSHM = "dshm"
GPU = "nvidia.com/gpu"
GPU_PRESENT = "nvidia.com/gpu.present"
GPU_PRODUCT = "nvidia.com/gpu.product"
# JobSet derives pod names <trainjob>-launcher-0-0-xxxxx (at most 63 characters); Jobs
# use the same cap so every run name reads alike.
RUN_NAME_MAX = LABEL_MAX - POD_SUFFIX
# Argo CD applies a runtime before the TrainJobs of the same sync: Trainer's webhook
# rejects a TrainJob whose runtime does not exist yet.
RUNTIME_WAVE = {"argocd.argoproj.io/sync-wave": "-1"}


def dev_shm() -> tuple[Obj, Obj]:
    """A memory-backed `/dev/shm` (NCCL's shared-memory transport): (volume, mount)."""
    return (
        {"name": DSHM, "emptyDir": {"medium": "Memory"}},
        {"name": DSHM, "mountPath": "/dev/shm"},
    )


def worker_script(port: int = SSH_PORT, *, offline: bool = False) -> str:
    """The workers' command: sshd on `port`, installed first if the image lacks it.

    An offline site cannot install it: its workers stop with a message instead.
    """
    return render_template("mpi-worker.sh.j2", raw=SSH_RAW, port=port, offline=offline)


def worker_container(
    image: str, resources: Obj | None = None, port: int = SSH_PORT, *, offline: bool = False
) -> Obj:
    """The `node` container of an MPI worker: sshd, ready once its port answers."""
    _, mount = dev_shm()
    container: Obj = {
        "name": NODE,
        "image": image,
        "command": ["/bin/bash", "-c", worker_script(port, offline=offline)],
        "readinessProbe": {"tcpSocket": {"port": port}, "initialDelaySeconds": 5},
        # RDMA registers (pins) GPU and host memory: the memlock limit must allow it.
        "securityContext": {"capabilities": {"add": ["IPC_LOCK"]}},
        "volumeMounts": [mount],
    }
    if resources:
        container["resources"] = resources
    return container


def pod_template(containers: list[Obj], restart: str, extra: Obj | None = None) -> Obj:
    """A pod template with `/dev/shm`, for a replicated job's `template.spec.template`."""
    volume, _ = dev_shm()
    spec: Obj = {"restartPolicy": restart, **(extra or {}), "containers": containers}
    spec["volumes"] = [volume]
    return {"spec": spec}


def replicated_job(name: str, template: Obj, *, trainer: bool = False, **spec: object) -> Obj:
    """A JobSet replicated job; `trainer=True` labels it as the TrainJob's trainer step."""
    job: Obj = {"name": name, "template": {"spec": {**spec, "template": template}}}
    if trainer:
        job["template"]["metadata"] = {"labels": {ANCESTOR: "trainer"}}
    return job


def node_affinity(products: tuple[str, ...], nodes: tuple[str, ...] = ()) -> Obj:
    """Required node affinity: the GPU product, and (if given) exactly the named nodes.

    `matchFields` on `metadata.name` is how a DaemonSet pins its pods: it names the Node
    object itself, unlike `kubernetes.io/hostname`, and the pod still goes through the
    scheduler, so it waits for free GPUs instead of failing admission as `nodeName` does.
    The API server takes exactly one value in such a field requirement
    (`ValidateNodeFieldSelectorRequirement`: "must be only one value when `operator` is
    'In' or 'NotIn' for node field selector"), so several nodes are several terms, which
    the scheduler ORs, each with the product.
    """
    product = {"key": GPU_PRODUCT, "operator": "In", "values": list(products)}
    terms: list[Obj] = [{"matchExpressions": [dict(product)]}]
    if nodes:
        terms = [
            {
                "matchExpressions": [dict(product)],
                "matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}],
            }
            for node in nodes
        ]
    return {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}
        }
    }


def mpi_runtime_spec(policy: Obj, jobs: list[Obj]) -> Obj:
    """A TrainingRuntime spec with an MPI policy, done when the launcher succeeds.

    Workers are resolvable before they are ready, so the launcher can reach sshd early.
    """
    return {
        "mlPolicy": {"mpi": {"sshAuthMountPath": SSH_RAW, **policy}},
        "template": {
            "spec": {
                "network": {"publishNotReadyAddresses": True},
                "successPolicy": {"operator": "All", "targetReplicatedJobs": [LAUNCHER]},
                "replicatedJobs": jobs,
            }
        },
    }


def runtime_object(name: str, namespace: str, metadata: Obj, spec: Obj) -> Obj:
    """A namespaced TrainingRuntime; `metadata` adds labels and annotations."""
    meta: Obj = {"name": name, "namespace": namespace, **metadata}
    return {"apiVersion": TRAINER_API, "kind": "TrainingRuntime", "metadata": meta, "spec": spec}


def trainjob_object(name: str, namespace: str, metadata: Obj, spec: Obj) -> Obj:
    """A TrainJob; `metadata` adds labels and annotations to its name and namespace."""
    meta: Obj = {"name": name, "namespace": namespace, **metadata}
    return {"apiVersion": TRAINER_API, "kind": "TrainJob", "metadata": meta, "spec": spec}


def runtime_ref(name: str) -> Obj:
    """A TrainJob's reference to a TrainingRuntime in its own namespace."""
    return {"apiGroup": TRAINER_GROUP, "kind": "TrainingRuntime", "name": name}
