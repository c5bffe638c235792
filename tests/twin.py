"""The twin: the real controllers beside the test control plane, on fake GPU nodes (issue #34).

`tools/twin/build.sh` (`make twin`) builds kwok, kube-scheduler, the Kueue, JobSet and
Trainer managers and Flux's two controllers from published Go modules into
`${XDG_CACHE_HOME:-~/.cache}/nvcregen/twin/<key>/bin/`, and copies the modules' own
manifests (CRDs, webhook configurations, kwok's stages) into `manifests/` beside it. The
key is the sha256 of the eight go.mod/go.sum files the build reads (tools/twin/*/ and the
control plane's, whose module builds kube-scheduler).

`start()` brings up, on a control plane of its own (tests/kubecontrolplane.py, started
without the vendored CRDs: the controllers' own are installed instead):

- kube-controller-manager with the Job, garbage-collector and node-lifecycle controllers
  (a new node keeps `node.kubernetes.io/not-ready` until the last one runs);
- kube-scheduler;
- kwok managing the nodes annotated `kwok.x-k8s.io/node=fake`, with its stage files passed
  (node initialize and heartbeat with lease, the general pod lifecycle), the three
  `*Parallelism` options set (left at 0 nothing is ever played), its debugging handlers on
  and TLS, so the API server reads a pod's log from it (log files in CRI format);
- Kueue without cert-manager: `internalCertManagement.enable`, an ExternalName Service
  `kueue-webhook-service` -> `localhost`, the webhook configurations and the CRDs (with
  their conversion sections) from its module's manifests, pointed at a free port, and the
  certificate Kueue writes into its Secret copied into `certDir` (what a kubelet would
  mount); from a site's rendered Configuration when given (`kueue_settings`);
- with `trainer=True`, before Kueue: JobSet's and Kubeflow Trainer's managers, their CRDs
  and webhook configurations from their modules' manifests (the kustomizations' patches
  applied), each webhook behind an ExternalName Service -> localhost, with a certificate
  of the run's own (their rotators' folder is fixed and machine-wide) and its CA injected.

On demand: fake nodes with taints and extra devices, labels added later (`add_gpu_nodes`,
`label_nodes`); a Topology and a flavor, ClusterQueue and LocalQueue on it (`topology`,
`queue`); Flux's source-controller and kustomize-controller with their CRDs
(`start_flux`), reading bare repositories (`git_repository`) served by `git http-backend`
behind a loopback HTTP server in a thread of the test process (`git_server`); kwok's pod
stages sped up (`pod_speed`).

Every process runs in a process group of its own, gets SIGKILL if the test process dies
(`PR_SET_PDEATHSIG`), and is stopped by `Twin.stop()` (the Git server with them), which a
finalizer also runs at interpreter exit. This module is the seed of `nvcregen rehearse`:
nothing in it is specific to a test. What each step needs, and why: docs/design/0019-twin.md.
"""

from __future__ import annotations

import base64
import copy
import datetime
import hashlib
import http.server
import ipaddress
import json
import os
import signal
import ssl
import subprocess
import threading
import time
import urllib.request
import weakref
from collections.abc import Callable, Iterable, Mapping
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from kubecontrolplane import (
    ControlPlane,
    ControlPlaneError,
    _die_with_parent,
    free_port,
    install_crds,
)
from kubecontrolplane import start as start_control_plane

ROOT = Path(__file__).resolve().parent.parent
TOOLS = ROOT / "tools"
# The files build.sh hashes, in its order: a changed pin is a new cache folder.
PIN_FILES = tuple(
    TOOLS / module / name
    for module in ("twin/kwok", "twin/managers", "twin/flux", "controlplane")
    for name in ("go.mod", "go.sum")
)
BINARIES = (
    "kwok",
    "kube-scheduler",
    "kueue",
    "jobset",
    "trainer-controller-manager",
    "source-controller",
    "kustomize-controller",
)
KUEUE_NAMESPACE = "kueue-system"
KUEUE_SERVICE = "kueue-webhook-service"  # Kueue names its webhook configurations after it
KUEUE_SECRET = "kueue-webhook-server-cert"
KUEUE_API = "/apis/kueue.x-k8s.io/v1beta2"
JOBSET_NAMESPACE = "jobset-system"
JOBSET_SERVICE = "jobset-webhook-service"  # JobSet's default `internalCertManagement` names
TRAINER_NAMESPACE = "kubeflow-system"
TRAINER_SERVICE = "kubeflow-trainer-controller-manager"  # Trainer's kustomize patches name it
FLUX_NAMESPACE = "flux-system"
FLUX_CONTROLLERS = ("source-controller", "kustomize-controller")
FAKE_NODE_ANNOTATION = ("kwok.x-k8s.io/node", "fake")
START_TIMEOUT = 180.0  # seconds for one controller to be ready on a loaded 2-core machine
STOP_TIMEOUT = 15.0


