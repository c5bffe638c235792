"""The twin for the tests: nvcregen's rehearsal harness, plus what only the tests use.

`nvcregen/rehearse/` starts the real controllers beside a control plane of their own, on
fake GPU nodes (`twin.py`: kube-controller-manager, kube-scheduler, kwok, Kueue, JobSet,
Trainer; Flux's controllers as its package starts them, `start_flux`;
docs/design/0019-twin.md says what each step needs, and why). This module
uses it as the tests need it: the control plane from tests/kubecontrolplane.py (built when
absent, with the tests' fixed tokens and `create`), the build's key and folder for the
build tests, fake nodes named with one set of labels (`start`, `Twin.add_gpu_nodes`),
a Topology and a flavor, ClusterQueue and LocalQueue on it (`topology`, `queue`), a
queued Job (`queued_job`), and Flux's Git server: bare repositories (`git_repository`)
served by `git http-backend` behind a loopback HTTP server in a thread of the test
process (`git_server`), stopped with the twin.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import kubecontrolplane
from kubecontrolplane import ControlPlaneError

from nvcregen.engines.gitops.flux.controllers import FLUX_CONTROLLERS, start_flux
from nvcregen.engines.gitops.flux.layer import FLUX_NAMESPACE
from nvcregen.rehearse import locate
from nvcregen.rehearse.gitserver import GitServer
from nvcregen.rehearse.locate import TWIN_BINARIES, TWIN_MODULES, Builds
from nvcregen.rehearse.manifests import (
    JOBSET_SERVICE,
    KUEUE_NAMESPACE,
    KUEUE_SERVICE,
    faster_stage,
    jobset_crds,
    json_patch,
    kueue_crds,
    kueue_webhooks,
    kustomized_crds,
    kustomized_webhooks,
    kwok_stages,
    point_webhooks,
    trainer_crds,
    yaml_documents,
)
from nvcregen.rehearse.nodes import FakeNode, node_object
from nvcregen.rehearse.nodes import taints_tolerated as taint_triples
from nvcregen.rehearse.pki import webhook_certificate
from nvcregen.rehearse.twin import (
    JOBSET_NAMESPACE,
    KUEUE_API,
    KUEUE_SECRET,
    TRAINER_NAMESPACE,
    TRAINER_SERVICE,
    cluster_logs,
    condition,
)
from nvcregen.rehearse.twin import Twin as ProductTwin
from nvcregen.rehearse.twin import start as start_twin

__all__ = [
    "FLUX_CONTROLLERS",
    "FLUX_NAMESPACE",
    "JOBSET_NAMESPACE",
    "JOBSET_SERVICE",
    "KUEUE_API",
    "KUEUE_NAMESPACE",
    "KUEUE_SECRET",
    "KUEUE_SERVICE",
    "TRAINER_NAMESPACE",
    "TRAINER_SERVICE",
    "cluster_logs",
    "condition",
    "faster_stage",
    "jobset_crds",
    "json_patch",
    "kueue_crds",
    "kueue_webhooks",
    "kustomized_crds",
    "kustomized_webhooks",
    "kwok_stages",
    "point_webhooks",
    "start_flux",
    "trainer_crds",
    "webhook_certificate",
    "yaml_documents",
]

ROOT = Path(__file__).resolve().parent.parent
TOOLS = ROOT / "tools"
# The files build.sh hashes, in its order: a changed pin is a new cache folder.
PIN_FILES = tuple(locate.pin_files(TOOLS, TWIN_MODULES))
BINARIES = TWIN_BINARIES


def cache_key() -> str:
    """The build cache's key, as build.sh computes it: sha256 of the pins, 16 hex."""
    return locate.cache_key(list(PIN_FILES))


def cache_dir() -> Path:
    """Where build.sh puts `bin/` and `manifests/` for the current pins."""
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "nvcregen" / "twin" / cache_key()


def missing() -> str:
    """Why the twin cannot run here ("" when its build is complete), for a skip reason."""
    return locate.twin_missing(cache_dir())


