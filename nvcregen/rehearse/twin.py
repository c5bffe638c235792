"""The twin: the real controllers beside a control plane of its own, on fake GPU nodes.

`start()` brings up, on a control plane of its own (`controlplane.py`; the controllers'
own CRDs are installed, from `make twin`'s copy of their manifests):

- kube-controller-manager with the Job, garbage-collector and node-lifecycle controllers
  (a new node keeps `node.kubernetes.io/not-ready` until the last one runs), and the
  CronJob controller when asked (`PERIOD_CONTROLLERS`: a rehearsal of one period);
- kube-scheduler;
- kwok managing the nodes annotated `kwok.x-k8s.io/node=fake`, with its stage files passed
  (node initialize and heartbeat with lease, the general pod lifecycle), the three
  `*Parallelism` options set (left at 0 nothing is ever played), its debugging handlers on
  and TLS, so the API server reads a pod's log from it (log files in CRI format);
- with `trainer=True`, JobSet's and Kubeflow Trainer's managers, their CRDs and webhook
  configurations from their modules' manifests (the kustomizations' patches applied), each
  webhook behind an ExternalName Service -> localhost, with a certificate of the run's own
  (their rotators' folder is fixed and machine-wide) and its CA injected;
- Kueue without cert-manager: `internalCertManagement.enable`, an ExternalName Service
  `kueue-webhook-service` -> `localhost`, the webhook configurations and the CRDs (with
  their conversion sections) from its module's manifests, pointed at a free port, and the
  certificate Kueue writes into its Secret copied into `certDir` (what a kubelet would
  mount); from a site's rendered Configuration when given.

On demand: more fake nodes, labels added later, and controllers that need only their CRDs
and a namespace (`start_controllers`: a GitOps engine's own, which its package names and
starts when it plays a site). Every process runs in a process group of its own and gets
SIGKILL if nvcregen dies (`processes.py`); `Twin.stop()` (also run by a finalizer when the
Twin is dropped, and at interpreter exit) stops the controllers newest first, then the
control plane. What each step needs, and why:
docs/design/0019-twin.md.
"""

from __future__ import annotations

import base64
import copy
import json
import time
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import yaml

from nvcregen.rehearse.controlplane import (
    ControlPlane,
    ControlPlaneError,
    healthy,
    install_crds,
    list_items,
)
from nvcregen.rehearse.controlplane import start as start_control_plane
from nvcregen.rehearse.gitserver import GitServer
from nvcregen.rehearse.kwoklogs import LOGS_CRD, LOGS_KIND
from nvcregen.rehearse.locate import Builds
from nvcregen.rehearse.manifests import (
    JOBSET_SERVICE,
    KUEUE_NAMESPACE,
    KUEUE_SERVICE,
    faster_stage,
    jobset_crds,
    kueue_crds,
    kueue_webhooks,
    kustomized_webhooks,
    kwok_stages,
    point_webhooks,
    trainer_crds,
    yaml_documents,
)
from nvcregen.rehearse.nodes import (
    FAKE_NODE_ANNOTATION,
    FakeNode,
    kwok_parallelism,
    node_object,
    unready,
)
from nvcregen.rehearse.pki import webhook_certificate
from nvcregen.rehearse.processes import Processes, free_port

KUEUE_SECRET = "kueue-webhook-server-cert"
KUEUE_API = "/apis/kueue.x-k8s.io/v1beta2"
JOBSET_NAMESPACE = "jobset-system"
TRAINER_NAMESPACE = "kubeflow-system"
TRAINER_SERVICE = "kubeflow-trainer-controller-manager"  # Trainer's kustomize patches name it
START_TIMEOUT = 180.0  # seconds for one controller to be ready on a loaded 2-core machine
TRAINER_FRAMEWORKS = ("batch/job", "trainer.kubeflow.org/trainjob")
NODE_WRITERS = 8  # threads creating nodes at once


@dataclass(frozen=True)
class Controller:
    """One controller process the twin starts (`Twin.start_controllers`).

    Attributes:
        name: Its binary in the build's `bin/`, and its name among the twin's processes.
        args: Its flags.
        health: The URL polled until it answers 200.
        env: Added to its environment.

    """

    name: str
    args: tuple[str, ...]
    health: str
    env: Mapping[str, str] = field(default_factory=dict)


def condition(obj: Mapping[str, Any] | None, kind: str) -> bool:
    """Whether `obj` has a condition of type `kind` with status True."""
    conditions = ((obj or {}).get("status") or {}).get("conditions") or []
    return any(c.get("type") == kind and c.get("status") == "True" for c in conditions)