def cache_key() -> str:
    """The build cache's key, as build.sh computes it: sha256 of the pins, 16 hex."""
    digest = hashlib.sha256()
    for path in PIN_FILES:
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def cache_dir() -> Path:
    """Where build.sh puts `bin/` and `manifests/` for the current pins."""
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "nvcregen" / "twin" / cache_key()


def missing() -> str:
    """Why the twin cannot run here ("" when its build is complete), for a skip reason."""
    folder = cache_dir()
    absent = [name for name in BINARIES if not os.access(folder / "bin" / name, os.X_OK)]
    if absent:
        return (
            f"the twin is not built (no {', '.join(absent)} in {folder / 'bin'}; run `make twin`)"
        )
    if not (folder / "manifests").is_dir():
        return f"the twin's manifests are missing from {folder} (run `make twin`)"
    return ""


# --- the controllers' own manifests, adapted to run on loopback ------------------------------


def yaml_documents(path: Path) -> list[dict[str, Any]]:
    """The mappings of a multi-document YAML file (empty documents left out)."""
    return [d for d in yaml.safe_load_all(path.read_text("utf-8")) if isinstance(d, dict)]


def service_reference(port: int, path: str | None = None) -> dict[str, Any]:
    """A webhook `clientConfig.service` naming Kueue's Service, on the webhook's port."""
    reference: dict[str, Any] = {"namespace": KUEUE_NAMESPACE, "name": KUEUE_SERVICE, "port": port}
    if path is not None:
        reference["path"] = path
    return reference


Conversion = Callable[[dict[str, Any]], None]  # points a patched conversion at its webhook


def kustomized_crds(folder: Path, convert: Conversion | None = None) -> list[dict[str, Any]]:
    """The CRDs a `kustomization.yaml` lists, by name, with the conversion sections its
    patches add (each given to `convert` to point at the twin's webhook; patches without
    one, such as cert-manager's CA injection, are done by the caller instead)."""
    kustomization = yaml_documents(folder / "kustomization.yaml")[0]
    crds = {}
    for name in kustomization["resources"]:
        for crd in yaml_documents(folder / name):
            crds[crd["metadata"]["name"]] = crd
    for entry in kustomization.get("patches") or [] if convert is not None else []:
        (patch,) = yaml_documents(folder / entry["path"])
        conversion = (patch.get("spec") or {}).get("conversion")
        if conversion is None or convert is None:
            continue
        convert(conversion)
        crds[patch["metadata"]["name"]]["spec"]["conversion"] = conversion
    return [crds[name] for name in sorted(crds)]


def kueue_crds(manifests: Path, port: int) -> list[dict[str, Any]]:
    """Kueue's CRDs with the conversion sections its kustomization patches in.

    The patches named in `config/components/crd/kustomization.yaml` are applied (those
    commented out there are not), their Service pointed at the webhook's port.
    """
    folder = manifests / "kueue" / "config" / "components" / "crd"

    def convert(conversion: dict[str, Any]) -> None:
        client = conversion["webhook"]["clientConfig"]
        client["service"] = service_reference(port, client["service"].get("path"))

    return kustomized_crds(folder, convert)


def kueue_webhooks(manifests: Path, port: int) -> list[dict[str, Any]]:
    """Kueue's mutating and validating webhook configurations, named as its release names
    them (`kueue-` prefix), each webhook calling its Service on the webhook's port."""
    path = manifests / "kueue" / "config" / "components" / "webhook" / "manifests.yaml"
    configurations = yaml_documents(path)
    for configuration in configurations:
        configuration["metadata"]["name"] = "kueue-" + configuration["metadata"]["name"]
        for hook in configuration["webhooks"]:
            client = hook["clientConfig"]
            client["service"] = service_reference(port, client["service"].get("path"))
    return configurations


# --- JobSet's and Trainer's manifests, and a certificate for their webhooks -----------------


