"""Tests of nvcregen.compile.gitops.layer: Argo CD and Flux objects for a site's output layers."""

from __future__ import annotations

import itertools
import re
from typing import Any

import pytest
from sitefactory import edit, load, parse, site, site_yaml, units_of

from nvcregen.check.objectcheck import object_findings
from nvcregen.compile.gitops.common import LAYERS, layer_path
from nvcregen.compile.gitops.layer import check_gitops, gitops_manifests
from nvcregen.compile.postprocess import PRUNE_PROTECTION, postprocess
from nvcregen.core.errors import Severity
from nvcregen.core.manifest import Manifest
from nvcregen.emit.canonical import dump_yaml
from nvcregen.emit.naming import manifest_path
from nvcregen.engines.gitops.argocd.layer import KUEUE_WEBHOOK_START_S, RETRY_LIMIT, retry_span_s
from nvcregen.engines.gitops.flux.layer import flux_ref
from nvcregen.engines.readiness.nvcre.layer import nccl_log_profile, readiness_manifests
from nvcregen.kubeschema.registry import default_registry
from nvcregen.spec.v1alpha1 import Site
from nvcregen.validate.schema import validate_schema

REPO = "https://git.example.com/gpu/readiness.git"
WAVE = "argocd.argoproj.io/sync-wave"
FLUX_DURATION = re.compile(r"^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$")
# The one-shot layers, applied in a chain; the periodic layer has tests of its own
# (tests/unit/compile/test_periodic.py).
ONE_SHOT = tuple(layer for layer in LAYERS if layer != "periodic")
ALL = list(ONE_SHOT)


def gitops_text(
    engine: str = "argocd",
    repo: str | None = REPO,
    *,
    trigger: str = "manual",
    extra: str = "",
) -> str:
    """The default test site with a gitops section and a readiness trigger."""
    text = edit(site_yaml(), "  readiness:\n", f"  readiness:\n    trigger: {trigger}\n")
    text += f"  gitops:\n    engine: {engine}\n"
    if repo is not None:
        text += f"    repoURL: {repo}\n"
    return text + extra


def build(
    engine: str = "argocd", *, trigger: str = "manual", components: list[str] | None = None
) -> dict[str, dict[str, Any]]:
    """The GitOps objects of a site by name, postprocessed as the pipeline does."""
    parsed = site(gitops_text(engine, trigger=trigger))
    found = gitops_manifests(parsed, ALL if components is None else components)
    return {
        m.name if m.kind != "ArtifactGenerator" else f"{m.name}/artifact": m.obj
        for m in postprocess(found, parsed, "sites/lab.yaml")
    }


