"""A Kubernetes control plane on loopback: etcd, kube-apiserver, kube-controller-manager.

Started the way controller-runtime's envtest starts one: etcd on two free loopback ports
(no fsync: a scratch store), kube-apiserver serving TLS with the run's own certificate
(`pki.py`), a static token file, RBAC, a service-account key; kube-controller-manager on
demand with the controllers asked for. A kubeconfig for the admin token is written into
the folder (context `realserver`). Each process runs in a process group of its own
(`processes.py`). tests/kubecontrolplane.py builds the tests' control plane on this one.
"""

from __future__ import annotations

import base64
import json
import secrets
import ssl
import time
import urllib.request
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from nvcregen.rehearse.keepalive import Connections
from nvcregen.rehearse.pki import Credentials, make_credentials
from nvcregen.rehearse.processes import Processes, free_port

CONTEXT = "realserver"
START_TIMEOUT = 120.0  # seconds for /readyz on a loaded 2-core machine
CRD_TIMEOUT = 60.0


class ControlPlaneError(RuntimeError):
    """The control plane or a controller could not start; the message says which step."""


def kubeconfig_text(url: str, ca: Path, token: str, namespace: str = "default") -> str:
    """A kubeconfig with one context, `realserver`, for `url` (JSON, which is YAML)."""
    ca_data = base64.b64encode(ca.read_bytes()).decode()
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "current-context": CONTEXT,
        "clusters": [
            {"name": CONTEXT, "cluster": {"server": url, "certificate-authority-data": ca_data}}
        ],
        "users": [{"name": CONTEXT, "user": {"token": token}}],
        "contexts": [
            {
                "name": CONTEXT,
                "context": {"cluster": CONTEXT, "user": CONTEXT, "namespace": namespace},
            }
        ],
    }
    return json.dumps(config, indent=2)