def json_patch(document: dict[str, Any], operations: Iterable[Mapping[str, Any]]) -> None:
    """Apply RFC 6902 `replace` and `add` operations (what JobSet's and Trainer's webhook
    kustomizations use) to `document` in place.

    Raises:
        ValueError: On another operation, or a path that does not exist.

    """
    for operation in operations:
        if operation["op"] not in {"replace", "add"}:
            raise ValueError(f"unsupported JSON patch operation {operation['op']!r}")
        *parents, last = [
            part.replace("~1", "/").replace("~0", "~") for part in operation["path"].split("/")[1:]
        ]
        target: Any = document
        for part in parents:
            target = target[int(part)] if isinstance(target, list) else target[part]
        value = copy.deepcopy(operation["value"])
        if isinstance(target, list):
            index = len(target) if last == "-" else int(last)
            if operation["op"] == "replace":
                target[index] = value
            else:
                target.insert(index, value)
        elif operation["op"] == "replace" and last not in target:
            raise ValueError(f"JSON patch: no {operation['path']} to replace")
        else:
            target[last] = value


def kustomized_webhooks(folder: Path) -> list[dict[str, Any]]:
    """The webhook configurations of a kubebuilder `webhook/` folder with the JSON patches
    its kustomization.yaml names applied (by target kind, and name when given)."""
    kustomization = yaml_documents(folder / "kustomization.yaml")[0]
    configurations = [
        d
        for name in kustomization["resources"]
        for d in yaml_documents(folder / name)
        if d["kind"].endswith("WebhookConfiguration")
    ]
    for entry in kustomization.get("patches") or []:
        target = entry["target"]
        operations = yaml.safe_load((folder / entry["path"]).read_text("utf-8"))
        for configuration in configurations:
            if configuration["kind"] == target["kind"] and target.get("name") in {
                None,
                configuration["metadata"]["name"],
            }:
                json_patch(configuration, operations)
    return configurations


def point_webhooks(
    configurations: Iterable[dict[str, Any]], namespace: str, service: str, port: int, ca: bytes
) -> list[dict[str, Any]]:
    """Each webhook calling `service` in `namespace` on `port`, trusting `ca` (what
    cert-manager's CA injection would write)."""
    pointed = []
    for configuration in configurations:
        for hook in configuration["webhooks"]:
            client = hook["clientConfig"]
            client["service"] = {
                "namespace": namespace,
                "name": service,
                "port": port,
                "path": client["service"]["path"],
            }
            client["caBundle"] = base64.b64encode(ca).decode()
        pointed.append(configuration)
    return pointed


