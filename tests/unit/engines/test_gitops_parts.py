"""Each GitOps engine writes its own objects and plays its own rehearsal (issue 35 item 3):
the compiler asks through `compile.gitops.engineparts.GitOpsObjects`, the rehearsal
through `rehearse.gitopsplay.GitOpsPlayer`, both found in the engine's package."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from pluginparts import only_plugin
from sitefactory import edit, parse, site_yaml

from nvcregen.check.engineparts import PART, is_tree_checks
from nvcregen.compile.gitops.engineparts import GitOpsObjects, objects_of
from nvcregen.compile.platform.helmref import chart_reference, chart_references
from nvcregen.engineapi import registry
from nvcregen.engineapi.registry import GITOPS, gitops_engine
from nvcregen.rehearse.gitopsplay import GitOpsPlayer, player_of, read_order
from nvcregen.rehearse.report import engine_note
from nvcregen.replay.model import TreeObject

REPO = "https://git.example.com/gpu/readiness.git"
ENGINE_SOURCE = """
from nvcregen.engineapi.protocol import GitOpsEngine


class Plain(GitOpsEngine):
    name = "plain"
    title = "Plain"
    unit_kind = "Plain"
    unit_path = "/spec/path"
    kustomizations = final_gate = suspended_job_current = False
    repo_url = None

    def status_bytes(self, objects, inventory_bytes, facts):
        return 0


ENGINE = Plain()
"""


@pytest.fixture
def plain_engine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A GitOps engine whose package holds nothing but its traits."""
    yield from only_plugin(
        tmp_path,
        monkeypatch,
        "fakegitops.plain.engine",
        ENGINE_SOURCE,
        (registry, "GITOPS_MODULES"),
        registry.GITOPS,
    )


def test_every_registered_gitops_engine_writes_its_objects_from_its_own_package() -> None:
    for engine in GITOPS.values():
        found = objects_of(engine)
        assert isinstance(found, GitOpsObjects)
        assert type(found).__module__ == f"{registry.package_of(engine)}.objects"


def test_every_registered_gitops_engine_plays_its_rehearsal_from_its_own_package() -> None:
    for engine in GITOPS.values():
        found = player_of(engine)
        assert isinstance(found, GitOpsPlayer)
        assert type(found).__module__ == f"{registry.package_of(engine)}.rehearse"


def test_an_engine_whose_package_holds_no_objects_nor_player_is_named(plain_engine: None) -> None:
    with pytest.raises(LookupError, match="GitOps engine plain writes no GitOps objects"):
        objects_of(GITOPS["plain"])
    with pytest.raises(LookupError, match="GitOps engine plain has no rehearsal player"):
        player_of(GITOPS["plain"])


def _job(path: str, wave: str) -> TreeObject:
    meta = {
        "name": path,
        "namespace": "nvcre",
        "annotations": {"argocd.argoproj.io/sync-wave": wave},
    }
    return TreeObject(path, path, {"apiVersion": "batch/v1", "kind": "Job", "metadata": meta})


def test_a_tree_without_gitops_objects_is_applied_as_the_first_engine_that_takes_one_would() -> (
    None
):
    """Flux applies nothing but through a Kustomization; Argo CD's way is wave by wave."""
    tree = [_job("readiness/b.yaml", "2"), _job("readiness/a.yaml", "1")]
    flux, argocd = gitops_engine("flux"), gitops_engine("argocd")
    assert player_of(flux).bare(tree, False) is None
    order = read_order(tree, "")
    assert order.gitops is None and order.judge is player_of(argocd)
    assert [s.label for s in order.steps] == ["sync wave 1", "sync wave 2"]