@dataclass
class ControlPlane:
    """A running etcd and kube-apiserver (and, once asked for, kube-controller-manager).

    Attributes:
        url: The API server's URL (`https://127.0.0.1:<port>`).
        folder: The run's folder (certificates, data, logs, kubeconfig).
        kubeconfig: The admin kubeconfig (context `realserver`).
        credentials: The certificates and keys the server runs with.
        bin: The binaries' folder.
        token: The admin's bearer token (`system:masters`).
        timings: Seconds per step of the start.

    """

    url: str
    folder: Path
    kubeconfig: Path
    credentials: Credentials
    bin: Path
    token: str
    timings: dict[str, float] = field(default_factory=dict)
    server_version: str = ""
    children: Processes | None = None
    connections: Connections | None = None  # kept alive, one per thread (keepalive.py)

    def __post_init__(self) -> None:
        if self.children is None:
            self.children = Processes(self.folder)

    @property
    def group(self) -> Processes:
        """Its processes."""
        assert self.children is not None
        return self.children

    # --- plain HTTP to the server ----------------------------------------------------------

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        content_type: str = "application/json",
        token: str | None = None,
        timeout: float = 30.0,
    ) -> tuple[int, Any]:
        """One request to the API server (as the admin unless `token`); status and body.

        A JSON body is parsed; a body that is not JSON is returned as text.
        """
        data = body if body is None or isinstance(body, bytes) else json.dumps(body).encode()
        headers = {"Authorization": f"Bearer {token or self.token}", "Accept": "application/json"}
        if data is not None:
            headers["Content-Type"] = content_type
        if self.connections is None:
            self.connections = Connections(self.url, self.credentials.ca)
        code, raw = self.connections.send(method, path, data, headers, timeout)
        try:
            return code, json.loads(raw) if raw else None
        except ValueError:
            return code, raw.decode("utf-8", "replace")

    def ok(self, method: str, path: str, body: Any = None, **options: Any) -> Any:
        """`request`, raising ControlPlaneError on anything but 2xx."""
        code, answer = self.request(method, path, body, **options)
        if not 200 <= code < 300:
            raise ControlPlaneError(f"{method} {path}: HTTP {code}: {answer}")
        return answer

    def namespace(self, name: str) -> None:
        """Create a namespace unless it exists."""
        code, answer = self.request(
            "POST", "/api/v1/namespaces", {"metadata": {"name": name}, "kind": "Namespace"}
        )
        if code not in {201, 409}:
            raise ControlPlaneError(f"namespace {name}: HTTP {code}: {answer}")

    def write_kubeconfig(self, path: Path, *, url: str | None = None, token: str = "") -> Path:
        """A kubeconfig for this server (or a proxy in front of it, at `url`)."""
        text = kubeconfig_text(url or self.url, self.credentials.ca, token or self.token)
        path.write_text(text, "utf-8")
        return path

    def version(self) -> str:
        """The server's gitVersion, as clients see it."""
        code, body = self.request("GET", "/version")
        return str(body.get("gitVersion")) if code == 200 and isinstance(body, dict) else "?"

    # --- processes -------------------------------------------------------------------------

    @property
    def processes(self) -> dict[str, Any]:
        """The running processes, by name."""
        return self.group.running

    def spawn(self, name: str, args: list[str]) -> Any:
        """Start one binary of `bin`, its output in `<folder>/<name>.log`."""
        return self.group.spawn(name, [str(self.bin / name), *args])

    def log_tail(self, name: str, size: int = 3000) -> str:
        """The end of one process's log, for an error message."""
        return self.group.log_tail(name, size)

    def wait_ready(self, name: str, path: str, deadline: float) -> None:
        """Poll `path` until it answers 200; fail with the process's log if it died."""
        while time.monotonic() < deadline:
            status = self.group.exited(name)
            if status is not None:
                raise ControlPlaneError(f"{name} exited ({status}):\n{self.log_tail(name)}")
            with suppress(OSError):
                code, _ = self.request("GET", path, timeout=5.0)
                if code == 200:
                    return
            time.sleep(0.2)
        raise ControlPlaneError(
            f"{name} not ready after {START_TIMEOUT:.0f} s:\n{self.log_tail(name)}"
        )

    def controllers(self, enabled: str = "garbagecollector,job") -> None:
        """Start kube-controller-manager with the `--controllers` list `enabled`, once."""
        if "kube-controller-manager" in self.processes:
            return
        started = time.monotonic()
        port = free_port()
        self.spawn(
            "kube-controller-manager",
            [
                f"--kubeconfig={self.kubeconfig}",
                f"--controllers={enabled}",
                "--use-service-account-credentials=false",
                "--leader-elect=false",
                "--bind-address=127.0.0.1",
                f"--secure-port={port}",
                f"--cert-dir={self.folder / 'kcm-certs'}",
                "--authentication-skip-lookup=true",
                "--authorization-always-allow-paths=/healthz,/readyz,/livez",
                "--concurrent-gc-syncs=5",
                "--v=1",
            ],
        )
        healthy(
            self.group,
            "kube-controller-manager",
            f"https://127.0.0.1:{port}/healthz",
            START_TIMEOUT,
        )
        self.timings["kube-controller-manager"] = time.monotonic() - started

    def stop(self) -> None:
        """Stop every process (controllers, then the API server, then etcd). Idempotent."""
        self.group.stop()


def healthy(group: Processes, name: str, url: str, timeout: float) -> float:
    """Poll a process's health URL until it answers 200; the seconds it took.

    Raises:
        ControlPlaneError: When it exits, or is not healthy within `timeout`.

    """
    began = time.monotonic()
    context = ssl._create_unverified_context()
    while time.monotonic() < began + timeout:
        status = group.exited(name)
        if status is not None:
            raise ControlPlaneError(f"{name} exited ({status}):\n{group.log_tail(name)}")
        with (
            suppress(OSError),
            urllib.request.urlopen(url, context=context, timeout=5.0) as answer,
        ):
            if answer.status == 200:
                return time.monotonic() - began
        time.sleep(0.2)
    raise ControlPlaneError(f"{name} not healthy after {timeout:.0f} s:\n{group.log_tail(name)}")


