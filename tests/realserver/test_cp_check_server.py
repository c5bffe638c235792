"""`nvcregen check --server` against a real kube-apiserver (v1.35.4, the vendored CRDs).

Every shipped site's committed out/ tree, and each example site rendered afresh, is
dry-run object by object (server-side apply, `dryRun=All`, strict field validation):
the server runs its own OpenAPI validation, the CRDs' structural schemas and CEL rules,
and admission. The namespaces the sites create
are created first, as a GitOps controller applies them first, and so are Argo CD's and
Flux's own namespaces (the controllers are installed before any site); nothing else
persists.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from faultproxy import Fault, proxy
from kubecontrolplane import CONTEXT, NOBODY_TOKEN, ControlPlane

from nvcregen.catalog.engines import engine_facts
from nvcregen.cli import main
from nvcregen.cluster.client import connect

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


@pytest.mark.parametrize(
    "example", ["node-health/h200-trainer", "node-health/h200-nvcre", "fabric/fleet"]
)
def test_the_examples_dry_run_without_a_finding(
    plane: ControlPlane, example: str, tmp_path: Path
) -> None:
    """The node-health runs (#23) and the fabric fleet (#22) meet the real server's schemas."""
    site = ROOT / "examples" / f"{example}.yaml"
    rendered = CliRunner().invoke(main, ["render", "--out", str(tmp_path), str(site)])
    assert rendered.exit_code == 0, rendered.output
    (tree,) = (p for p in tmp_path.iterdir() if p.is_dir())
    for path in sorted(tree.rglob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text("utf-8")):
            if isinstance(doc, dict) and doc.get("kind") == "Namespace":
                plane.namespace(doc["metadata"]["name"])
    args = ["check", str(tree), "--server", CONTEXT, "--kubeconfig", str(plane.kubeconfig)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert f"dry-ran it on context '{CONTEXT}'" in result.output
    assert "NVC64" not in result.output


def check(plane: ControlPlane, config: Path, site: str = "l20-pool") -> Any:
    args = ["check", f"out/{site}", "--server", CONTEXT, "--kubeconfig", str(config)]
    return CliRunner().invoke(main, args)


def test_refused_credentials_stop_the_dry_run_once(
    plane: ControlPlane, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    config = plane.write_kubeconfig(tmp_path / "kubeconfig", token="not-a-token")
    result = check(plane, config)
    assert result.exit_code == 1, result.output
    assert result.output.count("error[NVC642]") == 1
    refused = "refused the credentials of context 'realserver': Unauthorized"
    assert f"{refused}; dry-run stopped after 0 of " in result.output


def test_a_token_without_rbac_rights_is_told_what_it_needs(
    plane: ControlPlane, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Discovery is open to every authenticated user; the apply itself needs `patch`."""
    monkeypatch.chdir(ROOT)
    config = plane.write_kubeconfig(tmp_path / "kubeconfig", token=NOBODY_TOKEN)
    result = check(plane, config)
    assert result.exit_code == 1
    assert "error[NVC640]" in result.output and "NVC642" not in result.output
    assert 'User "nobody" cannot patch resource' in result.output
    assert "a dry-run needs the same RBAC as a real apply" in result.output


def test_a_server_failing_every_dry_run_is_retried_then_reported(
    plane: ControlPlane, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    no_waiting = functools.partial(connect, sleep=lambda _: None)  # DRY_RUN_POLICY's backoff
    monkeypatch.setattr("nvcregen.check.server.connect", no_waiting)
    with proxy(plane) as faults:
        faults.faults.append(Fault("*", "PATCH", code=500, times=10_000))
        config = plane.write_kubeconfig(tmp_path / "kubeconfig", url=faults.url)
        result = check(plane, config, "h20-3e-trainer")
    patches = [path for method, path in faults.seen if method == "PATCH"]
    objects = result.output.count("error[NVC640]")
    assert objects > 10
    assert len(patches) == 3 * objects  # three tries each, as DRY_RUN_POLICY says
    assert "(HTTP 500): injected by the test proxy" in result.output
    assert "an admission webhook may be down" in result.output


@pytest.mark.parametrize("engine", ["argocd", "flux"])
def test_a_tree_split_into_shards_dry_runs_without_a_finding(
    plane: ControlPlane, engine: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue #33's shards: child Applications under a readiness parent, or a Kustomization
    per shard, meet the real server's schemas (19 objects a unit splits each single-node
    round of the shipped trainer site, one run per test, node and round, in two)."""
    facts = engine_facts()
    tight = facts.model_copy(update={"unit": facts.unit.model_copy(update={"max_objects": 19})})
    for module in ("nvcregen.chain.pipeline", "nvcregen.replay.site"):
        monkeypatch.setattr(f"{module}.engine_facts", lambda: tight)
    text = (ROOT / "tests" / "fixtures" / "perrun" / "h20-3e-trainer.yaml").read_text("utf-8")
    site = tmp_path / "h20-3e-trainer.yaml"
    site.write_text(text.replace("    engine: argocd\n", f"    engine: {engine}\n"), "utf-8")
    rendered = CliRunner().invoke(main, ["render", "--out", str(tmp_path / "out"), str(site)])
    assert rendered.exit_code == 0, rendered.output
    tree = tmp_path / "out" / "h20-3e-trainer"
    assert list(tree.glob("readiness/01-single-node/round-1/shard-01/*.yaml"))
    args = ["check", str(tree), "--server", CONTEXT, "--kubeconfig", str(plane.kubeconfig)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert f"dry-ran it on context '{CONTEXT}'" in result.output
    assert "NVC64" not in result.output