def apps(objects: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {n: o for n, o in objects.items() if o["kind"] in {"Application", "Kustomization"}}


# --- Argo CD -----------------------------------------------------------------------------


def test_argocd_has_a_project_and_one_application_per_layer_in_argocd() -> None:
    objects = build()
    assert objects["lab"]["kind"] == "AppProject"
    assert sorted(apps(objects)) == [
        "lab-crds",
        "lab-gitops",
        "lab-monitoring",
        "lab-platform",
        "lab-queues",
        "lab-readiness",
    ]
    for obj in objects.values():
        assert obj["apiVersion"] == "argoproj.io/v1alpha1"
        assert obj["metadata"]["namespace"] == "argocd"


def test_argocd_parent_applies_the_layers_in_waves_and_not_itself() -> None:
    # Before issue 19 nothing ordered the layer Applications: waves only order the children
    # of a parent, and a parent waits for a child's health only with a check for it.
    parent = build()["lab-gitops"]
    spec = parent["spec"]
    assert spec["project"] == "lab"
    assert spec["source"] == {
        "repoURL": REPO,
        "targetRevision": "main",
        "path": "out/lab/gitops",
        "directory": {"exclude": "application-lab-gitops.yaml"},
    }
    assert spec["destination"]["namespace"] == "argocd"
    assert spec["syncPolicy"]["automated"] == {"prune": False, "selfHeal": True}
    assert WAVE not in parent["metadata"].get("annotations", {})
    parsed = site(gitops_text())
    (emitted,) = [m for m in gitops_manifests(parsed, ALL) if m.name == "lab-gitops"]
    assert manifest_path(emitted) == f"gitops/{spec['source']['directory']['exclude']}"
    project = build()["lab"]["spec"]
    assert {"server": "https://kubernetes.default.svc", "namespace": "argocd"} in (
        project["destinations"]
    )


@pytest.mark.parametrize("limit", [RETRY_LIMIT])
def test_argocd_retries_outlast_kueues_webhook_start(limit: int) -> None:
    # Five retries (10 s doubling, at most 3 m) gave up after 5m10s, before a Kueue whose
    # image is still being pulled serves its webhook; the retries now span at least 10 m.
    assert retry_span_s(5) == 310
    assert retry_span_s(limit) >= KUEUE_WEBHOOK_START_S > retry_span_s(limit - 1)
    for name, app in apps(build()).items():
        retry = app["spec"]["syncPolicy"]["retry"]
        assert retry["limit"] == limit, name
        assert retry["backoff"] == {"duration": "10s", "factor": 2, "maxDuration": "3m"}


def test_argocd_sync_waves_are_strings_in_layer_order_after_the_project() -> None:
    objects = build()
    waves = [objects[f"lab-{layer}"]["metadata"]["annotations"][WAVE] for layer in ONE_SHOT]
    assert all(isinstance(w, str) for w in waves)
    numbers = [int(w) for w in waves]
    assert numbers == sorted(numbers) and len(set(numbers)) == len(numbers)
    assert int(objects["lab"]["metadata"]["annotations"][WAVE]) < numbers[0]
    text = dump_yaml(objects["lab-crds"])  # written quoted, never as a YAML integer
    assert re.search(r"""argocd\.argoproj\.io/sync-wave: ["']-2["']""", text)


def test_argocd_application_source_and_destination() -> None:
    spec = build()["lab-platform"]["spec"]
    assert spec["project"] == "lab"
    assert spec["source"] == {
        "repoURL": REPO,
        "targetRevision": "main",
        "path": "out/lab/platform",
        "directory": {"recurse": True},
    }
    assert spec["destination"] == {"server": "https://kubernetes.default.svc", "namespace": "nvcre"}


def test_crd_layer_is_applied_server_side_never_replaced_and_never_pruned() -> None:
    policy = build()["lab-crds"]["spec"]["syncPolicy"]
    assert "ServerSideApply=true" in policy["syncOptions"]
    assert "Replace=false" in policy["syncOptions"]
    assert "SkipDryRunOnMissingResource=true" not in policy["syncOptions"]
    assert policy["automated"] == {"prune": False, "selfHeal": True}


@pytest.mark.parametrize("layer", ["platform", "monitoring", "readiness"])
def test_layers_using_crds_from_elsewhere_skip_the_dry_run(layer: str) -> None:
    options = build()[f"lab-{layer}"]["spec"]["syncPolicy"]["syncOptions"]
    assert "SkipDryRunOnMissingResource=true" in options


@pytest.mark.parametrize("layer", ["platform", "queues", "monitoring"])
def test_only_the_runs_are_applied_server_side_among_the_layers_after_crds(layer: str) -> None:
    options = build()[f"lab-{layer}"]["spec"]["syncPolicy"]["syncOptions"]
    assert "ServerSideApply=true" not in options
    readiness = build()["lab-readiness"]["spec"]["syncPolicy"]["syncOptions"]
    assert readiness == ["ServerSideApply=true", "SkipDryRunOnMissingResource=true"]


@pytest.mark.parametrize("layer", ["platform", "monitoring"])
def test_platform_and_monitoring_sync_automatically_with_prune_and_self_heal(layer: str) -> None:
    policy = build()[f"lab-{layer}"]["spec"]["syncPolicy"]
    assert policy["automated"] == {"prune": True, "selfHeal": True}
    assert policy["retry"]["limit"] > 0


def test_manual_readiness_has_no_automated_sync() -> None:
    app = build(trigger="manual")["lab-readiness"]
    assert "automated" not in app["spec"]["syncPolicy"]
    assert "argocd app sync lab-readiness" in app["spec"]["info"][0]["value"]


def test_on_sync_readiness_syncs_automatically() -> None:
    spec = build(trigger="on-sync")["lab-readiness"]["spec"]
    assert spec["syncPolicy"]["automated"] == {"prune": True, "selfHeal": True}
    assert "info" not in spec


def test_project_restricts_sources_destinations_and_cluster_kinds() -> None:
    spec = build()["lab"]["spec"]
    assert spec["sourceRepos"] == [REPO]
    assert spec["destinations"] == [
        {"server": "https://kubernetes.default.svc", "namespace": "argocd"},  # lab-gitops
        {"server": "https://kubernetes.default.svc", "namespace": "nvcre"},
    ]
    kinds = {(k["group"], k["kind"]) for k in spec["clusterResourceWhitelist"]}
    assert ("apiextensions.k8s.io", "CustomResourceDefinition") in kinds
    assert ("nvcre.nvidia.com", "LogProfile") in kinds
    assert "*" not in {k["group"] for k in spec["clusterResourceWhitelist"]}
    assert "namespaceResourceBlacklist" not in spec


def test_project_derives_namespaces_and_cluster_kinds_from_the_layers() -> None:
    parsed = site(gitops_text())
    layers = [*readiness_manifests(parsed, units_of(gitops_text())), nccl_log_profile(parsed)]
    layers.append(_object("v1", "Namespace", "nvcre", None, "platform"))
    layers.append(_object("v1", "ServiceAccount", "collector", "nvcre-system", "platform"))
    layers.append(_object("monitoring.coreos.com/v1", "ServiceMonitor", "m", "obs", "monitoring"))
    project = gitops_manifests(parsed, ["platform", "monitoring", "readiness"], layers)[0]
    spec = project.obj["spec"]
    assert [d["namespace"] for d in spec["destinations"]] == [
        "argocd",
        "nvcre",
        "nvcre-system",
        "obs",
    ]
    assert spec["clusterResourceWhitelist"] == [
        {"group": "", "kind": "Namespace"},
        {"group": "nvcre.nvidia.com", "kind": "LogProfile"},
    ]


def test_project_allows_the_repositories_of_child_applications_in_it() -> None:
    child = _object("argoproj.io/v1alpha1", "Application", "nvcre", "argocd", "platform")
    child.obj["spec"] = {
        "project": "lab",
        "source": {"repoURL": "ghcr.io/nvidia", "chart": "cluster-readiness-engine"},
        "destination": {"server": "https://kubernetes.default.svc", "namespace": "nvcre-system"},
    }
    project = gitops_manifests(site(gitops_text()), ["platform"], [child])[0].obj["spec"]
    assert project["sourceRepos"] == sorted([REPO, "ghcr.io/nvidia"])
    assert {d["namespace"] for d in project["destinations"]} == {"argocd", "nvcre", "nvcre-system"}


def _object(api: str, kind: str, name: str, namespace: str | None, component: str) -> Manifest:
    meta: dict[str, Any] = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    return Manifest({"apiVersion": api, "kind": kind, "metadata": meta}, component, "/spec")


# --- Flux --------------------------------------------------------------------------------


def test_flux_has_a_git_repository_and_one_kustomization_per_layer() -> None:
    objects = build("flux")
    repo = objects["lab"]
    assert (repo["apiVersion"], repo["kind"]) == ("source.toolkit.fluxcd.io/v1", "GitRepository")
    assert repo["metadata"]["namespace"] == "flux-system"
    assert repo["spec"]["url"] == REPO
    assert repo["spec"]["ref"] == {"branch": "main"}
    kustomizations = apps(objects)
    assert sorted(kustomizations) == [f"lab-{layer}" for layer in sorted(ONE_SHOT)]
    for layer in ONE_SHOT:
        spec = kustomizations[f"lab-{layer}"]["spec"]
        assert spec["path"] == f"./{layer}"  # in the artifact holding out/lab/ only
        assert spec["sourceRef"] == {"kind": "ExternalArtifact", "name": "lab"}
        assert "targetNamespace" not in spec
        assert spec["prune"] is (layer != "crds")


def test_flux_reads_a_source_only_this_sites_files_revise() -> None:
    # Before issue 19 every Kustomization read the GitRepository, whose revision is the
    # commit: any commit, even to another site's folder, stopped a running plan.
    objects = build("flux")
    generator = objects["lab/artifact"]
    assert (generator["apiVersion"], generator["kind"]) == (
        "source.extensions.fluxcd.io/v1beta1",
        "ArtifactGenerator",
    )
    assert generator["metadata"]["namespace"] == "flux-system"
    assert generator["spec"]["sources"] == [
        {"alias": "repo", "kind": "GitRepository", "name": "lab"}
    ]
    (artifact,) = generator["spec"]["artifacts"]
    assert artifact["name"] == "lab"
    assert "revision" not in artifact  # the revision is then the digest of the files
    assert artifact["copy"] == [
        {"from": "@repo/out/lab/**", "to": "@artifact/", "exclude": ["index.json", "images.txt"]}
    ]
    for spec in (o["spec"] for o in apps(objects).values()):
        assert spec["sourceRef"] == {"kind": "ExternalArtifact", "name": "lab"}


def test_flux_artifact_follows_gitops_path() -> None:
    text = gitops_text("flux", extra="    path: ./deploy/lab/\n")
    found = gitops_manifests(site(text), ALL)
    (generator,) = [m.obj for m in found if m.kind == "ArtifactGenerator"]
    assert generator["spec"]["artifacts"][0]["copy"][0]["from"] == "@repo/deploy/lab/**"
    paths = {m.obj["spec"]["path"] for m in found if m.kind == "Kustomization"}
    assert paths == {f"./{layer}" for layer in ONE_SHOT}


def test_flux_can_read_the_whole_repository_and_is_told_what_that_costs() -> None:
    text = gitops_text("flux", extra="    fluxSource: repository\n")
    found = gitops_manifests(site(text), ALL)
    assert [m.kind for m in found if m.kind == "ArtifactGenerator"] == []
    for m in found:
        if m.kind == "Kustomization":
            assert m.obj["spec"]["sourceRef"] == {"kind": "GitRepository", "name": "lab"}
            assert m.obj["spec"]["path"].startswith("./out/lab/")
    (diag,) = [d for d in check_gitops(*parse(text)) if d.code == "NVC382"]
    assert (diag.severity, diag.path) == (Severity.INFO, "/spec/gitops/fluxSource")
    assert diag.span.line == text.splitlines().index("    fluxSource: repository") + 1
    assert [d.code for d in check_gitops(*parse(gitops_text("flux")))] == []


def test_flux_depends_on_chain_follows_layer_order_as_objects() -> None:
    objects = build("flux")
    assert "dependsOn" not in objects["lab-crds"]["spec"]
    for before, after in itertools.pairwise(ONE_SHOT):
        assert objects[f"lab-{after}"]["spec"]["dependsOn"] == [{"name": f"lab-{before}"}]


def test_flux_chain_skips_absent_layers() -> None:
    objects = build("flux", components=["readiness", "crds"])
    assert sorted(apps(objects)) == ["lab-crds", "lab-readiness"]
    assert objects["lab-readiness"]["spec"]["dependsOn"] == [{"name": "lab-crds"}]


def test_flux_waits_for_crds_and_platform_only() -> None:
    objects = build("flux")
    assert [objects[f"lab-{layer}"]["spec"].get("wait", False) for layer in ONE_SHOT] == [
        True,
        True,
        False,
        False,
        False,
    ]


def test_flux_readiness_is_suspended_only_under_a_manual_trigger() -> None:
    assert build("flux", trigger="manual")["lab-readiness"]["spec"]["suspend"] is True
    on_sync = build("flux", trigger="on-sync")
    assert not on_sync["lab-readiness"]["spec"].get("suspend", False)
    assert not any(o["spec"].get("suspend") for o in on_sync.values())


def test_flux_durations_match_the_flux_patterns() -> None:
    for obj in build("flux").values():
        for key in ("interval", "retryInterval", "timeout"):
            if key in obj["spec"]:
                assert FLUX_DURATION.match(obj["spec"][key]), (obj["metadata"]["name"], key)


@pytest.mark.parametrize(
    ("revision", "ref"),
    [
        ("main", {"branch": "main"}),
        ("release/1.x", {"branch": "release/1.x"}),
        ("refs/tags/v1.0.0", {"name": "refs/tags/v1.0.0"}),
        (
            "0123456789abcdef0123456789abcdef01234567",
            {"commit": "0123456789abcdef0123456789abcdef01234567"},
        ),
    ],
)
def test_flux_ref_from_target_revision(revision: str, ref: dict[str, str]) -> None:
    assert flux_ref(revision) == ref


def test_flux_secret_ref_is_a_reference_only() -> None:
    parsed = site(gitops_text("flux", extra="    secretRef: git-credentials\n"))
    repo = gitops_manifests(parsed, ALL)[0].obj
    assert repo["spec"]["secretRef"] == {"name": "git-credentials"}


# --- shared ------------------------------------------------------------------------------


@pytest.mark.parametrize("engine", ["argocd", "flux"])
@pytest.mark.parametrize("trigger", ["manual", "on-sync"])
def test_every_object_validates_against_the_vendored_crds(engine: str, trigger: str) -> None:
    for obj in build(engine, trigger=trigger).values():
        assert default_registry().validate(obj) == [], obj["metadata"]["name"]
        assert object_findings(obj) == [], obj["metadata"]["name"]


@pytest.mark.parametrize("engine", ["argocd", "flux"])
def test_gitops_objects_carry_no_prune_protection(engine: str) -> None:
    for obj in build(engine).values():
        annotations = obj["metadata"].get("annotations", {})
        assert not set(PRUNE_PROTECTION) & set(annotations)


def test_gitops_path_sets_the_layer_paths() -> None:
    parsed = site(gitops_text(extra="    path: ./clusters/lab/\n"))
    assert layer_path(parsed, "crds") == "clusters/lab/crds"
    app = gitops_manifests(parsed, ["crds"])[1].obj
    assert app["spec"]["source"]["path"] == "clusters/lab/crds"


def test_no_repo_url_means_no_objects() -> None:
    assert gitops_manifests(site(gitops_text(repo=None)), ALL) == []
    assert gitops_manifests(site(), ALL) == []


def test_unknown_layer_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="unknown output layers"):
        gitops_manifests(site(gitops_text()), ["crds", "gitops"])


