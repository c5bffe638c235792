"""A real Kubernetes control plane for the tests: etcd, kube-apiserver, kube-controller-manager.

The binaries are built from published Go modules by `tools/controlplane/build.sh` into
`${XDG_CACHE_HOME:-~/.cache}/nvcregen/controlplane/<key>/bin/` (the key: the sha256 of the
wrapper module's go.mod and go.sum), which `make test` runs first; `binaries()` runs it
when they are absent. `start()` brings them up the way controller-runtime's envtest does:

- etcd on two free loopback ports, data in a temporary folder, no fsync (a test store);
- kube-apiserver on a free loopback port, serving TLS with a certificate made for the run
  (a CA, and a serving certificate for 127.0.0.1 and localhost, made with `cryptography`),
  a static token file (an admin token in `system:masters`, and a token with no rights,
  for RBAC refusals), RBAC authorization, a service-account key and issuer;
- a kubeconfig for the official client (context `realserver`, namespace `default`);
- the vendored CRDs of schemas/upstream/ created and waited for until Established;
- kube-controller-manager on demand (`ControlPlane.controllers()`), with only the garbage
  collector and the Job controller, on the admin token.

Everything runs as child processes of the test session and is stopped at its end.
"""

from __future__ import annotations

import base64
import ctypes
import datetime
import hashlib
import ipaddress
import json
import os
import signal
import socket
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import suppress
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, BinaryIO

import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

ROOT = Path(__file__).resolve().parent.parent
MODULE = ROOT / "tools" / "controlplane"
BINARIES = ("etcd", "kube-apiserver", "kube-controller-manager")
ADMIN_TOKEN = "nvcregen-test-admin"
NOBODY_TOKEN = "nvcregen-test-nobody"
CONTEXT = "realserver"
RETIRED_GROUPS = frozenset({"cre.nvidia.com"})
# The CRDs nvcregen checks against offline (schemas/upstream/SOURCES.md): every vendored
# one, a derived copy replacing the verbatim CRD of the same name, and not the renamed
# `cre.nvidia.com` group, which is kept for the record only.
CRD_GLOBS = ("*/*/crds/*.yaml", "*/*/crds-derived/*.yaml")  # derived ones replace, by name
START_TIMEOUT = 120.0  # seconds for /readyz on a loaded 2-core machine
# The first build took 20 minutes of wall time on the loaded 2-core machine (design note
# 0016); a build still running after three times that is stuck (a module proxy that
# never answers), and the tests say so instead of waiting for CI's own limit.
BUILD_TIMEOUT = float(os.environ.get("NVCREGEN_CONTROLPLANE_BUILD_TIMEOUT") or 3600)
CRD_TIMEOUT = 60.0


class ControlPlaneError(RuntimeError):
    """The control plane could not be built or started; the message says which step."""


def cache_key() -> str:
    """The build cache's key, as build.sh computes it: sha256 of go.mod + go.sum, 16 hex."""
    digest = hashlib.sha256()
    for name in ("go.mod", "go.sum"):
        digest.update((MODULE / name).read_bytes())
    return digest.hexdigest()[:16]


def bin_dir() -> Path:
    """Where build.sh puts the binaries for the current pins."""
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "nvcregen" / "controlplane" / cache_key() / "bin"


def binaries() -> Path:
    """The folder holding the three binaries, building them first when absent.

    Raises:
        ControlPlaneError: When the build fails (no Go toolchain, no module proxy).

    """
    folder = bin_dir()
    if all(os.access(folder / name, os.X_OK) for name in BINARIES):
        return folder
    run_build(MODULE / "build.sh", BUILD_TIMEOUT, "NVCREGEN_CONTROLPLANE_BUILD_TIMEOUT")
    if not all((folder / n).is_file() for n in BINARIES):
        raise ControlPlaneError(f"tools/controlplane/build.sh left no binaries in {folder}")
    return folder


