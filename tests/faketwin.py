"""A twin with no Kubernetes behind it, for the tests of what starts controllers on it.

`FakePlane` answers what `install_crds` and `ControlPlane.namespace` send (a CRD created
is served at once), recording each request with the controllers running at the time;
`fake_controller` writes a stand-in binary into the build's `bin/`: a Python script that
records its flags and environment (`recorded`) and answers 200 on its `--health-addr`,
or, with `healthy=False`, exits at once. `fake_twin` puts them together.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nvcregen.rehearse.controlplane import ControlPlane
from nvcregen.rehearse.locate import Builds
from nvcregen.rehearse.pki import Credentials
from nvcregen.rehearse.processes import Processes
from nvcregen.rehearse.twin import Twin

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
SCRIPT = """#!{python}
import http.server, json, os, sys
from pathlib import Path

here = Path(sys.argv[0])
record = {{"args": sys.argv[1:], "env": dict(os.environ)}}
(here.parent / (here.name + ".json")).write_text(json.dumps(record))
if not {healthy}:
    sys.exit(3)
address = next(a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--health-addr="))
host, port = address.rsplit(":", 1)


class Ok(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args):
        pass


http.server.HTTPServer((host, int(port)), Ok).serve_forever()
"""


@dataclass
class Request:
    """One request the fake plane answered, and the twin's controllers running then."""

    method: str
    path: str
    body: Any
    running: tuple[str, ...]


@dataclass
class FakePlane(ControlPlane):
    """A control plane answering CRD, discovery and namespace requests from memory."""

    requests: list[Request] = field(default_factory=list)
    crds: list[dict[str, Any]] = field(default_factory=list)
    watching: Processes | None = None  # the twin's controllers, once it exists

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
        """Record it; a CRD or namespace is created, discovery serves the CRDs' plurals."""
        running = tuple(self.watching.running) if self.watching is not None else ()
        self.requests.append(Request(method, path, body, running))
        if (method, path) == ("POST", CRDS):
            self.crds.append(body)
            return 201, body
        if (method, path) == ("POST", "/api/v1/namespaces"):
            return 201, body
        if method == "GET" and path.startswith("/apis/"):
            served = [
                {"name": crd["spec"]["names"]["plural"]}
                for crd in self.crds
                for version in crd["spec"]["versions"]
                if f"/apis/{crd['spec']['group']}/{version['name']}" == path
            ]
            return 200, {"resources": served}
        return 404, None

    def posted(self, path: str) -> list[Request]:
        """The POSTs to `path`, in order."""
        return [r for r in self.requests if (r.method, r.path) == ("POST", path)]


def fake_plane(folder: Path) -> FakePlane:
    """A FakePlane in `folder` (its kubeconfig a path there, never read)."""
    folder.mkdir(parents=True, exist_ok=True)
    files = [folder / name for name in ("ca", "cert", "key", "sa.key", "sa.pub", "tokens")]
    return FakePlane(
        "https://127.0.0.1:1", folder, folder / "kubeconfig", Credentials(*files), folder, "token"
    )


def fake_twin(folder: Path) -> tuple[Twin, FakePlane]:
    """A Twin on a FakePlane, its build's `bin/` and `manifests/` empty folders under `folder`."""
    plane = fake_plane(folder / "plane")
    builds = Builds(folder / "controlplane", folder / "build")
    builds.twin_bin.mkdir(parents=True)
    builds.manifests.mkdir(parents=True)
    (folder / "run").mkdir()
    twin = Twin(plane, builds, folder / "run")
    plane.watching = twin.group
    return twin, plane


def fake_controller(twin: Twin, name: str, *, healthy: bool = True) -> Path:
    """A stand-in binary `name` in the twin's `bin/` (module doc)."""
    path = twin.builds.twin_bin / name
    path.write_text(SCRIPT.format(python=sys.executable, healthy=healthy), "utf-8")
    path.chmod(0o755)
    return path


def recorded(twin: Twin, name: str) -> dict[str, Any] | None:
    """The flags (`args`) and environment (`env`) a stand-in started with; None if never."""
    path = twin.builds.twin_bin / f"{name}.json"
    if not path.exists():
        return None
    found: dict[str, Any] = json.loads(path.read_text("utf-8"))
    return found


def crd(group: str, plural: str, kind: str) -> dict[str, Any]:
    """A CRD of one served version, v1."""
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}"},
        "spec": {
            "group": group,
            "names": {"plural": plural, "kind": kind},
            "scope": "Namespaced",
            "versions": [{"name": "v1", "served": True, "storage": True}],
        },
    }
