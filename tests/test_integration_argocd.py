"""The Argo CD config-management plugin example: its shape, and its script run for real."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from nvcregen.kubeschema.registry import default_registry

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "argocd-cmp"
LAYERS = ("crds", "platform", "monitoring", "readiness")


def load(name: str) -> Any:
    return yaml.safe_load((EXAMPLE / name).read_text(encoding="utf-8"))


def script() -> str:
    args = load("plugin.yaml")["spec"]["generate"]["args"]
    assert isinstance(args, list)
    assert len(args) == 1
    return str(args[0])


def test_plugin_is_a_config_management_plugin() -> None:
    plugin = load("plugin.yaml")
    assert plugin["apiVersion"] == "argoproj.io/v1alpha1"
    assert plugin["kind"] == "ConfigManagementPlugin"
    assert plugin["metadata"]["name"] == "nvcregen"
    assert set(plugin["spec"]) <= {
        "version",
        "init",
        "generate",
        "discover",
        "parameters",
        "preserveFileMode",
    }
    command = plugin["spec"]["generate"]["command"]
    assert isinstance(command, list)
    assert all(isinstance(word, str) for word in command)
    assert command == ["sh", "-ec"]
    text = script()
    assert 'nvcregen render "sites/$site.yaml" --out "$out"' in text
    assert "ARGOCD_ENV_SITE" in text
    assert "ARGOCD_ENV_LAYER" in text


def test_application_uses_the_plugin_and_validates_against_argo_cd() -> None:
    plugin = load("plugin.yaml")
    app = load("application.yaml")
    assert default_registry().validate(app) == []
    source = app["spec"]["source"]
    assert source["plugin"]["name"] == f"{plugin['metadata']['name']}-{plugin['spec']['version']}"
    env = {e["name"]: e["value"] for e in source["plugin"]["env"]}
    assert env["LAYER"] in LAYERS
    assert (ROOT / "sites" / f"{env['SITE']}.yaml").is_file()
    assert "automated" not in app["spec"].get("syncPolicy", {})  # readiness runs by hand


def _generate(cwd: Path, site: str, layer: str) -> subprocess.CompletedProcess[str]:
    bin_dir = Path(sys.executable).parent
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "ARGOCD_ENV_SITE": site,
        "ARGOCD_ENV_LAYER": layer,
    }
    return subprocess.run(
        ["sh", "-ec", script()],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.mark.slow
def test_generate_streams_the_layer_nvcregen_renders(tmp_path: Path) -> None:
    if shutil.which("sh") is None or not (Path(sys.executable).parent / "nvcregen").exists():
        pytest.skip("needs sh and the nvcregen console script")
    repo = tmp_path / "repo"
    shutil.copytree(ROOT / "sites", repo / "sites")
    subprocess.run(
        [str(Path(sys.executable).parent / "nvcregen"), "render", "--out", str(tmp_path / "out")],
        cwd=repo,
        check=True,
        capture_output=True,
    )
    done = _generate(repo, "h20-3e-lab", "readiness")
    assert done.returncode == 0, done.stderr
    streamed = [d for d in yaml.safe_load_all(done.stdout) if d is not None]
    folder = tmp_path / "out" / "h20-3e-lab" / "readiness"
    # Readiness objects sit in one folder per stage; `find | LC_ALL=C sort` orders by path.
    files = sorted(folder.rglob("*.yaml"), key=lambda p: p.as_posix().encode())
    assert files
    assert streamed == [yaml.safe_load(f.read_text(encoding="utf-8")) for f in files]
    assert {d["kind"] for d in streamed} >= {"Certification", "WorkloadRun", "LogProfile"}
    assert "nvcregen:" in done.stderr  # the render summary goes to stderr, not the stream
    assert not list(tmp_path.glob("tmp*"))  # nothing left in the working folder


@pytest.mark.slow
def test_generate_fails_on_an_invalid_site_or_a_bad_layer(tmp_path: Path) -> None:
    if shutil.which("sh") is None or not (Path(sys.executable).parent / "nvcregen").exists():
        pytest.skip("needs sh and the nvcregen console script")
    (tmp_path / "sites").mkdir()
    site = (ROOT / "sites" / "h20-3e-lab.yaml").read_text(encoding="utf-8")
    (tmp_path / "sites" / "h20-3e-lab.yaml").write_text(
        site.replace("gpuHours: 260", "gpuHours: 1"), encoding="utf-8"
    )
    broken = _generate(tmp_path, "h20-3e-lab", "readiness")
    assert broken.returncode != 0
    assert broken.stdout == ""
    assert "error[NVC313]" in broken.stderr
    wrong = _generate(tmp_path, "h20-3e-lab", "gitops")
    assert wrong.returncode == 1
    assert "LAYER must be crds, platform, monitoring or readiness, not 'gitops'" in wrong.stderr
    unset = _generate(tmp_path, "", "readiness")
    assert unset.returncode != 0
    assert "set the plugin env SITE" in unset.stderr