def write_cri_log(path: Path, lines: Iterable[str], stream: str = "stdout") -> Path:
    """A container log as CRI runtimes write it, the format kwok reads and serves."""
    now = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime())
    path.write_text("".join(f"{now}.000000000Z {stream} F {line}\n" for line in lines), "utf-8")
    return path


def gpu_node(
    name: str,
    labels: Mapping[str, str],
    gpus: int = 8,
    taints: Iterable[Mapping[str, str]] = (),
    devices: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """A fake node for kwok: its labels and taints, `nvidia.com/gpu` and the extended
    resources `devices` (an RDMA resource, say) allocatable, a loopback address."""
    return node_object(fake_node(name, labels, gpus, taints, devices))


def fake_node(
    name: str,
    labels: Mapping[str, str],
    gpus: int = 8,
    taints: Iterable[Mapping[str, str]] = (),
    devices: Mapping[str, str] | None = None,
) -> FakeNode:
    """The product's fake node of a name, labels, taints (as a Node carries them) and devices."""
    triples = tuple((t["key"], t.get("value") or "", t["effect"]) for t in taints)
    extra = {key: int(value) for key, value in (devices or {}).items()}
    return FakeNode(name, dict(labels), triples, {"nvidia.com/gpu": gpus, **extra})


# --- the objects the tests queue ----------------------------------------------------------


def taint_keys(taints: Iterable[Mapping[str, str]]) -> set[tuple[str, str, str]]:
    """Taints as comparable (key, value, effect) triples."""
    return {(t["key"], t.get("value") or "", t["effect"]) for t in taints}


def taints_tolerated(tolerations: Iterable[Mapping[str, str]]) -> list[dict[str, str]]:
    """The taints a site's pool states its nodes carry (`nodePools[].tolerations`), as a
    node carries them (`nvcregen.rehearse.nodes.taints_tolerated`, as mappings)."""
    return [{"key": k, "value": v, "effect": e} for k, v, e in taint_triples(tolerations)]


def queued_job(
    name: str,
    namespace: str,
    queue: str,
    gpus: int,
    *,
    annotations: Mapping[str, str] | None = None,
    tolerations: Iterable[Mapping[str, str]] = (),
) -> dict[str, Any]:
    """A batch/v1 Job of one pod asking for `gpus`, in LocalQueue `queue`; kwok completes
    its pod a second after it runs. `annotations` go on the pod template (Kueue reads its
    topology requests there)."""
    pod: dict[str, Any] = {
        "restartPolicy": "Never",
        "containers": [
            {
                "name": "main",
                "image": "nvcr.io/nvidia/pytorch:25.01-py3",
                "resources": {"limits": {"nvidia.com/gpu": str(gpus)}},
            }
        ],
    }
    if tolerations:
        pod["tolerations"] = [dict(t) for t in tolerations]
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": {"kueue.x-k8s.io/queue-name": queue},
        },
        "spec": {
            "parallelism": 1,
            "completions": 1,
            "backoffLimit": 0,
            "template": {
                "metadata": {
                    "annotations": {
                        "pod-complete.stage.kwok.x-k8s.io/delay": "1s",
                        **(annotations or {}),
                    }
                },
                "spec": pod,
            },
        },
    }


# --- the twin, with what the tests add -----------------------------------------------------