def install_crds(plane: ControlPlane, crds: list[dict[str, Any]]) -> None:
    """Create each CRD, then wait until discovery serves every one (it is Established).

    Discovery (`GET /apis/<group>/<version>`, small) is polled rather than each CRD (some
    are 360 KB of schema), so waiting costs the server little.
    """
    path = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"

    def create(crd: dict[str, Any]) -> None:
        code, answer = plane.request("POST", path, crd, timeout=60.0)
        if code not in {201, 409}:
            raise ControlPlaneError(f"CRD {crd['metadata']['name']}: HTTP {code}: {answer}")

    with ThreadPoolExecutor(4) as pool:
        list(pool.map(create, crds))
    waiting: dict[str, set[str]] = {}
    for crd in crds:
        spec = crd["spec"]
        for version in spec["versions"]:
            if version.get("served"):
                gv = f"{spec['group']}/{version['name']}"
                waiting.setdefault(gv, set()).add(spec["names"]["plural"])
    deadline = time.monotonic() + CRD_TIMEOUT
    while waiting and time.monotonic() < deadline:
        for gv in sorted(waiting):
            code, body = plane.request("GET", f"/apis/{gv}")
            served = (
                {r.get("name") for r in (body or {}).get("resources") or []}
                if code == 200
                else set()
            )
            if waiting[gv] <= served:
                del waiting[gv]
        if waiting:
            time.sleep(0.1)
    if waiting:
        raise ControlPlaneError(f"CRDs not served after {CRD_TIMEOUT:.0f} s: {waiting}")


Plane = TypeVar("Plane", bound=ControlPlane)


def start(
    folder: Path,
    binaries: Path,
    kind: type[Plane],
    *,
    admin_token: str = "",
    other_tokens: Mapping[str, str] | None = None,
) -> Plane:
    """Start etcd and kube-apiserver from `binaries`, as a `kind` (ControlPlane or a subclass).

    The admin token is random unless given; `other_tokens` (token: user) have no rights.

    Raises:
        ControlPlaneError: When a step fails; what was started is stopped again.

    """
    began = time.monotonic()
    admin = admin_token or secrets.token_hex(16)
    tokens = {admin: ("admin", "system:masters")}
    tokens |= {token: (user, "") for token, user in (other_tokens or {}).items()}
    folder.mkdir(parents=True, exist_ok=True)
    credentials = make_credentials(folder / "pki", tokens)
    port = free_port()
    plane = kind(
        f"https://127.0.0.1:{port}", folder, folder / "kubeconfig", credentials, binaries, admin
    )
    plane.write_kubeconfig(plane.kubeconfig)
    try:
        _start_servers(plane, port)
    except BaseException:
        plane.stop()
        raise
    plane.timings["etcd+kube-apiserver"] = time.monotonic() - began
    return plane


def _start_servers(plane: ControlPlane, port: int) -> None:
    folder, files = plane.folder, plane.credentials
    began = time.monotonic()
    client, peer = free_port(), free_port()
    plane.spawn(
        "etcd",
        [
            f"--data-dir={folder / 'etcd'}",
            f"--listen-client-urls=http://127.0.0.1:{client}",
            f"--advertise-client-urls=http://127.0.0.1:{client}",
            f"--listen-peer-urls=http://127.0.0.1:{peer}",
            f"--initial-advertise-peer-urls=http://127.0.0.1:{peer}",
            f"--initial-cluster=default=http://127.0.0.1:{peer}",
            "--unsafe-no-fsync=true",
            "--log-level=warn",
        ],
    )
    plane.spawn(
        "kube-apiserver",
        [
            f"--etcd-servers=http://127.0.0.1:{client}",
            "--bind-address=127.0.0.1",
            "--advertise-address=127.0.0.1",
            f"--secure-port={port}",
            f"--cert-dir={folder / 'apiserver-certs'}",
            f"--tls-cert-file={files.cert}",
            f"--tls-private-key-file={files.key}",
            f"--client-ca-file={files.ca}",
            f"--token-auth-file={files.tokens}",
            "--authorization-mode=RBAC",
            f"--service-account-key-file={files.sa_pub}",
            f"--service-account-signing-key-file={files.sa_key}",
            "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
            "--service-cluster-ip-range=10.0.0.0/24",
            "--allow-privileged=true",
            "--endpoint-reconciler-type=none",
            "--disable-admission-plugins=ServiceAccount",
            "--profiling=false",
            "--v=1",
        ],
    )
    plane.wait_ready("kube-apiserver", "/readyz", began + START_TIMEOUT)
    plane.server_version = plane.version()


def list_items(plane: ControlPlane, path: str) -> list[Mapping[str, Any]]:
    """The objects of a list `path` answers; none when it answers other than 200."""
    code, body = plane.request("GET", path)
    listed = body.get("items") if code == 200 and isinstance(body, dict) else None
    return [i for i in listed or [] if isinstance(i, dict)]