def run_build(script: Path, timeout: float, limit_variable: str) -> None:
    """Run a build script in its own process group, stopped whole when over `timeout`.

    Raises:
        ControlPlaneError: When it fails, or runs over its time (every go and compiler
            process it started is stopped then).

    """
    build = subprocess.Popen(
        [str(script)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
    )
    shown = script.relative_to(script.parents[2]).as_posix()  # tools/<name>/build.sh
    try:
        _, errors = build.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        errors = _stop_group(build)
        raise ControlPlaneError(
            f"{shown} ran over {timeout:g} s and was stopped"
            f" (is the Go module proxy reachable? {limit_variable} sets the limit):\n"
            f"{errors[-3000:]}"
        ) from None
    if build.returncode != 0:
        raise ControlPlaneError(f"{shown} failed ({build.returncode}):\n{errors[-3000:]}")


def _stop_group(process: subprocess.Popen[str]) -> str:
    """Stop a process group: TERM (build.sh removes its temporary folder), then KILL."""
    for sig, wait in ((signal.SIGTERM, 10.0), (signal.SIGKILL, None)):
        with suppress(ProcessLookupError):
            os.killpg(process.pid, sig)
        with suppress(subprocess.TimeoutExpired):
            return process.communicate(timeout=wait)[1]
    return ""


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


# --- certificates and keys -----------------------------------------------------------------


def _pem_key(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def _certificate(
    subject: str,
    key: ec.EllipticCurvePrivateKey,
    issuer: tuple[x509.Certificate, ec.EllipticCurvePrivateKey] | None,
) -> x509.Certificate:
    """A CA certificate (issuer None) or a serving certificate for 127.0.0.1 and localhost."""
    now = datetime.datetime.now(datetime.UTC)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)])
    builder = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(issuer[0].subject if issuer else name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=issuer is None, path_length=None), critical=True)
    )
    if issuer is None:
        usage = x509.KeyUsage(False, False, False, False, False, True, True, False, False)
        builder = builder.add_extension(usage, critical=True)
        return builder.sign(key, hashes.SHA256())
    names = [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
    builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
    builder = builder.add_extension(
        x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False
    )
    return builder.sign(issuer[1], hashes.SHA256())


@dataclass(frozen=True)
class Credentials:
    """The files kube-apiserver is started with, and the CA clients trust."""

    ca: Path
    cert: Path
    key: Path
    sa_key: Path
    sa_pub: Path
    tokens: Path


def make_credentials(folder: Path) -> Credentials:
    """A CA, a serving certificate, a service-account key pair and a token file."""
    folder.mkdir(parents=True, exist_ok=True)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = _certificate("nvcregen-test-ca", ca_key, None)
    key = ec.generate_private_key(ec.SECP256R1())
    cert = _certificate("kube-apiserver", key, (ca, ca_key))
    sa = ec.generate_private_key(ec.SECP256R1())
    files = Credentials(
        folder / "ca.crt",
        folder / "apiserver.crt",
        folder / "apiserver.key",
        folder / "sa.key",
        folder / "sa.pub",
        folder / "tokens.csv",
    )
    files.ca.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    files.cert.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    files.key.write_bytes(_pem_key(key))
    files.sa_key.write_bytes(_pem_key(sa))
    files.sa_pub.write_bytes(
        sa.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    files.tokens.write_text(
        f'{ADMIN_TOKEN},admin,admin-uid,"system:masters"\n{NOBODY_TOKEN},nobody,nobody-uid\n',
        encoding="utf-8",
    )
    return files


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


# --- the control plane -----------------------------------------------------------------------


@dataclass
class ControlPlane:
    """A running etcd and kube-apiserver (and, once asked for, kube-controller-manager).

    Attributes:
        url: The API server's URL (`https://127.0.0.1:<port>`).
        folder: The run's temporary folder (certificates, data, logs, kubeconfig).
        kubeconfig: The admin kubeconfig (context `realserver`).
        credentials: The certificates and keys the server runs with.
        bin: The binaries' folder.
        timings: Seconds per step of the start ("etcd", "kube-apiserver", "crds", ...).

    """

    url: str
    folder: Path
    kubeconfig: Path
    credentials: Credentials
    bin: Path
    timings: dict[str, float] = field(default_factory=dict)
    server_version: str = ""
    processes: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    logs: dict[str, BinaryIO] = field(default_factory=dict)

    # --- plain HTTP to the server, for the tests' own setup -----------------------------------

    def _context(self) -> ssl.SSLContext:
        return ssl.create_default_context(cafile=str(self.credentials.ca))

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        content_type: str = "application/json",
        token: str = ADMIN_TOKEN,
        timeout: float = 30.0,
    ) -> tuple[int, Any]:
        """One request to the API server as the admin; the status and parsed JSON body."""
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.url + path, data=data, method=method)
        request.add_header("Authorization", f"Bearer {token}")
        request.add_header("Accept", "application/json")
        if data is not None:
            request.add_header("Content-Type", content_type)
        try:
            with urllib.request.urlopen(
                request, context=self._context(), timeout=timeout
            ) as answer:
                raw, code = answer.read(), answer.status
        except urllib.error.HTTPError as exc:
            raw, code = exc.read(), exc.code
        try:
            return code, json.loads(raw) if raw else None
        except ValueError:
            return code, raw.decode("utf-8", "replace")

    def ok(self, method: str, path: str, body: Any = None, **options: Any) -> Any:
        """`request`, failing loudly on anything but 2xx."""
        code, answer = self.request(method, path, body, **options)
        if not 200 <= code < 300:
            raise ControlPlaneError(f"{method} {path}: HTTP {code}: {answer}")
        return answer

    def create(self, obj: Mapping[str, Any]) -> dict[str, Any]:
        """Create one object (POST to its collection); returns it as stored."""
        created: dict[str, Any] = self.ok("POST", collection_path(obj), dict(obj))
        return created

    def namespace(self, name: str) -> None:
        """Create a namespace unless it exists."""
        code, answer = self.request(
            "POST", "/api/v1/namespaces", {"metadata": {"name": name}, "kind": "Namespace"}
        )
        if code not in {201, 409}:
            raise ControlPlaneError(f"namespace {name}: HTTP {code}: {answer}")

    def write_kubeconfig(
        self, path: Path, *, url: str | None = None, token: str = ADMIN_TOKEN
    ) -> Path:
        """A kubeconfig for this server (or a proxy in front of it, at `url`)."""
        path.write_text(kubeconfig_text(url or self.url, self.credentials.ca, token), "utf-8")
        return path

    # --- processes ----------------------------------------------------------------------------

    def spawn(self, name: str, args: list[str]) -> subprocess.Popen[bytes]:
        """Start one binary, its output in `<folder>/<name>.log`."""
        log = (self.folder / f"{name}.log").open("wb")
        self.logs[name] = log
        process = subprocess.Popen(
            [str(self.bin / name), *args],
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            preexec_fn=_die_with_parent,  # noqa: PLW1509 (only prctl, before exec)
        )
        self.processes[name] = process
        return process

    def log_tail(self, name: str, size: int = 3000) -> str:
        """The end of one process's log, for an error message."""
        text = (self.folder / f"{name}.log").read_text("utf-8", "replace")
        return text[-size:]

    def wait_ready(self, name: str, path: str, deadline: float) -> None:
        """Poll `path` until it answers 200 `ok`; fail with the process's log if it died."""
        while time.monotonic() < deadline:
            process = self.processes[name]
            if process.poll() is not None:
                raise ControlPlaneError(
                    f"{name} exited ({process.returncode}):\n{self.log_tail(name)}"
                )
            with suppress(OSError):
                code, _ = self.request("GET", path, timeout=5.0)
                if code == 200:
                    return
            time.sleep(0.2)
        raise ControlPlaneError(
            f"{name} not ready after {START_TIMEOUT:.0f} s:\n{self.log_tail(name)}"
        )

    def controllers(self, enabled: str = "garbagecollector,job") -> None:
        """Start kube-controller-manager (garbage collector, Job controller) once.

        `enabled` is its `--controllers` list (the twin adds the node lifecycle controller,
        which lifts a new node's `not-ready` taint).
        """
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
        deadline = time.monotonic() + START_TIMEOUT
        context = ssl._create_unverified_context()
        while time.monotonic() < deadline:
            process = self.processes["kube-controller-manager"]
            if process.poll() is not None:
                raise ControlPlaneError(
                    f"kube-controller-manager exited ({process.returncode}):\n"
                    f"{self.log_tail('kube-controller-manager')}"
                )
            with (
                suppress(OSError),
                urllib.request.urlopen(
                    f"https://127.0.0.1:{port}/healthz", context=context, timeout=5.0
                ) as answer,
            ):
                if answer.status == 200:
                    break
            time.sleep(0.2)
        else:
            raise ControlPlaneError("kube-controller-manager did not become healthy")
        self.timings["kube-controller-manager"] = time.monotonic() - started

    def stop(self) -> None:
        """Stop every process (controllers, then the API server, then etcd); close logs."""
        for name in reversed(list(self.processes)):
            process = self.processes[name]
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
        for log in self.logs.values():
            log.close()

    def summary(self) -> str:
        """How long each step of the start took, for the test session's report."""
        steps = ", ".join(f"{name} {seconds:.1f} s" for name, seconds in self.timings.items())
        return f"control plane {self.server_version} at {self.url} started: {steps}"

    def version(self) -> str:
        """The server's gitVersion, as clients see it."""
        code, body = self.request("GET", "/version")
        return str(body.get("gitVersion")) if code == 200 and isinstance(body, dict) else "?"