def webhook_certificate(folder: Path, service: str, namespace: str) -> bytes:
    """A CA and a serving certificate for `<service>.<namespace>.svc` (the name the API
    server verifies when it calls a webhook Service), `tls.crt` and `tls.key` written into
    `folder` as a kubelet mounts a certificate Secret; the CA's PEM."""
    now = datetime.datetime.now(datetime.UTC)
    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())

    def builder(subject: str, public: ec.EllipticCurvePublicKey) -> x509.CertificateBuilder:
        return (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
            .issuer_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"{service}-ca")]))
            .public_key(public)
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
        )

    ca = (
        builder(f"{service}-ca", ca_key.public_key())
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(False, False, False, False, False, True, True, False, False),
            critical=True,
        )
        .sign(ca_key, hashes.SHA256())
    )
    names = [
        x509.DNSName(f"{service}.{namespace}.svc"),
        x509.DNSName("localhost"),
        x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
    ]
    serving = (
        builder(f"{service}.{namespace}.svc", key.public_key())
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .add_extension(
            x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "tls.crt").write_bytes(serving.public_bytes(serialization.Encoding.PEM))
    (folder / "tls.key").write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return ca.public_bytes(serialization.Encoding.PEM)


def jobset_crds(manifests: Path, namespace: str, port: int, ca: bytes) -> list[dict[str, Any]]:
    """JobSet's CRD with the conversion section its kustomization patches in (calling its
    webhook Service on `port`, trusting `ca`)."""
    folder = manifests / "jobset" / "config" / "components" / "crd"

    def convert(conversion: dict[str, Any]) -> None:
        client = conversion["webhook"]["clientConfig"]
        path = client["service"]["path"]
        client["service"] = {"namespace": namespace, "name": JOBSET_SERVICE, "port": port,
                             "path": path}  # fmt: skip
        client["caBundle"] = base64.b64encode(ca).decode()

    return kustomized_crds(folder, convert)


def trainer_crds(manifests: Path) -> list[dict[str, Any]]:
    """Trainer's CRDs (TrainJob, TrainingRuntime, ClusterTrainingRuntime): no conversion."""
    return kustomized_crds(manifests / "trainer" / "manifests" / "base" / "crds")


def kwok_stages(manifests: Path) -> list[Path]:
    """kwok's stage files: a node made Ready and kept so with a lease, the general pod
    lifecycle (a Job's pod completes after its `pod-complete` delay)."""
    stage = manifests / "kwok" / "kustomize" / "stage"
    files = [
        stage / "node" / "fast" / "node-initialize.yaml",
        stage / "node" / "heartbeat-with-lease" / "node-heartbeat-with-lease.yaml",
    ]
    pods = yaml_documents(stage / "pod" / "general" / "kustomization.yaml")[0]
    files += [stage / "pod" / "general" / name for name in pods["resources"]]
    return files


def faster_stage(stage: Mapping[str, Any], speed: float) -> dict[str, Any]:
    """A kwok pod Stage whose default delay and jitter are divided by `speed` (a delay a
    pod's annotation names is kept; node stages are returned as they are). The general
    pod stages wait 1-6 s each (create, ready, complete), which a rendered object cannot
    shorten without its pod template changing."""
    faster = copy.deepcopy(dict(stage))
    spec = faster.get("spec") or {}
    if (spec.get("resourceRef") or {}).get("kind") != "Pod":
        return faster  # a node's stages (initialize, heartbeat) keep their pace
    delay = spec.get("delay") or {}
    for key in ("durationMilliseconds", "jitterDurationMilliseconds"):
        if key in delay:
            delay[key] = int(delay[key] / speed)
    return faster


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
    resources = {
        "cpu": "128",
        "memory": "2Ti",
        "pods": "110",
        "nvidia.com/gpu": str(gpus),
        **(devices or {}),
    }
    key, value = FAKE_NODE_ANNOTATION
    given = [dict(taint) for taint in taints]
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {"kubernetes.io/hostname": name, "type": "kwok", **labels},
            "annotations": {key: value, "node.alpha.kubernetes.io/ttl": "0"},
        },
        "spec": {"taints": given} if given else {},
        # No addresses: kwok's node-initialize stage writes its `nodeIP` (loopback) as the
        # InternalIP, and no Hostname, so the API server dials kwok for logs. (Given an
        # InternalIP and no Hostname, that stage writes an empty list instead.)
        "status": {"allocatable": resources, "capacity": resources},
    }


# --- the objects the tests queue ----------------------------------------------------------


def condition(obj: Mapping[str, Any] | None, kind: str) -> bool:
    """Whether `obj` has a condition of type `kind` with status True."""
    conditions = ((obj or {}).get("status") or {}).get("conditions") or []
    return any(c.get("type") == kind and c.get("status") == "True" for c in conditions)


def taint_keys(taints: Iterable[Mapping[str, str]]) -> set[tuple[str, str, str]]:
    """Taints as comparable (key, value, effect) triples."""
    return {(t["key"], t.get("value") or "", t["effect"]) for t in taints}


def taints_tolerated(tolerations: Iterable[Mapping[str, str]]) -> list[dict[str, str]]:
    """The taints a site's pool states its nodes carry (`nodePools[].tolerations`), as a
    node carries them: a keyed toleration's key, its value ("" for `Exists`) and effect
    (`NoSchedule` when it names none: it tolerates every effect). A keyless one tolerates
    every taint and names none."""
    return [
        {"key": t["key"], "value": t.get("value") or "", "effect": t.get("effect") or "NoSchedule"}
        for t in tolerations
        if t.get("key")
    ]


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


# --- a Git server on loopback, for Flux's source-controller -------------------------------