def test_with_no_engine_taking_a_bare_tree_it_is_applied_wave_by_wave_unjudged(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(registry, "GITOPS_MODULES", ("nvcregen.engines.gitops.flux.engine",))
    registry.GITOPS.reset()
    try:
        order = read_order([_job("readiness/a.yaml", "1")], "")
    finally:
        monkeypatch.undo()
        registry.GITOPS.reset()
    assert order.gitops is None and order.judge is None and order.health == {}
    assert [s.label for s in order.steps] == ["sync wave 1"]


def _site(engine: str, health_checks: str | None = None) -> str:
    text = site_yaml() + f"  gitops:\n    engine: {engine}\n    repoURL: {REPO}\n"
    if health_checks is not None:
        text = edit(text, "    engine:", f"    healthChecks: {health_checks}\n    engine:")
    return text


@pytest.mark.parametrize(
    ("engine", "health_checks", "expected"),
    [
        ("argocd", None, ["argocd-cm"]),  # the default is `install`
        ("argocd", "install", ["argocd-cm"]),
        ("argocd", "existing", []),  # the cluster's argocd-cm holds them already
        ("flux", None, []),  # each step's Kustomization carries its own checks
    ],
)
def test_the_platform_layer_carries_argo_cds_health_checks_unless_the_cluster_has_them(
    engine: str, health_checks: str | None, expected: list[str]
) -> None:
    site, _ = parse(_site(engine, health_checks))
    found = objects_of(gitops_engine(engine)).platform(site)
    assert [m.name for m in found] == expected
    assert all(m.component == "platform" and not m.owned for m in found)


def test_argo_cds_chain_leaves_the_gitops_layer_as_it_is() -> None:
    """Argo CD orders its steps by the runs' sync waves: nothing is added to its layer."""
    site, _ = parse(_site("argocd"))
    objects = objects_of(gitops_engine("argocd"))
    layer = objects.layer(site, ["platform", "readiness"], [], {})
    assert objects.chain(site, layer, ()) == layer
    assert objects.chain(site, layer, ()) is not layer  # a copy, never the caller's list
    assert objects.problems(site, parse(_site("argocd"))[1], "git@host:repo.git") == []


def test_argo_cds_project_checks_are_the_one_engines_tree_checks() -> None:
    """NVC680 is Argo CD's (its AppProjects); Flux's objects carry no rules of their own."""
    found = {
        engine.name: registry.part_of(engine, PART, "CHECKS", is_tree_checks)
        for engine in GITOPS.values()
    }
    assert found["flux"] is None
    assert type(found["argocd"]).__module__ == "nvcregen.engines.gitops.argocd.check"


def test_the_report_says_what_played_each_engine_in_the_engines_own_words() -> None:
    assert engine_note("waves").startswith("no GitOps objects: the tree was applied wave by")
    assert engine_note("argocd", True).startswith("Argo CD itself was not run")
    assert engine_note("argocd", False) == engine_note("argocd", True)
    assert engine_note("flux", True).startswith("Flux's source-controller and kustomize-controller")
    assert engine_note("flux", False).startswith("Flux's kustomize-controller was not run")


def test_each_engine_reads_the_release_only_its_own_chart_objects_install() -> None:
    """What the rehearsal starts Kueue from: the release's values, read as untrusted."""
    argocd = chart_reference(gitops_engine("argocd"))
    flux = chart_reference(gitops_engine("flux"))
    assert chart_references() == (flux, argocd)  # registry order
    app = {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Application",
        "spec": {"source": {"helm": {"releaseName": "kueue", "valuesObject": {"a": 1}}}},
    }
    release = {
        "apiVersion": "helm.toolkit.fluxcd.io/v2",
        "kind": "HelmRelease",
        "spec": {"releaseName": "kueue", "values": {"b": 2}},
    }
    assert argocd.release_values(app) == ("kueue", {"a": 1})
    assert flux.release_values(release) == ("kueue", {"b": 2})
    assert argocd.release_values(release) is None and flux.release_values(app) is None
    assert argocd.release_values({**app, "apiVersion": "example.com/v1"}) is None
    assert argocd.release_values({**app, "spec": ["not", "a", "mapping"]}) == ("None", None)
    assert flux.release_values({**release, "spec": "text"}) == ("None", None)