def _die_with_parent() -> None:
    """In the child before exec: on Linux, get SIGKILL when the test process dies, so a
    killed pytest (a CI timeout, Ctrl-C twice) leaves no etcd or API server behind.
    SIGKILL, not SIGTERM: a kube-apiserver whose etcd is gone waits for it on SIGTERM.
    A clean end still stops them with SIGTERM (`ControlPlane.stop`)."""
    if sys.platform == "linux":
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def collection_path(obj: Mapping[str, Any]) -> str:
    """The collection an object is created in: a built-in kind the tests create, or a CRD's."""
    api, kind = str(obj["apiVersion"]), str(obj["kind"])
    plural = BUILT_IN_PLURALS.get(kind) or crd_plurals()[kind]
    base = f"/apis/{api}" if "/" in api else f"/api/{api}"
    namespace = (obj.get("metadata") or {}).get("namespace")
    return f"{base}/namespaces/{namespace}/{plural}" if namespace else f"{base}/{plural}"


def object_path(obj: Mapping[str, Any]) -> str:
    """The URL path of one object."""
    return f"{collection_path(obj)}/{obj['metadata']['name']}"


BUILT_IN_PLURALS = {
    "CustomResourceDefinition": "customresourcedefinitions",
    "ConfigMap": "configmaps",
    "Namespace": "namespaces",
    "Node": "nodes",
    "Pod": "pods",
    "Job": "jobs",
}


