"""NVC690: two sites on one cluster generate no object twice (issue 12 item 5)."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
from sitefactory import catalog, edit, site_yaml

from nvcregen import gitrev
from nvcregen.chain.pipeline import CompileResult, Options, compile_source
from nvcregen.chain.sites import render
from nvcregen.check.collisions import SiteObjects, check_collisions
from nvcregen.check.crossref import Located
from nvcregen.check.tree import check_tree

GITOPS = "  gitops: {engine: argocd, repoURL: https://git.example.com/r.git}\n"
# A second site meant to share the cluster: its own namespace, trainer mode (no second
# NVCRE), and the Trainer and Kueue the first site installs.
SHARING = """\
trainer: {managed: false}
kueue: {managed: false, localQueue: readiness, clusterQueue: lab-readiness}
"""


def _site(name: str, *, cluster: str = "gpu-prod", sharing: bool = False) -> str:
    text = site_yaml(name=name, dependencies=SHARING if sharing else "") + GITOPS
    text = edit(text, f"  cluster: {name}\n", f"  cluster: {cluster}\n")
    if sharing:
        text = edit(text, "  readiness:\n", "  nvcre: {namespace: team-b}\n  readiness:\n")
        text = edit(text, "  readiness:\n", "  readiness:\n    engine: trainer\n")
    return text


def _compiled(text: str) -> CompileResult:
    result = compile_source(text.encode(), "sites/x.yaml", catalog(), Options(root=Path()))
    assert result.tree is not None, [str(d) for d in result.diagnostics if d.is_error]
    return result


def _objects(result: CompileResult) -> SiteObjects:
    assert result.site and result.cluster
    return SiteObjects(result.site, result.cluster, result.objects)


def _messages(*results: CompileResult) -> list[str]:
    return [f.message for _, _, f in check_collisions(_objects(r) for r in results)]


def test_two_copies_of_a_site_on_one_cluster_collide_on_what_a_cluster_has_once() -> None:
    found = _messages(_compiled(_site("lab")), _compiled(_site("lab-b")))
    shown = {m.split(" is also")[0] for m in found}
    assert shown == {
        "Namespace nvcre",
        "Namespace kubeflow-system",
        "Namespace kueue-system",
        "Helm release kubeflow-trainer (in kubeflow-system)",
        "Helm release kueue (in kueue-system)",
        "Helm release nvcre (in nvcre)",
        # nvcregen's namespaced objects in the shared namespace
        "ServiceAccount nvcre/nvcregen-collector",
        "Role nvcre/nvcregen-collector",
        "RoleBinding nvcre/nvcregen-collector",
        "ServiceAccount nvcre/nvcregen-metrics-scraper",
        "Secret nvcre/nvcregen-metrics-scraper-token",
        "ServiceMonitor nvcre/nvcregen-nvcre-metrics",
        "PrometheusRule nvcre/nvcregen-nvcre",
        "ConfigMap nvcre/nvcregen-dashboard-nvcre",
        "LocalQueue nvcre/readiness",
        # both install Argo CD's health checks
        "ConfigMap argocd/argocd-cm",
    }
    # cluster-scoped names carry the site
    assert not any("ClusterRole " in m or "LogProfile" in m for m in found)


def test_two_flux_sites_on_one_cluster_collide_on_each_helm_release_flux_installs() -> None:
    """Flux's HelmReleases claim their release as Argo CD's Applications do (its chartref)."""
    flux = GITOPS.replace("engine: argocd", "engine: flux")
    texts = [_site(name).replace(GITOPS, flux) for name in ("lab", "lab-b")]
    shown = {m.split(" is also")[0] for m in _messages(*(_compiled(t) for t in texts))}
    assert {
        "Helm release kubeflow-trainer (in kubeflow-system)",
        "Helm release kueue (in kueue-system)",
    } <= shown
    assert "ConfigMap argocd/argocd-cm" not in shown  # Flux installs no Argo CD checks


def test_one_site_of_a_cluster_installs_argo_cds_health_checks() -> None:
    """Two Applications tracking one argocd-cm take it from each other on every sync."""
    lab = _compiled(_site("lab"))
    both = list(
        check_collisions([_objects(lab), _objects(_compiled(_site("team-b", sharing=True)))])
    )
    finding = next(f for _, _, f in both if "argocd-cm" in f.message)
    assert "set gitops.healthChecks: existing" in finding.hint
    existing = edit(
        _site("team-b", sharing=True), GITOPS, GITOPS.replace("}", ", healthChecks: existing}")
    )
    team_b = _compiled(existing)
    assert not [o for o in team_b.objects if o.obj["metadata"]["name"] == "argocd-cm"]
    assert _messages(lab, team_b) == []


def test_a_site_that_shares_by_design_does_not_collide() -> None:
    sharing = _site("team-b", sharing=True)
    sharing = edit(sharing, GITOPS, GITOPS.replace("}", ", healthChecks: existing}"))
    assert _messages(_compiled(_site("lab")), _compiled(sharing)) == []


def test_sites_on_different_clusters_never_collide() -> None:
    assert _messages(_compiled(_site("lab")), _compiled(_site("lab-b", cluster="other"))) == []


def test_cluster_scoped_names_without_the_site_would_collide() -> None:
    """What every site generated before: ClusterRoles and LogProfiles named alike."""
    old = []
    for name in ("a", "b"):
        role = {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {"name": "nvcregen-collector", "labels": {"nvcregen.io/site": name}},
        }
        old.append(SiteObjects(name, "c", (Located(f"{name}/role.yaml", copy.deepcopy(role)),)))
    found = list(check_collisions(old))
    assert [(site, f.code) for site, _, f in found] == [("a", "NVC690"), ("b", "NVC690")]
    assert "bug in nvcregen" in found[0][2].hint


def test_render_refuses_two_sites_that_collide(tmp_path: Path) -> None:
    sites = tmp_path / "sites"
    sites.mkdir()
    (sites / "lab.yaml").write_text(_site("lab"))
    (sites / "lab-b.yaml").write_text(_site("lab-b"))
    outcome = render(tmp_path, [], tmp_path / "out", Options(root=tmp_path), check=False)
    codes = {d.code for d in outcome.diagnostics if d.is_error}
    assert codes == {"NVC690"}
    assert not (tmp_path / "out").exists()
    assert outcome.diagnostics[-1].path == "/spec/cluster"


def _rendered_apart(project: Path) -> tuple[Path, Path]:
    """Sites lab and lab-b on two clusters, rendered into project/out: (site file of lab-b, out)."""
    sites = project / "sites"
    sites.mkdir()
    (sites / "lab.yaml").write_text(_site("lab"))
    (sites / "lab-b.yaml").write_text(_site("lab-b", cluster="other"))
    out = project / "out"
    assert render(project, [], out, Options(root=project), check=False).written
    return sites / "lab-b.yaml", out


def test_check_of_a_tree_finds_sites_that_now_share_a_cluster(tmp_path: Path) -> None:
    lab_b, out = _rendered_apart(tmp_path)
    assert not [d for d in check_tree(out, tmp_path, catalog()) if d.code == "NVC690"]
    lab_b.write_text(_site("lab-b"))  # moved onto lab's cluster
    found = [d for d in check_tree(out, tmp_path, catalog()) if d.code == "NVC690"]
    assert found and {d.span.file.split("/")[1] for d in found} == {"lab", "lab-b"}


def test_render_check_compiles_a_fresh_site_an_edited_one_now_shares_a_cluster_with(
    tmp_path: Path,
) -> None:
    """The cached `render --check` would compile only the edited site, and miss NVC690."""
    lab_b, out = _rendered_apart(tmp_path)
    assert render(tmp_path, [], out, Options(root=tmp_path), check=True).cached == ["lab", "lab-b"]
    lab_b.write_text(_site("lab-b", cluster="elsewhere"))  # stale, no sharing
    alone = render(tmp_path, [], out, Options(root=tmp_path), check=True)
    assert alone.cached == ["lab"] and alone.drift
    lab_b.write_text(_site("lab-b"))  # stale, on lab's (fresh) cluster
    outcome = render(tmp_path, [], out, Options(root=tmp_path), check=True)
    assert outcome.cached == []
    assert {d.code for d in outcome.diagnostics if d.is_error} == {"NVC690"}


def test_render_check_compares_fresh_sites_that_share_a_cluster(tmp_path: Path) -> None:
    """Each site rendered alone is fresh; a cached check must still compare them."""
    sites = tmp_path / "sites"
    sites.mkdir()
    (sites / "lab.yaml").write_text(_site("lab"))
    out = tmp_path / "out"
    assert render(tmp_path, [], out, Options(root=tmp_path), check=False).written
    (sites / "lab-b.yaml").write_text(_site("lab-b"))  # same cluster as lab
    alone = render(tmp_path, [sites / "lab-b.yaml"], out, Options(root=tmp_path), check=False)
    assert {d.code for d in alone.diagnostics if d.is_error} == {"NVC690"}  # lab is compared
    assert not alone.written and not (out / "lab-b").exists()
    assert [r.site for r in alone.results] == ["lab-b"]  # lab compiled, not reported
    outcome = render(tmp_path, [], out, Options(root=tmp_path), check=True)
    assert outcome.cached == []
    assert {d.code for d in outcome.diagnostics if d.is_error} == {"NVC690"}


def test_git_runs_once_per_project_not_once_per_site(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where the project is in its repository is asked once by render, and once by check."""
    calls: list[Path] = []
    real = gitrev.project_prefix

    def counted(project: Path) -> str:
        calls.append(project)
        return real(project)

    monkeypatch.setattr(gitrev, "project_prefix", counted)
    _, out = _rendered_apart(tmp_path)
    assert len(calls) == 1  # two sites, one project
    check_tree(out, tmp_path, catalog())
    assert len(calls) == 2


def test_a_site_that_no_longer_plans_still_names_its_cluster(tmp_path: Path) -> None:
    """Without a Plan (a test the catalog lacks), `check` still reads the site's cluster."""
    lab_b, out = _rendered_apart(tmp_path)
    unplanned = edit(_site("lab-b"), "tests: [dcgm-l1, nccl-all-reduce]", "tests: [dcgm-l0]")
    lab_b.write_text(unplanned)  # moved onto lab's cluster, and no longer valid
    found = check_tree(out, tmp_path, catalog())
    shared = [d for d in found if d.code == "NVC690"]
    assert shared and {d.span.file.split("/")[1] for d in shared} == {"lab", "lab-b"}
    assert not [d for d in found if d.code == "NVC631" or d.code.startswith("NVC67")]
