"""Rendering gives the same bytes whatever the folder, hash seed, time zone and locale.

The projects are copies of `sites/` at two different absolute paths; the package and the
catalog come from the install. The result must also be the committed `out/`, byte for
byte: that is what `make render` leaving `out/` unchanged means.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
VARIED = ("PYTHONHASHSEED", "TZ", "LC_ALL", "LANG", "LANGUAGE", "LC_CTYPE", "NVCREGEN_DEBUG")
ENV_A = {"PYTHONHASHSEED": "0", "TZ": "UTC", "LC_ALL": "C"}
ENV_B = {"PYTHONHASHSEED": "1", "TZ": "Asia/Shanghai", "LC_ALL": "C.UTF-8"}


def make_project(where: Path) -> Path:
    where.mkdir(parents=True)
    shutil.copytree(ROOT / "sites", where / "sites")
    return where


def nvcregen(project: Path, env: dict[str, str], *args: str) -> str:
    """Run `python -m nvcregen ARGS` in `project`; return stderr (it must succeed)."""
    base = {k: v for k, v in os.environ.items() if k not in VARIED}
    proc = subprocess.run(
        [sys.executable, "-m", "nvcregen", *args],
        cwd=project,
        env={**base, **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output
    assert "Traceback" not in output
    return output


def tree(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def test_render_is_deterministic_and_matches_the_committed_out(tmp_path: Path) -> None:
    project_a = make_project(tmp_path / "a")
    project_b = make_project(tmp_path / "second place" / "b-project")
    # The same folder inside the project, named absolutely: GitOps paths follow the output
    # folder's place in the project, so another folder would name other paths.
    out_b = project_b / "out"

    # A: relative --out, every site found under sites/.
    nvcregen(project_a, ENV_A, "render", "--out", "out")
    # B: elsewhere, absolute --out, the sites named by absolute path, another environment.
    sites_b = sorted(str(p) for p in (project_b / "sites").glob("*.yaml"))
    nvcregen(project_b, ENV_B, "render", "--out", str(out_b), *sites_b)

    rendered_a, rendered_b = tree(project_a / "out"), tree(out_b)
    assert rendered_a
    assert rendered_a == rendered_b

    forbidden = {str(tmp_path), str(project_a), str(project_b), str(ROOT)}
    forbidden |= {str(p.resolve()) for p in (tmp_path, project_a, project_b, ROOT)}
    home = str(Path.home())
    # /root is also root's home inside containers (`/root/.ssh` for MPI's keys): when the
    # tests run as root it names no path of this machine's.
    if home not in {"/", "", "/root"}:
        forbidden.add(home)
    for path, data in rendered_a.items():
        text = data.decode("utf-8")
        leaked = sorted(f for f in forbidden if f in text)
        assert not leaked, f"{path} mentions {leaked}"

    committed = tree(ROOT / "out")
    assert sorted(rendered_a) == sorted(committed), "run `make render` and commit out/"
    for path in sorted(committed):
        assert rendered_a[path] == committed[path], f"out/{path} is stale; run `make render`"

    # C: rendering A again from B's environment finds nothing to change.
    mtimes = {p: p.stat().st_mtime_ns for p in (project_a / "out").rglob("*")}
    output = nvcregen(project_a, ENV_B, "render")
    assert "wrote out/" not in output
    assert {p: p.stat().st_mtime_ns for p in (project_a / "out").rglob("*")} == mtimes
    assert tree(project_a / "out") == committed
