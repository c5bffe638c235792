"""The replay asks each GitOps engine's own model (issue 35 item 3): the engines' units,
tried in registry order, and the steps of a tree that holds none."""

from __future__ import annotations

import pytest

from nvcregen.engineapi import registry
from nvcregen.engineapi.registry import GITOPS
from nvcregen.replay import gitopsmodel
from nvcregen.replay.gating import Gating
from nvcregen.replay.model import Run, TreeObject

ROOT = "sites/lab"
KUSTOMIZATION = TreeObject(
    "gitops/k.yaml",
    "gitops/k.yaml",
    {
        "apiVersion": "kustomize.toolkit.fluxcd.io/v1",
        "kind": "Kustomization",
        "metadata": {"name": "readiness", "namespace": "flux-system"},
        "spec": {"path": f"./{ROOT}/readiness"},
    },
)
APPLICATION = TreeObject(
    "gitops/a.yaml",
    "gitops/a.yaml",
    {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Application",
        "metadata": {"name": "readiness", "namespace": "argocd"},
        "spec": {"source": {"path": f"{ROOT}/readiness"}},
    },
)
RUN = TreeObject(
    "readiness/01-a/job.yaml",
    "readiness/01-a/job.yaml",
    {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j", "namespace": "n"}},
)


def test_every_registered_gitops_engine_has_a_replay_model_in_its_own_package() -> None:
    found = gitopsmodel.models()
    assert [engine.name for engine, _ in found] == list(GITOPS)
    for engine, model in found:
        assert type(model).__module__ == f"nvcregen.engines.gitops.{engine.name}.replay"


def test_a_tree_holding_both_engines_units_is_read_as_the_first_registered() -> None:
    found = gitopsmodel.read_units([APPLICATION, KUSTOMIZATION, RUN], ROOT)
    assert found is not None
    engine, _, held = found
    assert engine.kustomizations and held == [(KUSTOMIZATION, "readiness", True)]
    found = gitopsmodel.read_units([APPLICATION, RUN], ROOT)
    assert found is not None and not found[0].kustomizations
    assert found[2] == [(APPLICATION, "readiness", False)]
    assert gitopsmodel.read_units([RUN], ROOT) is None


def test_only_flux_steps_hold_a_worker() -> None:
    steps = {engine.name: model.worker_steps for engine, model in gitopsmodel.models()}
    assert steps == {"flux": "Kustomization ", "argocd": None}


def test_a_tree_without_units_is_gated_by_the_first_engine_that_applies_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    runs = [Run(RUN, "01-a", "t", None, ())]
    gating = gitopsmodel.bare_gating([RUN], runs)
    assert [s.label for s in gating.steps.values()] == ["sync wave 0"]  # Argo CD's waves
    flux = [(e, m) for e, m in gitopsmodel.models() if e.kustomizations]
    monkeypatch.setattr(gitopsmodel, "models", lambda: tuple(flux))
    assert gitopsmodel.bare_gating([RUN], runs) == Gating({}, {})  # none applies one: no step


def test_an_engine_without_a_replay_model_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry, "part_of", lambda *_: None)
    with pytest.raises(LookupError, match="GitOps engine flux has no replay model"):
        gitopsmodel.model_of(GITOPS["flux"])
