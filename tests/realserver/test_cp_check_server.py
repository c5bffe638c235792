"""`nvcregen check --server` against a real kube-apiserver (v1.35.4, the vendored CRDs).

Every shipped site's committed out/ tree is dry-run object by object (server-side apply,
`dryRun=All`, strict field validation): the server runs its own OpenAPI validation, the
CRDs' structural schemas and CEL rules, and admission. The namespaces the sites create
are created first, as a GitOps controller applies them first, and so are Argo CD's and
Flux's own namespaces (the controllers are installed before any site); nothing else
persists.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from kubecontrolplane import CONTEXT, ControlPlane

from nvcregen.cli import main

ROOT = Path(__file__).resolve().parents[2]
SITES = sorted(p.stem for p in (ROOT / "sites").glob("*.yaml"))


# Where the GitOps controllers run: installed before any site, never by one.
GITOPS_NAMESPACES = ("argocd", "flux-system")


@pytest.fixture(scope="module")
def plane(control_plane: ControlPlane) -> ControlPlane:
    """The control plane, with Argo CD's and Flux's namespaces and every namespace the
    shipped sites create."""
    for name in GITOPS_NAMESPACES:
        control_plane.namespace(name)
    for path in sorted((ROOT / "out").glob("*/**/*.yaml")):
        for doc in yaml.safe_load_all(path.read_text("utf-8")):
            if isinstance(doc, dict) and doc.get("kind") == "Namespace":
                control_plane.namespace(doc["metadata"]["name"])
    return control_plane


@pytest.mark.parametrize("site", SITES)
def test_every_shipped_site_dry_runs_without_a_finding(
    plane: ControlPlane, site: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    args = ["check", f"out/{site}", "--server", CONTEXT, "--kubeconfig", str(plane.kubeconfig)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert f"dry-ran it on context '{CONTEXT}'" in result.output
    assert "NVC64" not in result.output
