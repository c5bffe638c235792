"""Flux's controllers as its package starts them on the twin (engines/gitops/flux/controllers.py).

Their flags and CRDs, and the start on a fake control plane with stand-in binaries
(tests/faketwin.py); the real source-controller and kustomize-controller run in
tests/realserver/test_twin_flux.py and a Flux site's rehearsal.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from faketwin import CRDS, crd, fake_controller, fake_twin, recorded

from nvcregen.engines.gitops.flux.controllers import (
    FLUX_CONTROLLERS,
    flux_controllers,
    flux_crds,
    start_flux,
)
from nvcregen.engines.gitops.flux.engine import ENGINE


def write_crds(manifests: Path, controller: str, crds: list[dict[str, Any]]) -> None:
    """`manifests/<controller>/config/crd`: a kustomization listing one file per CRD."""
    folder = manifests / controller / "config" / "crd"
    folder.mkdir(parents=True)
    names = []
    for item in crds:
        names.append(f"bases/{item['metadata']['name']}.yaml")
        (folder / names[-1]).parent.mkdir(exist_ok=True)
        (folder / names[-1]).write_text(yaml.safe_dump(item), "utf-8")
    (folder / "kustomization.yaml").write_text(yaml.safe_dump({"resources": names}), "utf-8")


SOURCE_CRDS = [
    crd("source.toolkit.fluxcd.io", "ocirepositories", "OCIRepository"),
    crd("source.toolkit.fluxcd.io", "gitrepositories", "GitRepository"),
]
KUSTOMIZE_CRDS = [crd("kustomize.toolkit.fluxcd.io", "kustomizations", "Kustomization")]


def flags(args: tuple[str, ...] | list[str]) -> dict[str, str]:
    """`--name=value` flags by name."""
    found = {}
    for arg in args:
        name, _, value = arg.removeprefix("--").partition("=")
        found[name] = value
    return found


def test_source_then_kustomize_controller_in_flux_system_on_loopback(tmp_path: Path) -> None:
    source, kustomize = flux_controllers(tmp_path / "artifacts", 30.0)
    assert (source.name, kustomize.name) == FLUX_CONTROLLERS
    assert FLUX_CONTROLLERS == ("source-controller", "kustomize-controller")
    common = {"enable-leader-election": "false", "metrics-addr": "0", "log-encoding": "console"}
    for started in (source, kustomize):
        assert started.env == {"RUNTIME_NAMESPACE": "flux-system"}
        assert flags(started.args).items() >= common.items()
        health = flags(started.args)["health-addr"]
        assert health.startswith("127.0.0.1:")
        assert started.health == f"http://{health}/readyz"
    served = flags(source.args)
    assert served["storage-path"] == str(tmp_path / "artifacts")
    assert served["storage-addr"] == served["storage-adv-addr"]
    assert served["storage-addr"].startswith("127.0.0.1:")
    assert flags(kustomize.args)["no-remote-bases"] == "true"
    ports = {served["storage-addr"], served["health-addr"], flags(kustomize.args)["health-addr"]}
    assert len(ports) == 3


@pytest.mark.parametrize(
    ("seconds", "flag"), [(30.0, "30s"), (2.5, "2s"), (2.6, "3s"), (1.4, "1s"), (0.4, "1s")]
)
def test_the_dependency_requeue_is_whole_seconds_and_at_least_one(
    seconds: float, flag: str
) -> None:
    _, kustomize = flux_controllers(Path("/nonexistent"), seconds)
    assert flags(kustomize.args)["requeue-dependency"] == flag


def test_the_crds_are_both_controllers_own_source_first(tmp_path: Path) -> None:
    write_crds(tmp_path, "source-controller", SOURCE_CRDS)
    write_crds(tmp_path, "kustomize-controller", KUSTOMIZE_CRDS)
    names = [c["metadata"]["name"] for c in flux_crds(tmp_path)]
    assert names == [
        "gitrepositories.source.toolkit.fluxcd.io",  # by name within a controller's
        "ocirepositories.source.toolkit.fluxcd.io",
        "kustomizations.kustomize.toolkit.fluxcd.io",
    ]


@pytest.mark.slow  # spawns the stand-in controllers
def test_start_flux_starts_both_after_their_crds_under_the_engines_name(tmp_path: Path) -> None:
    twin, plane = fake_twin(tmp_path)
    try:
        write_crds(twin.builds.manifests, "source-controller", SOURCE_CRDS)
        write_crds(twin.builds.manifests, "kustomize-controller", KUSTOMIZE_CRDS)
        for name in FLUX_CONTROLLERS:
            fake_controller(twin, name)
        start_flux(twin, requeue_dependency_s=0.4)

        assert [r.body for r in plane.posted(CRDS)] == flux_crds(twin.builds.manifests)
        (namespace,) = plane.posted("/api/v1/namespaces")
        assert namespace.body["metadata"]["name"] == "flux-system"
        assert list(twin.processes) == list(FLUX_CONTROLLERS)
        assert (twin.folder / "flux-artifacts").is_dir()
        source, kustomize = (recorded(twin, name) or {} for name in FLUX_CONTROLLERS)
        assert flags(source["args"])["storage-path"] == str(twin.folder / "flux-artifacts")
        assert flags(kustomize["args"])["requeue-dependency"] == "1s"
        for record in (source, kustomize):
            assert record["env"]["RUNTIME_NAMESPACE"] == "flux-system"
            assert record["env"]["KUBECONFIG"] == str(plane.kubeconfig)
        assert ENGINE.name == "flux" and "flux" in twin.timings
    finally:
        twin.stop()