class _GitHandler(http.server.BaseHTTPRequestHandler):
    """Git's smart HTTP protocol: each request handed to `git http-backend` (CGI)."""

    server: GitServer

    def do_GET(self) -> None:
        self._backend()

    def do_POST(self) -> None:
        self._backend()

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the test's output is for the test."""

    def _backend(self) -> None:
        # A request body by its Content-Length, as go-git (source-controller) sends one.
        path, _, query = self.path.partition("?")
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "GIT_PROJECT_ROOT": str(self.server.root),
            "GIT_HTTP_EXPORT_ALL": "1",
            "REQUEST_METHOD": self.command,
            "PATH_INFO": path,
            "QUERY_STRING": query,
            "CONTENT_TYPE": self.headers.get("Content-Type") or "",
            "CONTENT_LENGTH": str(len(body)),
            "REMOTE_ADDR": self.client_address[0],
        }
        if self.headers.get("Git-Protocol"):
            env["GIT_PROTOCOL"] = self.headers["Git-Protocol"]
        done = subprocess.run(
            ["git", "http-backend"],
            input=body,
            env=env,
            capture_output=True,
            timeout=60,
            check=False,
        )
        head, _, payload = done.stdout.partition(b"\r\n\r\n")
        status, headers = 200, []
        for line in head.decode("latin-1").splitlines():
            key, _, value = line.partition(":")
            if key.lower() == "status":
                status = int(value.split()[0])
            elif key:
                headers.append((key, value.strip()))
        self.send_response(status if done.returncode == 0 else 500)
        for key, value in headers:
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


class GitServer(http.server.ThreadingHTTPServer):
    """The bare repositories under `root`, served read-only over smart HTTP on loopback
    (`http://127.0.0.1:<port>/<name>.git`), in a thread of the test process."""

    def __init__(self, root: Path) -> None:
        super().__init__(("127.0.0.1", 0), _GitHandler)
        self.root = root
        self.thread = threading.Thread(target=self.serve_forever, daemon=True)
        self.thread.start()

    @property
    def port(self) -> int:
        """The loopback port it serves on."""
        return int(self.server_address[1])

    def url(self, name: str) -> str:
        """The clone URL of repository `name`."""
        return f"http://127.0.0.1:{self.port}/{name}.git"

    def stop(self) -> None:
        """Stop serving and close the socket. Idempotent."""
        if self.thread.is_alive():
            self.shutdown()
            self.thread.join()
        self.server_close()