# --- check_gitops ------------------------------------------------------------------------


def checked(text: str) -> list[tuple[str, Severity, str]]:
    parsed, doc = parse(text)
    return [(d.code, d.severity, d.path) for d in check_gitops(parsed, doc)]


def test_nvc340_warns_without_repo_url() -> None:
    parsed, doc = parse(site_yaml())
    (diag,) = check_gitops(parsed, doc)
    assert (diag.code, diag.severity) == ("NVC340", Severity.WARNING)
    assert diag.message == "no gitops.repoURL: no GitOps objects generated"
    assert checked(gitops_text(repo=None))[0][0] == "NVC340"


def test_valid_gitops_sections_pass() -> None:
    assert checked(gitops_text()) == []
    assert checked(gitops_text("argocd", "git@github.com:org/repo.git")) == []
    assert checked(gitops_text("flux")) == []
    secret = "    secretRef: git-ssh\n"
    assert checked(gitops_text("flux", "ssh://git@github.com/org/repo.git", extra=secret)) == []


def test_nvc341_flux_rejects_scp_style_urls() -> None:
    parsed, doc = parse(gitops_text("flux", "git@github.com:org/repo.git"))
    (diag,) = check_gitops(parsed, doc)
    assert (diag.code, diag.severity, diag.path) == (
        "NVC341",
        Severity.ERROR,
        "/spec/gitops/repoURL",
    )
    assert "ssh://git@github.com/org/repo.git" in diag.hint
    assert diag.span.line == gitops_text("flux", "git@github.com:org/repo.git").count("\n")


