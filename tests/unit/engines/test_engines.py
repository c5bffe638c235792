"""What each engine says of itself: a unit's status, how it pulls a chart, its Git URLs."""

from __future__ import annotations

import pytest

from nvcregen.catalog.engines import engine_facts
from nvcregen.engineapi.registry import (
    DEFAULT_GITOPS,
    DEFAULT_READINESS,
    gitops_engine,
    readiness_engine,
)
from nvcregen.spec.v1alpha1 import GitOps, Readiness

ARGOCD = gitops_engine("argocd")
FLUX = gitops_engine("flux")


def test_argo_cd_writes_a_status_entry_per_resource_flux_its_inventory() -> None:
    facts = engine_facts()
    assert ARGOCD.status_bytes(3, 999, facts) == 3 * facts.argocd_status_per_resource
    assert ARGOCD.status_bytes(0, 999, facts) == 0
    assert FLUX.status_bytes(3, 999, facts) == 999


def test_argo_cd_says_how_it_pulls_a_chart_by_digest_or_by_version() -> None:
    by_digest = ARGOCD.pull_notes("ghcr.io/nvidia", "sha256:" + "a" * 64)
    assert by_digest == ("Argo CD pulls it by digest as an OCI source (Argo CD 3.1 or later)",)
    by_version = ARGOCD.pull_notes("ghcr.io/nvidia", None)
    assert by_version == (
        "Argo CD resolves ghcr.io/nvidia as a Helm OCI repository and pulls by version;"
        " register it (enableOCI) if your Argo CD requires that",
    )
    assert ARGOCD.pull_notes("ghcr.io/nvidia", "") == by_version  # an empty digest pins nothing
    assert FLUX.pull_notes("ghcr.io/nvidia", None) == ()


def test_flux_takes_http_https_and_ssh_urls_argo_cd_any() -> None:
    assert FLUX.repo_url is not None
    for url in ("http://git/x", "https://git/x", "ssh://git@git/x"):
        assert FLUX.repo_url.match(url), url
    for url in ("git@github.com:o/r.git", "file:///repo", "HTTPS://git/x", " https://git/x"):
        assert not FLUX.repo_url.match(url), url
    assert ARGOCD.repo_url is None


def test_the_defaults_are_the_site_languages() -> None:
    assert GitOps.model_fields["engine"].default == DEFAULT_GITOPS
    assert Readiness.model_fields["engine"].default == DEFAULT_READINESS


def test_an_unknown_name_is_refused_naming_the_known_ones() -> None:
    with pytest.raises(
        ValueError, match=r"GitOps engine 'fleet' is not one of \['argocd', 'flux'\]"
    ):
        gitops_engine("fleet")
    with pytest.raises(ValueError, match=r"'kubeflow' is not one of \['nvcre', 'trainer'\]"):
        readiness_engine("kubeflow")
    assert gitops_engine("flux") is FLUX


def test_each_readiness_engine_names_the_object_that_runs_a_test() -> None:
    nvcre, trainer = readiness_engine("nvcre"), readiness_engine("trainer")
    for gang in (False, True):  # NVCRE's own objects, whatever the pods
        assert nvcre.run_object("category", gang) == ("nvcre.nvidia.com", "Certification")
        assert nvcre.run_object("workloadrun", gang) == ("nvcre.nvidia.com", "WorkloadRun")
    for mode in ("category", "workloadrun"):  # trainer mode's by how its pods start
        assert trainer.run_object(mode, True) == ("trainer.kubeflow.org", "TrainJob")
        assert trainer.run_object(mode, False) == ("batch", "Job")
