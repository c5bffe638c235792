"""Kueue v0.19.2's own verdict on prebuilt Workloads: the `kueueparity` tool.

`tools/kueueparity/` is a Go program built from the published Kueue and Trainer modules
(go.mod/go.sum pin them) by `tools/kueueparity/build.sh` into
`${XDG_CACHE_HOME:-~/.cache}/nvcregen/kueueparity/<key>/bin/` (the key: the sha256 of
go.mod, go.sum and the Go files), which `make test` runs first; `binary()` runs it when
the binary is absent. `judge()` hands it the runtimes and the runs (each a TrainJob or a
batch/v1 Job and its Workload, as an API server returned them) and returns its verdicts:
per run the kind, name, state, whether Kueue's `EquivalentToWorkload` holds, the pod sets
Kueue derives, and the first difference when it does not (design note 0016).
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from kubecontrolplane import ControlPlaneError, run_build

ROOT = Path(__file__).resolve().parent.parent
MODULE = ROOT / "tools" / "kueueparity"
NAME = "kueueparity"
# Measured cold (no Go build cache) on the loaded 2-core machine: design note 0016. A build
# running three times that long is stuck (a module proxy that never answers).
BUILD_TIMEOUT = float(os.environ.get("NVCREGEN_KUEUEPARITY_BUILD_TIMEOUT") or 1800)
RUN_TIMEOUT = 300.0


def sources() -> list[Path]:
    """The files the build's key covers, in build.sh's order (go.mod, go.sum, *.go sorted)."""
    go_files = sorted(MODULE.glob("*.go"), key=lambda p: p.name.encode())
    return [MODULE / "go.mod", MODULE / "go.sum", *go_files]


def cache_key() -> str:
    """build.sh's key: sha256 of go.mod + go.sum + the Go files, 16 hex."""
    digest = hashlib.sha256()
    for path in sources():
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def bin_dir() -> Path:
    """Where build.sh puts the binary for the current pins and sources."""
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "nvcregen" / NAME / cache_key() / "bin"


def binary() -> Path:
    """The tool, built first when absent.

    Raises:
        ControlPlaneError: When the build fails or runs over its time.

    """
    path = bin_dir() / NAME
    if os.access(path, os.X_OK):
        return path
    run_build(MODULE / "build.sh", BUILD_TIMEOUT, "NVCREGEN_KUEUEPARITY_BUILD_TIMEOUT")
    if not path.is_file():
        raise ControlPlaneError(f"tools/kueueparity/build.sh built no {path}")
    return path


def judge(
    objects: Sequence[Mapping[str, Any]],
    runs: Sequence[tuple[Mapping[str, Any], Mapping[str, Any]]],
    kubeconfig: Path,
    *,
    start: bool = False,
) -> list[dict[str, Any]]:
    """Kueue's verdict on each (job, workload) run, in order.

    With `start`, each Workload is an admitted one and the tool first starts its job from
    it as Kueue does (RunWithPodSetsInfo), then checks the running job.

    `objects` are what Kueue and Trainer read through their client (TrainingRuntimes,
    ClusterTrainingRuntimes, ResourceFlavors); `kubeconfig` names the API server that
    dry-runs the Workload Kueue's TrainJob integration creates to default its pod sets.

    Raises:
        ControlPlaneError: When the tool fails as a whole (input it cannot read).

    """
    request = {
        "objects": list(objects),
        "runs": [{"job": job, "workload": wl, "start": start} for job, wl in runs],
    }
    done = subprocess.run(
        [str(binary()), f"-kubeconfig={kubeconfig}"],
        input=json.dumps(request),
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
        check=False,
    )
    if done.returncode != 0:
        raise ControlPlaneError(f"kueueparity failed ({done.returncode}):\n{done.stderr[-3000:]}")
    answer: dict[str, Any] = json.loads(done.stdout)
    verdicts: list[dict[str, Any]] = answer["runs"]
    return verdicts