def test_nvc342_flux_cannot_follow_head() -> None:
    text = gitops_text("flux", extra="    targetRevision: HEAD\n")
    assert checked(text) == [("NVC342", Severity.ERROR, "/spec/gitops/targetRevision")]
    assert checked(gitops_text("argocd", extra="    targetRevision: HEAD\n")) == []


def test_nvc343_flux_over_ssh_needs_a_secret() -> None:
    text = gitops_text("flux", "ssh://git@github.com/org/repo.git")
    assert checked(text) == [("NVC343", Severity.WARNING, "/spec/gitops/repoURL")]


@pytest.mark.parametrize(
    "line",
    [
        "    repoURL: http://git.example.com/repo.git\n",
        "    repoURL: github.com/org/repo\n",
        "    path: /abs/out\n",
        "    path: ../out\n",
        "    targetRevision: main branch\n",
    ],
)
def test_site_schema_rejects_bad_gitops_fields(line: str) -> None:
    text = gitops_text(repo=None, extra=line)
    assert any(d.is_error for d in validate_schema(load(text)))


def test_site_model_reads_gitops_fields() -> None:
    parsed: Site = site(gitops_text("flux", extra="    secretRef: creds\n    path: out/x\n"))
    assert parsed.spec.gitops.secret_ref == "creds"
    assert parsed.spec.gitops.path == "out/x"


def test_layers_not_given_fall_back_to_their_default_cluster_kinds() -> None:
    parsed = site(gitops_text())
    layers = [nccl_log_profile(parsed)]  # readiness given, crds not
    spec = gitops_manifests(parsed, ["crds", "readiness"], layers)[0].obj["spec"]
    assert spec["clusterResourceWhitelist"] == [
        {"group": "apiextensions.k8s.io", "kind": "CustomResourceDefinition"},
        {"group": "nvcre.nvidia.com", "kind": "LogProfile"},
    ]
