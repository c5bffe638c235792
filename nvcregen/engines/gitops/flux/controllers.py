"""Flux's own controllers on the twin: source-controller and kustomize-controller.

What a Flux rehearsal starts before it hands Flux the site (`play.py`): the two binaries
`make twin` builds (`tools/twin/flux/`), after their CRDs, read from the copy of each
module's `config/crd` the build keeps in `manifests/<controller>/`. Both run in Flux's
namespace (`RUNTIME_NAMESPACE`), with no leader election and no metrics, logging as text;
source-controller keeps its artifacts in the run's folder and serves them on loopback
(`--storage-adv-addr` the same address: where kustomize-controller fetches them). The twin
starts them as it starts any controller that needs only its CRDs and a namespace
(`Twin.start_controllers`), under the engine's name in its timings.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from nvcregen.engines.gitops.flux.engine import ENGINE
from nvcregen.engines.gitops.flux.layer import FLUX_NAMESPACE
from nvcregen.rehearse.manifests import kustomized_crds
from nvcregen.rehearse.processes import free_port
from nvcregen.rehearse.twin import Controller, Twin

SOURCE_CONTROLLER = "source-controller"
KUSTOMIZE_CONTROLLER = "kustomize-controller"
FLUX_CONTROLLERS = (SOURCE_CONTROLLER, KUSTOMIZE_CONTROLLER)
COMMON_FLAGS = ("--enable-leader-election=false", "--metrics-addr=0", "--log-encoding=console")
REQUEUE_DEPENDENCY_S = 30.0  # kustomize-controller's own default
ARTIFACTS = "flux-artifacts"  # source-controller's storage, in the twin's folder


def flux_crds(manifests: Path) -> list[dict[str, Any]]:
    """Both controllers' CRDs, as each module's `config/crd` kustomization lists them."""
    return [
        crd
        for controller in FLUX_CONTROLLERS
        for crd in kustomized_crds(manifests / controller / "config" / "crd")
    ]


def flux_controllers(artifacts: Path, requeue_dependency_s: float) -> list[Controller]:
    """source-controller, then kustomize-controller, each on free loopback ports.

    `artifacts`: source-controller's storage folder. `requeue_dependency_s`: how soon a
    Kustomization whose dependencies are not Ready looks again (`--requeue-dependency`,
    whole seconds, at least 1).
    """
    env = {"RUNTIME_NAMESPACE": FLUX_NAMESPACE}
    storage, source_health, kustomize_health = free_port(), free_port(), free_port()
    source = Controller(
        SOURCE_CONTROLLER,
        (
            *COMMON_FLAGS,
            f"--health-addr=127.0.0.1:{source_health}",
            f"--storage-path={artifacts}",
            f"--storage-addr=127.0.0.1:{storage}",
            f"--storage-adv-addr=127.0.0.1:{storage}",
        ),
        f"http://127.0.0.1:{source_health}/readyz",
        env,
    )
    kustomize = Controller(
        KUSTOMIZE_CONTROLLER,
        (
            *COMMON_FLAGS,
            f"--health-addr=127.0.0.1:{kustomize_health}",
            "--no-remote-bases=true",
            f"--requeue-dependency={max(1, round(requeue_dependency_s))}s",
        ),
        f"http://127.0.0.1:{kustomize_health}/readyz",
        env,
    )
    return [source, kustomize]


def start_flux(twin: Twin, requeue_dependency_s: float = REQUEUE_DEPENDENCY_S) -> None:
    """Start Flux's source-controller and kustomize-controller on `twin` (module doc).

    `requeue_dependency_s`: kustomize-controller's `--requeue-dependency` (30 s by default;
    a rehearsal at speed shortens it as it shortens the pods).

    Raises:
        ControlPlaneError: When a CRD is refused or a controller is not healthy (its log's
            end said).

    """
    artifacts = twin.folder / ARTIFACTS
    artifacts.mkdir()
    twin.start_controllers(
        ENGINE.name,
        FLUX_NAMESPACE,
        flux_crds(twin.builds.manifests),
        flux_controllers(artifacts, requeue_dependency_s),
    )