def git_repository(root: Path, name: str, files: Mapping[str, str]) -> str:
    """A bare repository `root/<name>.git` whose branch `main` holds `files` (path: text)
    in one commit; the commit's hash."""
    work = root / f"{name}.work"
    for path, text in files.items():
        (work / path).parent.mkdir(parents=True, exist_ok=True)
        (work / path).write_text(text, "utf-8")
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "nvcregen twin",
        "GIT_AUTHOR_EMAIL": "twin@nvcregen.invalid",
        "GIT_COMMITTER_NAME": "nvcregen twin",
        "GIT_COMMITTER_EMAIL": "twin@nvcregen.invalid",
        "GIT_CONFIG_NOSYSTEM": "1",
        "HOME": str(root),
    }

    def git(*args: str, cwd: Path = work) -> str:
        done = subprocess.run(
            ["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True
        )
        return done.stdout.strip()

    git("init", "--quiet", "--initial-branch=main")
    git("add", "--all")
    git("commit", "--quiet", "--message=rehearsal")
    git("clone", "--quiet", "--bare", str(work), str(root / f"{name}.git"), cwd=root)
    return git("rev-parse", "HEAD")


# --- the processes ---------------------------------------------------------------------------


def _stop_processes(processes: dict[str, subprocess.Popen[bytes]]) -> None:
    """TERM each process group (newest first), then KILL what is left."""
    for name in reversed(list(processes)):
        process = processes.pop(name)
        if process.poll() is not None:
            continue
        with suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            with suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def _stop_all(
    processes: dict[str, subprocess.Popen[bytes]],
    logs: list[BinaryIO],
    plane: ControlPlane,
    servers: list[GitServer],
) -> None:
    _stop_processes(processes)
    while servers:
        servers.pop().stop()
    plane.stop()
    for log in logs:
        log.close()


@dataclass
class Twin:
    """The control plane and the controllers started beside it.

    Attributes:
        plane: The twin's own etcd, kube-apiserver and kube-controller-manager.
        home: The build's folder (`bin/`, `manifests/`).
        folder: The run's scratch folder (configurations, certificates, logs).
        nodes: The fake nodes created, by name.
        timings: Seconds per step of the start.

    """

    plane: ControlPlane
    home: Path
    folder: Path
    nodes: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    processes: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    logs: list[BinaryIO] = field(default_factory=list)
    servers: list[GitServer] = field(default_factory=list)
    kwok_port: int = 0

    def __post_init__(self) -> None:
        self._finalizer = weakref.finalize(
            self, _stop_all, self.processes, self.logs, self.plane, self.servers
        )

    def stop(self) -> None:
        """Stop every controller (process groups), the Git server, then the control plane.
        Idempotent."""
        self._finalizer()

    def spawn(self, name: str, args: list[str], env: Mapping[str, str] | None = None) -> None:
        """Start one twin binary in a process group of its own, logging to `<name>.log`."""
        log = (self.folder / f"{name}.log").open("wb")
        self.logs.append(log)
        self.processes[name] = subprocess.Popen(
            [str(self.home / "bin" / name), *args],
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env={**os.environ, **(env or {})},
            start_new_session=True,
            preexec_fn=_die_with_parent,  # noqa: PLW1509 (only prctl, before exec)
        )

    def log_tail(self, name: str, size: int = 3000) -> str:
        """The end of one controller's log, for an error message."""
        return (self.folder / f"{name}.log").read_text("utf-8", "replace")[-size:]

    def wait_healthy(self, name: str, url: str, poll: Callable[[], None] | None = None) -> None:
        """Poll a controller's health URL until it answers 200 (`poll` runs each round).

        Raises:
            ControlPlaneError: When it exits, or is not healthy within START_TIMEOUT.

        """
        began = time.monotonic()
        context = ssl._create_unverified_context()  # the controllers' own self-signed ones
        while time.monotonic() < began + START_TIMEOUT:
            process = self.processes[name]
            if process.poll() is not None:
                raise ControlPlaneError(
                    f"{name} exited ({process.returncode}):\n{self.log_tail(name)}"
                )
            if poll is not None:
                poll()
            with (
                suppress(OSError),
                urllib.request.urlopen(url, context=context, timeout=5.0) as answer,
            ):
                if answer.status == 200:
                    self.timings[name] = time.monotonic() - began
                    return
            time.sleep(0.3)
        raise ControlPlaneError(
            f"{name} not healthy after {START_TIMEOUT:.0f} s:\n{self.log_tail(name)}"
        )

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

    # --- Kueue's queues and what it does with a Job ----------------------------------------

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
        self, extra_config: Iterable[Mapping[str, Any]] = (), pod_speed: float = 1.0
    ) -> None:
        """kwok managing the nodes annotated fake, serving pod logs over TLS on loopback;
        its stages' default delays divided by `pod_speed` (`faster_stage`)."""
        self.kwok_port = free_port()
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
                "podPlayStageParallelism": 4,
                "nodePlayStageParallelism": 4,
                "nodeLeaseParallelism": 4,
                "nodeLeaseDurationSeconds": 40,
            },
        }
        config = self.folder / "kwok.yaml"
        config.write_text(
            yaml.safe_dump_all([configuration, *extra_config], sort_keys=False), "utf-8"
        )
        configs = kwok_stages(self.home / "manifests")
        if pod_speed != 1.0:
            stages = [faster_stage(d, pod_speed) for path in configs for d in yaml_documents(path)]
            configs = [self.folder / "kwok-stages.yaml"]
            configs[0].write_text(yaml.safe_dump_all(stages, sort_keys=False), "utf-8")
        configs.insert(0, config)
        self.spawn(
            "kwok",
            [
                f"--kubeconfig={self.plane.kubeconfig}",
                *(f"--config={path}" for path in configs),
                "-v=INFO",
            ],
        )
        self.wait_healthy("kwok", f"https://127.0.0.1:{self.kwok_port}/healthz")

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
        wanted = taint_keys(given)
        added = list(names)
        for name in added:
            self.post("/api/v1/nodes", gpu_node(name, labels, taints=given, devices=devices))
            self.nodes.append(name)
        began = time.monotonic()
        for name in added:

            def ready(node_name: str = name) -> bool:
                node = self.get(f"/api/v1/nodes/{node_name}") or {}
                return condition(node, "Ready") and (
                    taint_keys((node.get("spec") or {}).get("taints") or []) == wanted
                )

            self.wait_for(f"node {name} Ready with taints {sorted(wanted)}", ready)
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
        manifests = self.home / "manifests"
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
        """Namespace `namespace` and an ExternalName Service `name` -> localhost on `port`:
        the API server calls a webhook behind it on loopback."""
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
        manifests = self.home / "manifests"
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
        """Kubeflow Trainer's controller manager with its own CRDs and webhooks, from its
        module's manifests (JobSet must be running: Trainer makes JobSets).

        Its certificate management is off, as JobSet's (the rotator's folder is fixed); its
        webhook server reads controller-runtime's default folder, under `os.TempDir()`, so
        the process gets `TMPDIR` of its own and the run's certificate is written there.
        """
        began = time.monotonic()
        manifests = self.home / "manifests"
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
        """A Git server on loopback for the repositories under `<folder>/git/`, stopped
        with the twin."""
        root = self.folder / "git"
        root.mkdir(exist_ok=True)
        server = GitServer(root)
        self.servers.append(server)
        return server

    def start_flux(self) -> None:
        """Flux's source-controller (artifacts served on loopback) and kustomize-controller,
        in namespace flux-system, with their own CRDs; no leader election, no metrics."""
        began = time.monotonic()
        manifests = self.home / "manifests"
        crds = [
            crd
            for controller in FLUX_CONTROLLERS
            for crd in kustomized_crds(manifests / controller / "config" / "crd")
        ]
        install_crds(self.plane, crds)
        self.plane.namespace(FLUX_NAMESPACE)
        env = {"KUBECONFIG": str(self.plane.kubeconfig), "RUNTIME_NAMESPACE": FLUX_NAMESPACE}
        storage, health = free_port(), free_port()
        (self.folder / "flux-artifacts").mkdir()
        common = ["--enable-leader-election=false", "--metrics-addr=0", "--log-encoding=console"]
        self.spawn(
            "source-controller",
            [
                *common,
                f"--health-addr=127.0.0.1:{health}",
                f"--storage-path={self.folder / 'flux-artifacts'}",
                f"--storage-addr=127.0.0.1:{storage}",
                f"--storage-adv-addr=127.0.0.1:{storage}",
            ],
            env=env,
        )
        self.wait_healthy("source-controller", f"http://127.0.0.1:{health}/readyz")
        health = free_port()
        self.spawn(
            "kustomize-controller",
            [*common, f"--health-addr=127.0.0.1:{health}", "--no-remote-bases=true"],
            env=env,
        )
        self.wait_healthy("kustomize-controller", f"http://127.0.0.1:{health}/readyz")
        self.timings["flux"] = time.monotonic() - began