def cluster_logs(namespace: str, container: str, path: Path) -> dict[str, Any]:
    """Kwok's ClusterLogs serving `path` (CRI format) as `container`'s log in `namespace`.

    Pass it to `start` in `kwok_config` (kwok reads it from its configuration).
    """
    return {
        "apiVersion": "kwok.x-k8s.io/v1alpha1",
        "kind": "ClusterLogs",
        "metadata": {"name": f"logs-{namespace}-{container}"},
        "spec": {
            "selector": {"matchNamespaces": [namespace]},
            "logs": [{"containers": [container], "logsFile": str(path), "follow": False}],
        },
    }


def _stop_all(processes: Processes, closers: list[Callable[[], None]], plane: ControlPlane) -> None:
    processes.stop()
    while closers:
        closers.pop()()
    plane.stop()


@dataclass
class Twin:
    """The control plane and the controllers started beside it.

    Attributes:
        plane: The twin's own etcd, kube-apiserver and kube-controller-manager.
        builds: The built binaries and manifests.
        folder: The run's scratch folder (configurations, certificates, logs).
        nodes: The fake nodes created, by name.
        timings: Seconds per step of the start.
        closers: Run at `stop`, newest first, after the controllers and before the
            control plane (a caller's servers).

    """

    plane: ControlPlane
    builds: Builds
    folder: Path
    nodes: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    closers: list[Callable[[], None]] = field(default_factory=list)
    kwok_port: int = 0

    def __post_init__(self) -> None:
        self.group = Processes(self.folder)
        self._finalizer = weakref.finalize(self, _stop_all, self.group, self.closers, self.plane)

    @property
    def home(self) -> Path:
        """The build's folder (`bin/`, `manifests/`)."""
        return self.builds.twin

    @property
    def processes(self) -> dict[str, Any]:
        """The running controllers, by name (the control plane's are `plane.processes`)."""
        return self.group.running

    def stop(self) -> None:
        """Stop every controller (process groups), the closers, then the control plane.

        Idempotent.
        """
        self._finalizer()

    def spawn(self, name: str, args: list[str], env: Mapping[str, str] | None = None) -> None:
        """Start one twin binary in a process group of its own, logging to `<name>.log`."""
        self.group.spawn(name, [str(self.builds.twin_bin / name), *args], env)

    def log_tail(self, name: str, size: int = 3000) -> str:
        """The end of one controller's log, for an error message."""
        return self.group.log_tail(name, size)

    def wait_healthy(self, name: str, url: str, poll: Callable[[], None] | None = None) -> None:
        """Poll a controller's health URL until it answers 200 (`poll` runs each round).

        Raises:
            ControlPlaneError: When it exits, or is not healthy within START_TIMEOUT.

        """
        if poll is None:
            self.timings[name] = healthy(self.group, name, url, START_TIMEOUT)
            return
        began = time.monotonic()
        while True:
            poll()
            try:
                healthy(self.group, name, url, 0.5)
            except ControlPlaneError:
                if self.group.exited(name) is not None or time.monotonic() > began + START_TIMEOUT:
                    raise
                continue
            self.timings[name] = time.monotonic() - began
            return

    # --- the API, as the admin -----------------------------------------------------------
    def get(self, path: str) -> dict[str, Any] | None:
        """One object, or None when it does not exist (yet)."""
        code, body = self.plane.request("GET", path)
        if code == 404:
            return None
        if code != 200 or not isinstance(body, dict):
            raise ControlPlaneError(f"GET {path}: HTTP {code}: {body}")
        return body

    def post(self, collection: str, obj: Mapping[str, Any]) -> dict[str, Any]:
        """Create one object in `collection`; the object as stored."""
        created: dict[str, Any] = self.plane.ok("POST", collection, dict(obj))
        return created

    def wait_for(self, what: str, check: Callable[[], Any], timeout: float = START_TIMEOUT) -> Any:
        """Poll `check` until it returns something true; that value.

        Raises:
            ControlPlaneError: After `timeout`, naming `what` and the controllers' log tails.

        """
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = check()
            if value:
                return value
            time.sleep(0.3)
        tails = "\n".join(f"--- {n}:\n{self.log_tail(n, 1500)}" for n in self.processes)
        raise ControlPlaneError(f"{what}: not within {timeout:.0f} s\n{tails}")

    # --- nodes -----------------------------------------------------------------------------
    def add_nodes(self, nodes: Iterable[FakeNode]) -> None:
        """Create fake nodes; wait until each is Ready and carries exactly its taints.

        The API server gives each new node `not-ready`, which the node lifecycle
        controller lifts once kwok reports it Ready. The nodes are created by
        NODE_WRITERS threads at once (each on a kept-alive connection) and read back
        with one list of the Nodes per poll (`nodes.unready`).
        """
        added = {node.name: node for node in nodes}
        began = time.monotonic()
        with ThreadPoolExecutor(NODE_WRITERS) as pool:
            list(pool.map(lambda n: self.post("/api/v1/nodes", node_object(n)), added.values()))
        self.nodes += list(added)
        self.timings["nodes created"] = time.monotonic() - began
        waiting: list[str] = []

        def all_ready() -> bool:
            waiting[:] = unready(list_items(self.plane, "/api/v1/nodes"), added)
            return not waiting

        try:
            self.wait_for(f"{len(added)} nodes Ready with their taints", all_ready)
        except ControlPlaneError as error:
            shown = ", ".join(waiting[:5]) + (" ..." if len(waiting) > 5 else "")
            raise ControlPlaneError(f"{len(waiting)} nodes not Ready ({shown}): {error}") from None
        self.timings["nodes"] = self.timings.get("nodes", 0.0) + time.monotonic() - began

    def label_nodes(self, names: Iterable[str], labels: Mapping[str, str]) -> None:
        """Add `labels` to existing nodes (a merge patch, as `kubectl label` sends)."""
        for name in names:
            self.plane.ok(
                "PATCH",
                f"/api/v1/nodes/{name}",
                {"metadata": {"labels": dict(labels)}},
                content_type="application/merge-patch+json",
            )

    # --- starting each controller ----------------------------------------------------------

    def start_scheduler(self) -> None:
        """kube-scheduler on a free loopback port, as the admin, no leader election."""
        port = free_port()
        self.spawn(
            "kube-scheduler",
            [
                f"--kubeconfig={self.plane.kubeconfig}",
                f"--authentication-kubeconfig={self.plane.kubeconfig}",
                f"--authorization-kubeconfig={self.plane.kubeconfig}",
                "--authorization-always-allow-paths=/healthz,/readyz,/livez",
                "--leader-elect=false",
                "--bind-address=127.0.0.1",
                f"--secure-port={port}",
                f"--cert-dir={self.folder / 'scheduler-certs'}",
                "--v=1",
            ],
        )
        self.wait_healthy("kube-scheduler", f"https://127.0.0.1:{port}/healthz")

    def start_kwok(
        self,
        extra_config: Iterable[Mapping[str, Any]] = (),
        pod_speed: float = 1.0,
        stages: Sequence[Mapping[str, Any]] | None = None,
        pod_logs: bool = False,
        nodes: int = 0,
    ) -> None:
        """Start kwok for the nodes annotated fake, serving pod logs over TLS on loopback.

        Its pod stages' default delays are divided by `pod_speed` (`faster_stage`);
        `stages`, when given, replace kwok's own stage files altogether. With `pod_logs`
        kwok also serves a pod's log from a `Logs` object in the API server (its CRD
        installed first, `--enable-crds=Logs`: `kwoklogs.py`), added while it runs.
        Its workers grow with the `nodes` it will play (`kwok_parallelism`).
        """
        if pod_logs:
            install_crds(self.plane, [copy.deepcopy(LOGS_CRD)])
        self.kwok_port = free_port()
        workers = kwok_parallelism(nodes)
        key, value = FAKE_NODE_ANNOTATION
        configuration = {
            "apiVersion": "config.kwok.x-k8s.io/v1alpha1",
            "kind": "KwokConfiguration",
            "options": {
                "manageAllNodes": False,
                "manageNodesWithAnnotationSelector": f"{key}={value}",
                "cidr": "10.0.128.0/17",
                "nodeIP": "127.0.0.1",
                "nodePort": self.kwok_port,
                "serverAddress": f"127.0.0.1:{self.kwok_port}",
                "tlsCertFile": str(self.plane.credentials.cert),
                "tlsPrivateKeyFile": str(self.plane.credentials.key),
                "enableDebuggingHandlers": True,
                "enableProfilingHandler": False,
                "podPlayStageParallelism": workers,
                "nodePlayStageParallelism": workers,
                "nodeLeaseParallelism": workers,
                "nodeLeaseDurationSeconds": 40,
            },
        }
        config = self.folder / "kwok.yaml"
        config.write_text(
            yaml.safe_dump_all([configuration, *extra_config], sort_keys=False), "utf-8"
        )
        configs = kwok_stages(self.builds.manifests)
        if stages is None and pod_speed != 1.0:
            stages = [faster_stage(d, pod_speed) for path in configs for d in yaml_documents(path)]
        if stages is not None:
            configs = [self.folder / "kwok-stages.yaml"]
            configs[0].write_text(yaml.safe_dump_all(list(stages), sort_keys=False), "utf-8")
        configs.insert(0, config)
        self.spawn(
            "kwok",
            [
                f"--kubeconfig={self.plane.kubeconfig}",
                *(f"--config={path}" for path in configs),
                *([f"--enable-crds={LOGS_KIND}"] if pod_logs else []),
                "-v=INFO",
            ],
        )
        self.wait_healthy("kwok", f"https://127.0.0.1:{self.kwok_port}/healthz")

    def start_kueue(
        self,
        frameworks: Iterable[str] = ("batch/job",),
        settings: Mapping[str, Any] | None = None,
    ) -> None:
        """Kueue with its own webhooks and CRDs, its certificate managed by itself.

        `settings`: a Kueue Configuration to start from (a site's, as nvcregen renders it
        into Kueue's chart values): its integrations, `waitForPodsReady`, client and
        controller settings are kept; what places Kueue on the twin (namespace, health,
        metrics, webhook, leader election, certificate management) is the twin's.
        """
        began = time.monotonic()
        manifests = self.builds.manifests
        webhook_port, health = free_port(), free_port()
        self.loopback_service(KUEUE_NAMESPACE, KUEUE_SERVICE, webhook_port)
        # The Secret Kueue's certificate rotator fills (its release ships it empty).
        self.post(
            f"/api/v1/namespaces/{KUEUE_NAMESPACE}/secrets",
            {
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": {"name": KUEUE_SECRET, "namespace": KUEUE_NAMESPACE},
            },
        )
        self.install_webhooks(kueue_webhooks(manifests, webhook_port))
        install_crds(self.plane, kueue_crds(manifests, webhook_port))
        cert_dir = self.folder / "kueue-certs"
        cert_dir.mkdir()
        configuration = {
            "integrations": {"frameworks": list(frameworks)},
            **(settings or {}),
            "apiVersion": "config.kueue.x-k8s.io/v1beta2",
            "kind": "Configuration",
            "namespace": KUEUE_NAMESPACE,
            "health": {"healthProbeBindAddress": f"127.0.0.1:{health}"},
            "metrics": {"bindAddress": "0"},
            "webhook": {"host": "127.0.0.1", "port": webhook_port, "certDir": str(cert_dir)},
            "leaderElection": {"leaderElect": False},
            "internalCertManagement": {
                "enable": True,
                "webhookServiceName": KUEUE_SERVICE,
                "webhookSecretName": KUEUE_SECRET,
            },
        }
        config = self.folder / "kueue.yaml"
        config.write_text(json.dumps(configuration, indent=2), "utf-8")
        self.spawn(
            "kueue",
            [f"--config={config}", "--feature-gates=VisibilityOnDemand=false"],
            env={"KUBECONFIG": str(self.plane.kubeconfig)},
        )

        def mount_certificate() -> None:
            """What a kubelet does with the Secret's volume: its keys as files."""
            if (cert_dir / "tls.key").exists():
                return
            secret = self.get(f"/api/v1/namespaces/{KUEUE_NAMESPACE}/secrets/{KUEUE_SECRET}")
            data = (secret or {}).get("data") or {}
            if not {"tls.crt", "tls.key"} <= set(data):
                return
            for name in sorted(data):  # tls.key last: its presence says all are written
                if name != "tls.key":
                    (cert_dir / name).write_bytes(base64.b64decode(data[name]))
            (cert_dir / "tls.key").write_bytes(base64.b64decode(data["tls.key"]))

        self.wait_healthy("kueue", f"http://127.0.0.1:{health}/readyz", mount_certificate)
        self.timings["kueue"] = time.monotonic() - began

    def loopback_service(self, namespace: str, name: str, port: int) -> None:
        """Namespace `namespace` and an ExternalName Service `name` -> localhost on `port`.

        The API server calls a webhook behind it on loopback.
        """
        self.plane.namespace(namespace)
        self.post(
            f"/api/v1/namespaces/{namespace}/services",
            {
                "apiVersion": "v1",
                "kind": "Service",
                "metadata": {"name": name, "namespace": namespace},
                "spec": {
                    "type": "ExternalName",
                    "externalName": "localhost",
                    "ports": [{"port": port, "targetPort": port}],
                },
            },
        )

    def install_webhooks(self, configurations: Iterable[Mapping[str, Any]]) -> None:
        """Create mutating and validating webhook configurations."""
        for configuration in configurations:
            plural = configuration["kind"].lower() + "s"
            self.post(f"/apis/admissionregistration.k8s.io/v1/{plural}", configuration)

    def start_jobset(self) -> None:
        """JobSet's manager with its own CRD and webhooks, from its module's manifests.

        Its internal certificate management is off: its rotator waits for the certificate
        in the fixed `/tmp/k8s-webhook-server/serving-certs`, which every twin on the
        machine would share. A certificate of the run's own is written into the configured
        `certDir` instead, and its CA into the webhook configurations and the CRD's
        conversion webhook (what cert-manager does for the release's manifests).
        """
        began = time.monotonic()
        manifests = self.builds.manifests
        port, health = free_port(), free_port()
        self.loopback_service(JOBSET_NAMESPACE, JOBSET_SERVICE, port)
        cert_dir = self.folder / "jobset-certs"
        ca = webhook_certificate(cert_dir, JOBSET_SERVICE, JOBSET_NAMESPACE)
        configurations = kustomized_webhooks(
            manifests / "jobset" / "config" / "components" / "webhook"
        )
        for configuration in configurations:  # as the release names them
            configuration["metadata"]["name"] = "jobset-" + configuration["metadata"]["name"]
        self.install_webhooks(
            point_webhooks(configurations, JOBSET_NAMESPACE, JOBSET_SERVICE, port, ca)
        )
        install_crds(self.plane, jobset_crds(manifests, JOBSET_NAMESPACE, port, ca))
        configuration = {
            "apiVersion": "config.jobset.x-k8s.io/v1alpha1",
            "kind": "Configuration",
            "webhook": {"host": "127.0.0.1", "port": port, "certDir": str(cert_dir)},
            "health": {"healthProbeBindAddress": f"127.0.0.1:{health}"},
            "metrics": {"bindAddress": "0"},
            "leaderElection": {"leaderElect": False},
            "internalCertManagement": {"enable": False},
        }
        config = self.folder / "jobset.yaml"
        config.write_text(json.dumps(configuration, indent=2), "utf-8")
        self.spawn(
            "jobset",
            [
                f"--config={config}",
                "--metrics-bind-address=0",  # a flag of its own, ahead of the file's
                f"--health-probe-bind-address=127.0.0.1:{health}",
                "--leader-elect=false",
            ],
            env={"KUBECONFIG": str(self.plane.kubeconfig)},
        )
        self.wait_healthy("jobset", f"http://127.0.0.1:{health}/readyz")
        self.timings["jobset"] = time.monotonic() - began

    def start_trainer(self) -> None:
        """Kubeflow Trainer's controller manager with its own CRDs and webhooks.

        From its module's manifests; JobSet must be running (Trainer makes JobSets).

        Its certificate management is off, as JobSet's (the rotator's folder is fixed); its
        webhook server reads controller-runtime's default folder, under `os.TempDir()`, so
        the process gets `TMPDIR` of its own and the run's certificate is written there.
        """
        began = time.monotonic()
        manifests = self.builds.manifests
        port, health = free_port(), free_port()
        self.loopback_service(TRAINER_NAMESPACE, TRAINER_SERVICE, port)
        temporary = self.folder / "trainer-tmp"
        ca = webhook_certificate(
            temporary / "k8s-webhook-server" / "serving-certs", TRAINER_SERVICE, TRAINER_NAMESPACE
        )
        configurations = kustomized_webhooks(
            manifests / "trainer" / "manifests" / "base" / "webhook"
        )
        self.install_webhooks(
            point_webhooks(configurations, TRAINER_NAMESPACE, TRAINER_SERVICE, port, ca)
        )
        install_crds(self.plane, trainer_crds(manifests))
        configuration = {
            "apiVersion": "config.trainer.kubeflow.org/v1alpha1",
            "kind": "Configuration",
            "webhook": {"host": "127.0.0.1", "port": port},
            "health": {"healthProbeBindAddress": f"127.0.0.1:{health}"},
            "metrics": {"bindAddress": "0", "secureServing": False},
            "leaderElection": {"leaderElect": False},
            "certManagement": {"enable": False},
        }
        config = self.folder / "trainer.yaml"
        config.write_text(json.dumps(configuration, indent=2), "utf-8")
        self.spawn(
            "trainer-controller-manager",
            [f"--config={config}"],
            env={"KUBECONFIG": str(self.plane.kubeconfig), "TMPDIR": str(temporary)},
        )
        self.wait_healthy("trainer-controller-manager", f"http://127.0.0.1:{health}/readyz")
        self.timings["trainer"] = time.monotonic() - began

    def git_server(self) -> GitServer:
        """A Git server on loopback for the repositories under `<folder>/git/`.

        Stopped with the twin.
        """
        root = self.folder / "git"
        root.mkdir(exist_ok=True)
        server = GitServer(root)
        self.closers.append(server.stop)
        return server

    def start_controllers(
        self,
        timing: str,
        namespace: str,
        crds: list[dict[str, Any]],
        controllers: Sequence[Controller],
    ) -> None:
        """Controllers that need only their CRDs and a namespace: one after another.

        The CRDs are installed (and served) and `namespace` created first; then each
        controller starts, with the admin kubeconfig (`KUBECONFIG`) beside its own `env`,
        and is healthy before the next starts (`timings[<its name>]`). The whole start is
        `timings[timing]` (a GitOps engine's controllers: the engine's name).
        """
        began = time.monotonic()
        install_crds(self.plane, crds)
        self.plane.namespace(namespace)
        for controller in controllers:
            env = {"KUBECONFIG": str(self.plane.kubeconfig), **controller.env}
            self.spawn(controller.name, list(controller.args), env=env)
            self.wait_healthy(controller.name, controller.health)
        self.timings[timing] = time.monotonic() - began


