"""The compiler asks the site's GitOps engine for the objects installing a chart by
reference (issue 35 item 3): each engine's package writes its own."""

from __future__ import annotations

import pytest

from nvcregen.compile.platform import helmref
from nvcregen.compile.platform.helmref import ChartRelease, chart_reference, reference_objects
from nvcregen.engineapi import registry
from nvcregen.engineapi.registry import GITOPS

RELEASE = ChartRelease("kueue", "oci://registry.k8s.io/kueue/charts/kueue", "0.19.2", None, "k")


def test_each_gitops_engine_writes_its_chart_references_in_its_own_package() -> None:
    for name, engine in GITOPS.items():
        found = chart_reference(engine)
        assert type(found).__module__ == f"nvcregen.engines.gitops.{name}.chartref"
    flux = reference_objects(RELEASE, GITOPS["flux"], app_name="lab-kueue", project="lab")
    assert [o["kind"] for o in flux] == ["OCIRepository", "HelmRelease"]
    assert {o["metadata"]["name"] for o in flux} == {"kueue"}  # named after the release
    argo = reference_objects(RELEASE, GITOPS["argocd"], app_name="lab-kueue", project="lab")
    assert [(o["kind"], o["metadata"]["name"], o["spec"]["project"]) for o in argo] == [
        ("Application", "lab-kueue", "lab")
    ]


def test_an_engine_without_chart_references_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry, "part_of", lambda *_: None)
    with pytest.raises(LookupError, match="GitOps engine flux writes no chart reference"):
        chart_reference(GITOPS["flux"])
    assert not helmref.is_chart_reference(object())