class Twin(ProductTwin):
    """The product's Twin with the tests' helpers: named nodes, queues, a Git server."""

    @property
    def servers(self) -> list[GitServer]:
        """The Git servers started (stopped, and so removed, with the twin)."""
        owners = [getattr(closer, "__self__", None) for closer in self.closers]
        return [owner for owner in owners if isinstance(owner, GitServer)]

    def topology(self, name: str, levels: Iterable[str]) -> None:
        """A Kueue Topology with `levels`, outermost first."""
        self.post(
            f"{KUEUE_API}/topologies",
            {
                "apiVersion": "kueue.x-k8s.io/v1beta2",
                "kind": "Topology",
                "metadata": {"name": name},
                "spec": {"levels": [{"nodeLabel": level} for level in levels]},
            },
        )

    def queue(
        self,
        name: str,
        namespace: str,
        node_labels: Mapping[str, str],
        gpus: int,
        topology: str | None = None,
    ) -> None:
        """A ResourceFlavor (on `topology`, when given), a ClusterQueue of `gpus` GPUs of
        it and a LocalQueue in `namespace`, all named `name`; wait until the ClusterQueue
        is Active."""
        self.plane.namespace(namespace)
        flavor: dict[str, Any] = {"nodeLabels": dict(node_labels)}
        if topology is not None:
            flavor["topologyName"] = topology
        self.post(
            f"{KUEUE_API}/resourceflavors",
            {
                "apiVersion": "kueue.x-k8s.io/v1beta2",
                "kind": "ResourceFlavor",
                "metadata": {"name": name},
                "spec": flavor,
            },
        )
        quota = {"name": "nvidia.com/gpu", "nominalQuota": gpus}
        self.post(
            f"{KUEUE_API}/clusterqueues",
            {
                "apiVersion": "kueue.x-k8s.io/v1beta2",
                "kind": "ClusterQueue",
                "metadata": {"name": name},
                "spec": {
                    "namespaceSelector": {},
                    "resourceGroups": [
                        {
                            "coveredResources": ["nvidia.com/gpu"],
                            "flavors": [{"name": name, "resources": [quota]}],
                        }
                    ],
                },
            },
        )
        self.post(
            f"{KUEUE_API}/namespaces/{namespace}/localqueues",
            {
                "apiVersion": "kueue.x-k8s.io/v1beta2",
                "kind": "LocalQueue",
                "metadata": {"name": name, "namespace": namespace},
                "spec": {"clusterQueue": name},
            },
        )
        self.wait_for(
            f"ClusterQueue {name} Active",
            lambda: condition(self.get(f"{KUEUE_API}/clusterqueues/{name}"), "Active"),
            timeout=60,
        )

    def workload_of(self, namespace: str, job: str) -> dict[str, Any] | None:
        """The Workload Kueue made for batch/v1 Job `job`, or None (not yet)."""
        listed = self.get(f"{KUEUE_API}/namespaces/{namespace}/workloads") or {}
        for workload in listed.get("items") or []:
            owners = workload["metadata"].get("ownerReferences") or []
            if any(o["kind"] == "Job" and o["name"] == job for o in owners):
                return dict(workload)
        return None

    def job(self, namespace: str, name: str) -> dict[str, Any] | None:
        """A batch/v1 Job as stored, or None."""
        return self.get(f"/apis/batch/v1/namespaces/{namespace}/jobs/{name}")

    def add_gpu_nodes(
        self,
        names: Iterable[str],
        labels: Mapping[str, str],
        taints: Iterable[Mapping[str, str]] = (),
        devices: Mapping[str, str] | None = None,
    ) -> None:
        """Create fake GPU nodes with `labels`, `taints` and the extended resources
        `devices` allocatable beside 8 GPUs; wait until each is Ready and carries exactly
        those taints (the API server's `not-ready` one lifted)."""
        given = list(taints)
        self.add_nodes(fake_node(name, labels, 8, given, devices) for name in names)


def start(
    folder: Path,
    nodes: Iterable[str],
    labels: Mapping[str, str],
    kwok_config: Iterable[Mapping[str, Any]] = (),
    *,
    trainer: bool = False,
    kueue_settings: Mapping[str, Any] | None = None,
    pod_speed: float = 1.0,
) -> Twin:
    """Start the twin (`nvcregen.rehearse.twin.start`) on the tests' control plane, with
    `nodes` (fake 8-GPU nodes carrying `labels`; none is fine, `add_gpu_nodes` adds them
    later). Stopped whole if any step fails.

    Raises:
        ControlPlaneError: When the twin is not built, or a step fails (its log's end said).

    """
    reason = missing()
    if reason:
        raise ControlPlaneError(reason)
    builds = Builds(kubecontrolplane.binaries(), cache_dir())
    return start_twin(
        folder,
        builds,
        [fake_node(name, labels) for name in nodes],
        kwok_config,
        trainer=trainer,
        kueue_settings=kueue_settings,
        pod_speed=pod_speed,
        kind=Twin,
        plane_kind=kubecontrolplane.ControlPlane,
        admin_token=kubecontrolplane.ADMIN_TOKEN,
    )