Kind = TypeVar("Kind", bound=Twin)
CONTROLLERS = "garbagecollector,job,nodelifecycle"  # kube-controller-manager's, by default
PERIOD_CONTROLLERS = f"{CONTROLLERS},cronjob"  # and the CronJob controller: one period


def start(
    folder: Path,
    builds: Builds,
    nodes: Iterable[FakeNode],
    kwok_config: Iterable[Mapping[str, Any]] = (),
    *,
    trainer: bool = False,
    kueue_settings: Mapping[str, Any] | None = None,
    pod_speed: float = 1.0,
    stages: Sequence[Mapping[str, Any]] | None = None,
    pod_logs: bool = False,
    kind: type[Kind] = Twin,  # type: ignore[assignment]
    plane_kind: type[ControlPlane] = ControlPlane,
    admin_token: str = "",
    controllers: str = CONTROLLERS,
) -> Kind:
    """Start the control plane and the controllers, kwok with `nodes`: a Twin.

    kube-controller-manager, kube-scheduler, kwok and Kueue; with `trainer`, JobSet and
    Kubeflow Trainer before Kueue, whose TrainJob integration is then on (as nvcregen
    renders Kueue's configuration in trainer mode).

    `kueue_settings`: a Kueue Configuration to start from (`Twin.start_kueue`);
    `pod_speed`: how much faster than kwok's defaults pods are created, Ready and complete
    (`faster_stage`), or `stages`: kwok's stages, replacing its own; `pod_logs`: kwok
    serves pod logs from `Logs` objects (`Twin.start_kwok`); `controllers`:
    kube-controller-manager's `--controllers` (`PERIOD_CONTROLLERS` adds the CronJob
    controller). Stopped whole if any step fails.

    Raises:
        ControlPlaneError: When a step fails (its log's end said).

    """
    began = time.monotonic()
    folder.mkdir(parents=True, exist_ok=True)
    plane = start_control_plane(
        folder / "controlplane", builds.control_plane, plane_kind, admin_token=admin_token
    )
    twin = kind(plane, builds, folder)
    nodes = list(nodes)
    try:
        twin.timings["control plane"] = time.monotonic() - began
        plane.controllers(controllers)
        twin.start_scheduler()
        twin.start_kwok(kwok_config, pod_speed, stages, pod_logs, len(nodes))
        twin.add_nodes(nodes)
        if trainer:
            twin.start_jobset()
            twin.start_trainer()
            twin.start_kueue(TRAINER_FRAMEWORKS, kueue_settings)
        else:
            twin.start_kueue(settings=kueue_settings)
    except BaseException:
        twin.stop()
        raise
    twin.timings["total"] = time.monotonic() - began
    return twin
