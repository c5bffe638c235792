"""Trainer mode across the layers: Trainer without NVCRE, no monitoring, collector RBAC."""

from __future__ import annotations

import pytest
from sitefactory import edit, parse, plan_of, site_yaml
from trainerfactory import ROOT, example_text, trainer_text

from nvcregen.compile.gitops.common import LAYERS
from nvcregen.compile.layers import check_layers, site_manifests
from nvcregen.compile.platform.helm import HelmError
from nvcregen.core.manifest import Manifest


def layers(text: str) -> list[Manifest]:
    site, _ = parse(text)
    return site_manifests(plan_of(site), ROOT)


def test_trainer_mode_installs_trainer_but_not_nvcre_and_monitors_nothing() -> None:
    found = layers(example_text())
    components = {m.component for m in found}
    assert components == {"platform", "queues", "readiness", "gitops"}
    platform = [m.name for m in found if m.component == "platform"]
    assert "h20-3e-trainer-kubeflow-trainer" in platform
    assert not [name for name in platform if name.endswith("-nvcre")]
    assert not [m for m in found if m.obj["apiVersion"].startswith("nvcre.nvidia.com/")]
    apps = [
        m.obj["spec"]["source"]["path"]
        for m in found
        if m.kind == "Application" and m.component == "gitops"
    ]
    assert apps == [
        "out/h20-3e-trainer/platform",
        "out/h20-3e-trainer/queues",
        "out/h20-3e-trainer/readiness",
        "out/h20-3e-trainer/gitops",  # the parent, h20-3e-trainer-gitops
    ]
    (role,) = [m.obj for m in found if m.kind == "Role"]
    readable = {(r["apiGroups"][0], r["resources"][0]) for r in role["rules"]}
    assert {("trainer.kubeflow.org", "trainjobs"), ("batch", "jobs")} <= readable
    assert "preview" not in LAYERS


def test_nvcre_mode_is_unchanged_by_the_engine_default() -> None:
    found = layers(site_yaml())
    assert not [m for m in found if m.kind in {"TrainJob", "Job"} and m.component == "readiness"]
    assert {"monitoring", "readiness", "preview"} <= {m.component for m in found}


def test_monitoring_settings_are_not_checked_without_monitoring() -> None:
    """A mismatched Prometheus selector is an error only when a ServiceMonitor is made."""
    text = edit(
        site_yaml(),
        "  images:\n",
        "  dependencies:\n    prometheus: {selector: {a: b}}\n  images:\n",
    )
    codes = {d.code for d in check_layers(*parse(text))}
    assert "NVC330" in codes
    assert "NVC330" not in {d.code for d in check_layers(*parse(trainer_text(text)))}


def test_a_chart_archive_is_not_rendered_in_trainer_mode() -> None:
    """Trainer mode installs no NVCRE, so the site's NVCRE chart archive is never opened."""
    nvcre = "  nvcre:\n    chart: {archive: charts/missing.tgz, sha256: sha256:" + "0" * 64 + "}\n"
    text = edit(trainer_text(site_yaml()), "  images:\n", nvcre + "  images:\n")
    found = layers(text)
    assert not [m for m in found if m.component == "crds"]
    with pytest.raises(HelmError):  # NVCRE mode renders it, and it does not exist
        layers(edit(text, "    engine: trainer\n", ""))