def cluster_logs(namespace: str, container: str, path: Path) -> dict[str, Any]:
    """kwok's ClusterLogs serving `path` (CRI format) as the log of `container` of every
    pod in `namespace`: pass it to `start` (kwok reads it from its configuration)."""
    return {
        "apiVersion": "kwok.x-k8s.io/v1alpha1",
        "kind": "ClusterLogs",
        "metadata": {"name": f"logs-{namespace}-{container}"},
        "spec": {
            "selector": {"matchNamespaces": [namespace]},
            "logs": [{"containers": [container], "logsFile": str(path), "follow": False}],
        },
    }


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
    """Start the control plane, kube-controller-manager, kube-scheduler, kwok with `nodes`
    (fake GPU nodes carrying `labels`; none is fine, `Twin.add_gpu_nodes` adds them later)
    and Kueue; with `trainer`, JobSet and Kubeflow Trainer before Kueue, whose TrainJob
    integration is then on (as nvcregen renders Kueue's configuration in trainer mode);
    `kueue_settings`: a Kueue Configuration to start from (`Twin.start_kueue`);
    `pod_speed`: how much faster than kwok's defaults pods are created, Ready and complete
    (`faster_stage`). Stopped whole if any step fails.

    Raises:
        ControlPlaneError: When the twin is not built, or a step fails (its log's end said).

    """
    reason = missing()
    if reason:
        raise ControlPlaneError(reason)
    began = time.monotonic()
    folder.mkdir(parents=True, exist_ok=True)
    plane = start_control_plane(folder / "controlplane", crds=[])
    twin = Twin(plane, cache_dir(), folder)
    try:
        twin.timings["control plane"] = time.monotonic() - began
        plane.controllers("garbagecollector,job,nodelifecycle")
        twin.start_scheduler()
        twin.start_kwok(kwok_config, pod_speed)
        twin.add_gpu_nodes(nodes, labels)
        if trainer:
            twin.start_jobset()
            twin.start_trainer()
            twin.start_kueue(("batch/job", "trainer.kubeflow.org/trainjob"), kueue_settings)
        else:
            twin.start_kueue(settings=kueue_settings)
    except BaseException:
        twin.stop()
        raise
    twin.timings["total"] = time.monotonic() - began
    return twin
