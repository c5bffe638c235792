"""Where the built control plane and twin binaries are, for the pins of this checkout.

`make controlplane` (tools/controlplane/build.sh) and `make twin` (tools/twin/build.sh)
build them into `${XDG_CACHE_HOME:-~/.cache}/nvcregen/{controlplane,twin}/<key>/`, the
key the first 16 hex digits of the sha256 of their go.mod and go.sum files: a changed pin
is a new folder. Nothing here builds: a missing build is `NotBuiltError`, naming `make twin`.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parents[2]  # nvcregen/rehearse/ -> the checkout
CONTROL_PLANE_BINARIES = ("etcd", "kube-apiserver", "kube-controller-manager")
TWIN_BINARIES = (
    "kwok",
    "kube-scheduler",
    "kueue",
    "jobset",
    "trainer-controller-manager",
    "source-controller",
    "kustomize-controller",
)
TWIN_MODULES = ("twin/kwok", "twin/managers", "twin/flux", "controlplane")
BUILD = "make twin"


class NotBuiltError(RuntimeError):
    """The binaries are not built for these pins; the message says so in one line."""


@dataclass(frozen=True)
class Builds:
    """The built folders: the control plane's binaries, the twin's `bin/` and `manifests/`."""

    control_plane: Path
    twin: Path

    @property
    def twin_bin(self) -> Path:
        """The twin's binaries."""
        return self.twin / "bin"

    @property
    def manifests(self) -> Path:
        """The controllers' own manifests, copied from their modules by the build."""
        return self.twin / "manifests"


def cache_key(files: list[Path]) -> str:
    """The build cache's key, as build.sh computes it: sha256 of the files, 16 hex."""
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def _cache() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "nvcregen"


def pin_files(tools: Path, modules: tuple[str, ...]) -> list[Path]:
    """The go.mod and go.sum of each module under `tools`, in build.sh's order."""
    return [tools / module / name for module in modules for name in ("go.mod", "go.sum")]


def control_plane_dir(tools: Path = CHECKOUT / "tools") -> Path:
    """Where `make controlplane` puts etcd, kube-apiserver and kube-controller-manager."""
    return _cache() / "controlplane" / cache_key(pin_files(tools, ("controlplane",))) / "bin"


def twin_dir(tools: Path = CHECKOUT / "tools") -> Path:
    """Where `make twin` puts `bin/` and `manifests/`."""
    return _cache() / "twin" / cache_key(pin_files(tools, TWIN_MODULES))


def missing(tools: Path = CHECKOUT / "tools") -> str:
    """Why the twin cannot run here, in one line ("" when every build is complete)."""
    if not all(p.is_file() for p in pin_files(tools, TWIN_MODULES)):
        return f"no twin pins under {tools} (run nvcregen rehearse from a checkout; `{BUILD}`)"
    planes, twin = control_plane_dir(tools), twin_dir(tools)
    plane_absent = [n for n in CONTROL_PLANE_BINARIES if not os.access(planes / n, os.X_OK)]
    if plane_absent:
        return (
            f"the control plane is not built (no {', '.join(plane_absent)} in {planes};"
            f" run `make controlplane twin`)"
        )
    return twin_missing(twin)


def twin_missing(twin: Path) -> str:
    """Why the twin's build folder `twin` is not complete, in one line ("" when it is)."""
    absent = [n for n in TWIN_BINARIES if not os.access(twin / "bin" / n, os.X_OK)]
    if absent:
        return f"the twin is not built (no {', '.join(absent)} in {twin / 'bin'}; run `{BUILD}`)"
    if not (twin / "manifests").is_dir():
        return f"the twin's manifests are missing from {twin} (run `{BUILD}`)"
    return ""


def builds(tools: Path = CHECKOUT / "tools") -> Builds:
    """The built folders for these pins.

    Raises:
        NotBuiltError: When a binary or the manifests are missing (the message names `make twin`).

    """
    reason = missing(tools)
    if reason:
        raise NotBuiltError(reason)
    return Builds(control_plane_dir(tools), twin_dir(tools))