@cache
def crd_plurals() -> dict[str, str]:
    """Kind -> plural of every CRD the control plane installs."""
    return {c["spec"]["names"]["kind"]: c["spec"]["names"]["plural"] for c in vendored_crds()}


def vendored_crds() -> list[dict[str, Any]]:
    """Every CRD vendored under schemas/upstream/, plus the test stand-ins (sorted by name)."""
    crds: dict[str, dict[str, Any]] = {}
    for pattern in CRD_GLOBS:
        for path in sorted((ROOT / "schemas" / "upstream").glob(pattern)):
            for doc in yaml.safe_load_all(path.read_text("utf-8")):
                if (
                    isinstance(doc, dict)
                    and doc.get("kind") == "CustomResourceDefinition"
                    and doc["spec"]["group"] not in RETIRED_GROUPS
                ):
                    crds[doc["metadata"]["name"]] = doc
    for crd in STAND_IN_CRDS:
        crds.setdefault(crd["metadata"]["name"], crd)
    return [crds[name] for name in sorted(crds)]


def _open_crd(group: str, kind: str, plural: str, scope: str = "Namespaced") -> dict[str, Any]:
    """A CRD that keeps any content: for a kind whose upstream CRD is not vendored."""
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}"},
        "spec": {
            "group": group,
            "names": {"kind": kind, "plural": plural, "singular": kind.lower()},
            "scope": scope,
            "versions": [
                {
                    "name": "v1alpha1",
                    "served": True,
                    "storage": True,
                    "subresources": {"status": {}},
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "x-kubernetes-preserve-unknown-fields": True,
                        }
                    },
                }
            ],
        },
    }


# NVCRE's Workflow CRD is not among the vendored ones (nvcregen never writes a Workflow; it
# only reads them back in `collect`), so the tests install an open one under its real name.
STAND_IN_CRDS = (_open_crd("nvcre.nvidia.com", "Workflow", "workflows"),)


def install_crds(plane: ControlPlane, crds: list[dict[str, Any]]) -> None:
    """Create each CRD, then wait until discovery serves every one (it is Established).

    Discovery (`GET /apis/<group>/<version>`, small) is polled rather than each CRD (some
    are 360 KB of schema), so waiting costs the server little.
    """
    path = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
    began = time.monotonic()

    def create(crd: dict[str, Any]) -> None:
        code, answer = plane.request("POST", path, crd, timeout=60.0)
        if code not in {201, 409}:
            raise ControlPlaneError(f"CRD {crd['metadata']['name']}: HTTP {code}: {answer}")

    with ThreadPoolExecutor(4) as pool:
        list(pool.map(create, crds))
    plane.timings["crd-create"] = time.monotonic() - began
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


def start(folder: Path, crds: list[dict[str, Any]] | None = None) -> ControlPlane:
    """Build (if needed) and start etcd and kube-apiserver, install the CRDs.

    `crds`: the CRDs to install, the vendored ones when None (the twin installs the
    controllers' own instead: tests/twin.py).

    Raises:
        ControlPlaneError: When a step fails; what was started is stopped again.

    """
    began = time.monotonic()
    binary_folder = binaries()
    built = time.monotonic() - began
    credentials = make_credentials(folder / "pki")
    port = free_port()
    plane = ControlPlane(
        f"https://127.0.0.1:{port}", folder, folder / "kubeconfig", credentials, binary_folder
    )
    plane.timings["binaries"] = built
    plane.write_kubeconfig(plane.kubeconfig)
    try:
        _start_servers(plane, port)
        crds_began = time.monotonic()
        install_crds(plane, vendored_crds() if crds is None else crds)
        plane.timings["crds"] = time.monotonic() - crds_began
    except BaseException:
        plane.stop()
        raise
    plane.timings["total"] = time.monotonic() - began
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
    plane.timings["etcd+kube-apiserver"] = time.monotonic() - began


def session(folder: Path) -> Iterator[ControlPlane]:
    """Start the control plane for a test session, and stop it after."""
    plane = start(folder)
    try:
        yield plane
    finally:
        plane.stop()
