"""Rendering is the same from any directory, and a bad --out is a user error (issue #14).

Item 8: `render --out DIR SITE` from another working directory writes the same bytes as
`render` from the project root, and no absolute path of the machine reaches out/.
Item 11: an unwritable --out ends with NVC504 and exit 2, never "internal error".
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from nvcregen.cli import main
from nvcregen.emit.writer import host_paths, read_tree

ROOT = Path(__file__).resolve().parent.parent
SITE = "h20-3e-lab"


def files(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()
    }


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A copy of the project (sites only) deep inside the temporary folder."""
    copy = tmp_path / "deep" / "checkout"
    shutil.copytree(ROOT / "sites", copy / "sites")
    return copy


def test_output_is_the_same_from_any_directory(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    elsewhere = tmp_path / "elsewhere" / "cwd"
    elsewhere.mkdir(parents=True)
    monkeypatch.chdir(project)
    assert CliRunner().invoke(main, ["render", f"sites/{SITE}.yaml"]).exit_code == 0
    monkeypatch.chdir(elsewhere)
    site = str(project / "sites" / f"{SITE}.yaml")
    done = CliRunner().invoke(main, ["render", "--out", str(tmp_path / "o2"), site])
    assert done.exit_code == 0, done.output
    monkeypatch.chdir(project / "sites")
    done = CliRunner().invoke(main, ["render", "--out", "../o3", f"{SITE}.yaml"])
    assert done.exit_code == 0, done.output
    first = files(project / "out" / SITE)
    assert files(tmp_path / "o2" / SITE) == first
    assert files(project / "o3" / SITE) == first
    assert files(ROOT / "out" / SITE) == first  # and the committed tree
    leaked = [p for p, data in first.items() if str(tmp_path).encode() in data]
    assert leaked == []


def test_a_host_path_in_a_generated_file_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    here = tmp_path / "a" / "b"
    here.mkdir(parents=True)
    monkeypatch.chdir(here)
    tree = {"x.yaml": f"path: {here}/sites/x.yaml\n", "index.json": "{}\n"}
    [diag] = host_paths(Path("out"), {SITE: tree})
    assert (diag.code, diag.span.file) == ("NVC510", f"out/{SITE}/x.yaml")
    assert read_tree(here / "out" / SITE) == {}


@pytest.mark.slow
@pytest.mark.skipif(os.name != "posix", reason="POSIX paths")
def test_an_unwritable_out_is_exit_2_not_internal_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "nvcregen",
            "render",
            "--out",
            str(blocker / "out"),
            f"sites/{SITE}.yaml",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert "error[NVC504]: cannot write to" in done.stderr
    assert "internal error" not in done.stderr
