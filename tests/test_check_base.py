"""`nvcregen check --base REF`: transition rules see the object as it was at REF."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from nvcregen.cli import main
from nvcregen.emit.canonical import dump_yaml

ROOT = Path(__file__).resolve().parent.parent
SITE = "h20-3e-lab"


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    shutil.copytree(ROOT / "out" / SITE, tmp_path / "out" / SITE)
    shutil.copytree(ROOT / "sites", tmp_path / "sites")
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "base")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _certification(repo: Path) -> Path:
    return sorted((repo / "out" / SITE / "readiness").rglob("certification-*.yaml"))[0]


def test_an_in_place_spec_change_needs_a_new_name(repo: Path) -> None:
    file = _certification(repo)
    obj = yaml.safe_load(file.read_text())
    obj["spec"]["repeatCount"] = 5
    file.write_text(dump_yaml(obj))
    plain = CliRunner().invoke(main, ["check", "out"])
    assert plain.exit_code == 0, plain.output  # as a create, the change is fine
    result = CliRunner().invoke(main, ["check", "out", "--base", "HEAD"])
    assert result.exit_code == 1
    assert "spec is immutable after creation" in result.output
    assert "this change needs a new object name" in result.output
    assert f"out/{SITE}/{file.relative_to(repo / 'out' / SITE).as_posix()}:" in result.output


def test_an_unchanged_tree_passes_against_its_base(repo: Path) -> None:
    result = CliRunner().invoke(main, ["check", "out", "--base", "HEAD"])
    assert result.exit_code == 0, result.output
    assert "against HEAD" in result.output


def test_an_unknown_base_is_a_clear_error(repo: Path) -> None:
    result = CliRunner().invoke(main, ["check", "out", "--base", "no-such-ref"])
    assert result.exit_code == 2
    assert "no-such-ref" in result.output
    assert "Traceback" not in result.output


def test_git_errors_read_as_they_do_for_diff(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    unknown = CliRunner().invoke(main, ["check", "out", "--base", "--output=x"])
    assert (unknown.exit_code, unknown.output) == (2, "nvcregen: '--output=x' is not a revision\n")
    shutil.rmtree(repo / ".git")
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(repo.parent))
    outside = CliRunner().invoke(main, ["check", "out", "--base", "HEAD"])
    assert outside.exit_code == 2
    assert outside.output.startswith("nvcregen: cannot read the base from Git: fatal: not a git")
    monkeypatch.setenv("PATH", str(repo / "sites"))  # no git there
    missing = CliRunner().invoke(main, ["check", "out", "--base", "HEAD"])
    assert (missing.exit_code, "Traceback" in missing.output) == (2, False)
    assert "git is not installed" in missing.output
