"""Shell completion through click: the scripts, and what nvcregen completes itself."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from nvcregen.cli import main

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """sites/ with two sites and a non-site file, as the current directory."""
    (tmp_path / "sites").mkdir()
    for name in ("h20-3e-lab.yaml", "l20-pool.yml", "README.md"):
        (tmp_path / "sites" / name).write_text("", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def complete(words: str, cword: int) -> list[str]:
    """What bash completion offers for `words` with the cursor on word `cword`."""
    env = {"_NVCREGEN_COMPLETE": "bash_complete", "COMP_WORDS": words, "COMP_CWORD": str(cword)}
    result = CliRunner().invoke(main, [], prog_name="nvcregen", env=env)
    assert result.exit_code == 0, result.output
    return result.stdout.splitlines()


@pytest.mark.parametrize(
    ("shell", "marker"),
    [
        ("bash", "complete -o nosort -F _nvcregen_completion nvcregen"),
        ("zsh", "#compdef nvcregen"),
        ("fish", "complete --no-files --command nvcregen"),
    ],
)
def test_completion_source_for_each_shell(shell: str, marker: str) -> None:
    env = {"_NVCREGEN_COMPLETE": f"{shell}_source"}
    result = CliRunner().invoke(main, [], prog_name="nvcregen", env=env)
    assert result.exit_code == 0
    assert marker in result.stdout
    assert f"_NVCREGEN_COMPLETE={shell}_complete" in result.stdout


def test_site_arguments_complete_from_sites_folder(project: Path) -> None:
    assert complete("nvcregen validate ", 2) == [
        "plain,sites/h20-3e-lab.yaml",
        "plain,sites/l20-pool.yml",
    ]
    assert complete("nvcregen render sites/l", 2) == ["plain,sites/l20-pool.yml"]
    assert complete("nvcregen rehearse sites/h", 2) == ["plain,sites/h20-3e-lab.yaml"]


def test_a_site_already_named_is_not_offered_again(project: Path) -> None:
    assert complete("nvcregen validate sites/h20-3e-lab.yaml ", 3) == ["plain,sites/l20-pool.yml"]


def test_other_paths_fall_back_to_file_completion(project: Path) -> None:
    assert complete("nvcregen validate other/", 2) == ["file,other/"]


def test_commands_complete(project: Path) -> None:
    offered = complete("nvcregen ", 1)
    assert {"plain,init", "plain,catalog", "plain,validate", "plain,schema"} <= set(offered)
    assert "plain,rehearse" in offered


def test_models_complete_for_init(project: Path) -> None:
    assert complete("nvcregen init --model H2", 3) == [
        "plain,H20",
        "plain,H20-3e",
        "plain,H200",
    ]
    assert complete("nvcregen init --model rtx", 3) == ["plain,RTX PRO 6000"]


def test_catalog_names_complete_for_show(project: Path) -> None:
    assert complete("nvcregen catalog show dcgm-l", 3) == [
        "plain,dcgm-l1",
        "plain,dcgm-l2",
        "plain,dcgm-l3",
        "plain,dcgm-l4",
    ]
    assert complete("nvcregen catalog show --kind baselines h20-3e-2", 5) == [
        "plain,h20-3e-2node-roce-all-reduce",
        "plain,h20-3e-2node-tcp-all-reduce",
    ]


@pytest.mark.slow
def test_installed_entry_point_prints_the_bash_script() -> None:
    """The real console script, as `eval "$(_NVCREGEN_COMPLETE=bash_source nvcregen)"` runs it."""
    nvcregen = Path(sys.executable).parent / "nvcregen"
    if not nvcregen.exists():
        pytest.skip("nvcregen is not installed beside this interpreter")
    env = {**os.environ, "_NVCREGEN_COMPLETE": "bash_source"}
    done = subprocess.run(
        [str(nvcregen)], env=env, capture_output=True, text=True, check=True, timeout=60
    )
    assert "_nvcregen_completion()" in done.stdout
    assert done.stderr == ""
