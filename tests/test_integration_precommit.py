"""The pre-commit hooks: their definition, and `pre-commit try-repo` in a scratch repository.

The try-repo test installs nvcregen the way pre-commit does for users (a virtualenv built
from a commit of this repository, dependencies from PyPI), so it needs the network unless
pip's cache holds those packages; it builds two hook environments, about a minute in all.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from nvcregen.cli import main

ROOT = Path(__file__).resolve().parent.parent
HOOKS = ROOT / ".pre-commit-hooks.yaml"
GIT_ID = ["-c", "user.name=nvcregen-test", "-c", "user.email=test@nvcregen.invalid"]


def hooks() -> dict[str, dict[str, object]]:
    data = yaml.safe_load(HOOKS.read_text(encoding="utf-8"))
    assert isinstance(data, list)
    return {h["id"]: h for h in data}


def command_of(hook: dict[str, object]) -> list[str]:
    entry = shlex.split(str(hook["entry"]))
    assert entry[0] == "nvcregen"
    return entry[1:]


def test_hooks_are_the_two_documented_ones() -> None:
    defined = hooks()
    assert list(defined) == ["nvcregen-validate", "nvcregen-render-check"]
    for hook in defined.values():
        assert hook["language"] == "python"
        assert {"id", "name", "entry", "language"} <= hook.keys()


def test_validate_takes_site_files_and_render_check_none() -> None:
    validate, render = hooks()["nvcregen-validate"], hooks()["nvcregen-render-check"]
    assert command_of(validate) == ["validate"]
    assert validate["pass_filenames"] is True
    assert command_of(render) == ["render", "--check"]
    assert render["pass_filenames"] is False
    site_files = re.compile(str(validate["files"]))
    assert site_files.search("sites/h20-3e-lab.yaml")
    assert site_files.search("sites/a.yml")
    assert not site_files.search("sites/nested/a.yaml")
    assert not site_files.search("out/h20-3e-lab/index.json")
    assert not site_files.search("catalog/hardware/h20.yaml")
    triggers = re.compile(str(render["files"]))
    assert triggers.search("sites/h20-3e-lab.yaml")
    assert triggers.search("out/h20-3e-lab/readiness/x.yaml")
    assert not triggers.search("README.md")


@pytest.mark.parametrize("hook_id", ["nvcregen-validate", "nvcregen-render-check"])
def test_hook_entries_are_real_commands(hook_id: str) -> None:
    """Each entry parses as nvcregen's own command line (`--help` appended)."""
    args = command_of(hooks()[hook_id])
    with pytest.raises(SystemExit) as exit_:
        main([*args, "--help"])
    assert exit_.value.code == 0


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *GIT_ID, *args], cwd=cwd, check=True, capture_output=True)


def _snapshot(dest: Path) -> None:
    """A one-commit copy of this repository as it is now (committed or not)."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        check=True,
        capture_output=True,
    ).stdout.decode()
    for rel in filter(None, listed.split("\0")):
        if rel.startswith(("out/", "tests/")) or not (ROOT / rel).is_file():
            continue
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, dest / rel)
    _git(dest, "init", "-q")
    _git(dest, "add", "-A")
    _git(dest, "commit", "-q", "-m", "snapshot")


def _pre_commit(cwd: Path, home: Path, *args: str) -> tuple[int, str]:
    env = {**os.environ, "PRE_COMMIT_HOME": str(home), "PRE_COMMIT_COLOR": "never"}
    pre_commit = Path(sys.executable).parent / "pre-commit"
    done = subprocess.run(
        [str(pre_commit), *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    return done.returncode, done.stdout + done.stderr


@pytest.mark.slow
def test_pre_commit_try_repo_runs_the_hooks(tmp_path: Path) -> None:
    if not (Path(sys.executable).parent / "pre-commit").exists():
        pytest.skip("pre-commit is not installed (it is in the dev extra)")
    if not (ROOT / ".git").exists() or shutil.which("git") is None:
        pytest.skip("needs git and a git checkout of nvcregen")
    hooks_repo, consumer, home = tmp_path / "nvcregen", tmp_path / "sites-repo", tmp_path / "pc"
    hooks_repo.mkdir()
    consumer.mkdir()
    _snapshot(hooks_repo)
    shutil.copytree(ROOT / "sites", consumer / "sites")
    nvcregen = Path(sys.executable).parent / "nvcregen"
    subprocess.run([str(nvcregen), "render"], cwd=consumer, check=True, capture_output=True)
    _git(consumer, "init", "-q")
    _git(consumer, "add", "-A")
    _git(consumer, "commit", "-q", "-m", "sites")

    # What a user tries first: every hook of the repository, on every file.
    code, output = _pre_commit(consumer, home, "try-repo", str(hooks_repo), "--all-files")
    assert code == 0, output
    assert re.search(r"nvcregen validate\.+Passed", output), output
    assert re.search(r"nvcregen render --check\.+Passed", output), output

    # Pinned in .pre-commit-config.yaml (try-repo rebuilds its environment on every call;
    # `run` builds it once for the two failures below).
    rev = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=hooks_repo, check=True, capture_output=True, text=True
    ).stdout.strip()
    config = {
        "repos": [
            {
                "repo": str(hooks_repo),
                "rev": rev,
                "hooks": [{"id": "nvcregen-validate"}, {"id": "nvcregen-render-check"}],
            }
        ]
    }
    (consumer / ".pre-commit-config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    _git(consumer, "add", ".pre-commit-config.yaml")

    # A hand edit in out/: the sites still validate, render --check catches the drift.
    edited = next((consumer / "out" / "h20-3e-lab" / "readiness").rglob("certification-*.yaml"))
    edited.write_text(edited.read_text(encoding="utf-8") + "# edited\n", encoding="utf-8")
    code, output = _pre_commit(consumer, home, "run", "--all-files")
    assert code == 1, output
    assert re.search(r"nvcregen validate\.+Passed", output), output
    assert re.search(r"nvcregen render --check\.+Failed", output), output
    assert "out/ is out of date" in output

    # A site over its budget fails validate, at the line.
    _git(consumer, "checkout", "--", "out")
    site = consumer / "sites" / "h20-3e-lab.yaml"
    site.write_text(
        site.read_text(encoding="utf-8").replace("gpuHours: 260", "gpuHours: 1"), encoding="utf-8"
    )
    code, output = _pre_commit(
        consumer, home, "run", "nvcregen-validate", "--files", "sites/h20-3e-lab.yaml"
    )
    assert code == 1, output
    assert re.search(r"nvcregen validate\.+Failed", output), output
    assert re.search(r"sites/h20-3e-lab.yaml:\d+:\d+: error\[NVC313\]", output), output
