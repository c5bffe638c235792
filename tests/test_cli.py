"""The command line end to end, in a scratch project: exit codes and what is printed first."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from nvcregen import __version__
from nvcregen.cli import main

ROOT = Path(__file__).resolve().parent.parent
SITE = "h20-3e-lab"
SITE_FILE = ROOT / "sites" / f"{SITE}.yaml"
COMMITTED = ROOT / "out" / SITE
# The single-node Certification, whose name ends in a hash of its spec.
CERT = next(COMMITTED.glob("readiness/01-*/certification-*.yaml")).relative_to(COMMITTED).as_posix()
REFRESH_SCHEMA = "nvcregen schema > schemas/site.v1alpha1.json"

Files = dict[str, bytes]


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project holding sites/h20-3e-lab.yaml, as the current directory."""
    (tmp_path / "sites").mkdir()
    shutil.copyfile(SITE_FILE, tmp_path / "sites" / SITE_FILE.name)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(*args: str) -> Result:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    assert "Traceback" not in result.output
    return result


def first_line(result: Result) -> str:
    return result.output.splitlines()[0]


def first_error(result: Result) -> str:
    return next(line for line in result.output.splitlines() if ": error[" in line)


def last_line(result: Result) -> str:
    return result.output.splitlines()[-1]


def files(folder: Path) -> Files:
    """Every file under `folder` (relative path -> bytes); folders show as b'<dir>'."""
    return {
        p.relative_to(folder).as_posix(): p.read_bytes() if p.is_file() else b"<dir>"
        for p in sorted(folder.rglob("*"))
    }


def add_broken_site(project: Path, name: str = "broken.yaml") -> None:
    """A copy of the valid site with kind Cluster (line 6, column 7) and its own name."""
    text = SITE_FILE.read_text()
    text = text.replace("kind: Site\n", "kind: Cluster\n").replace(
        f"  name: {SITE}\n", "  name: broken-lab\n"
    )
    (project / "sites" / name).write_text(text)


def test_version() -> None:
    result = run("--version")
    assert result.exit_code == 0
    assert result.output == f"nvcregen, version {__version__}\n"


# validate


def test_validate_valid_site(project: Path) -> None:
    result = run("validate")
    assert result.exit_code == 0
    assert last_line(result) == "nvcregen: no problems; nothing written (validate)"
    assert not (project / "out").exists()


def test_validate_broken_site(project: Path) -> None:
    add_broken_site(project)
    result = run("validate", "sites/broken.yaml")
    assert result.exit_code == 2
    assert re.fullmatch(r"sites/broken\.yaml:6:7: error\[NVC203\]: .+", first_line(result))
    assert "6 | kind: Cluster" in result.output
    assert last_line(result).startswith("nvcregen: 1 error in 1 file;")


def test_validate_every_site_fails_when_one_is_broken(project: Path) -> None:
    add_broken_site(project)
    result = run("validate")
    assert result.exit_code == 2
    assert first_line(result).startswith("sites/broken.yaml:6:7: error[NVC203]: ")


def test_validate_json(project: Path) -> None:
    add_broken_site(project)
    result = run("validate", "--format", "json", "sites/broken.yaml")
    assert result.exit_code == 2
    diags = json.loads(result.stdout)
    assert isinstance(diags, list)
    assert diags
    fields = ["file", "line", "column", "severity", "code", "path", "message", "hint"]
    assert all(list(d) == fields for d in diags)
    first = diags[0]
    assert (first["file"], first["line"], first["column"]) == ("sites/broken.yaml", 6, 7)
    assert (first["severity"], first["code"], first["path"]) == ("error", "NVC203", "/kind")
    assert first["message"]


def test_validate_json_of_a_valid_site_is_an_array(project: Path) -> None:
    result = run("validate", "--format", "json")
    assert result.exit_code == 0
    diags = json.loads(result.stdout)
    assert isinstance(diags, list)
    assert all(d["severity"] != "error" for d in diags)


# render and render --check


def test_render_writes_the_site_folder(project: Path) -> None:
    result = run("render")
    assert result.exit_code == 0
    assert last_line(result) == f"nvcregen: no problems; wrote out/{SITE}/"
    assert sorted(p.name for p in (project / "out").iterdir()) == [SITE]
    assert files(project / "out" / SITE) == files(COMMITTED)


def test_render_again_changes_nothing(project: Path) -> None:
    assert run("render").exit_code == 0
    before = {p: p.stat().st_mtime_ns for p in (project / "out").rglob("*")}
    result = run("render")
    assert result.exit_code == 0
    assert "wrote out/" not in result.output
    assert {p: p.stat().st_mtime_ns for p in (project / "out").rglob("*")} == before


def test_check_after_render_passes(project: Path) -> None:
    assert run("render").exit_code == 0
    result = run("render", "--check")
    assert result.exit_code == 0
    assert last_line(result) == "nvcregen: no problems; 0 files differ"


def test_check_reports_an_edited_file(project: Path) -> None:
    assert run("render").exit_code == 0
    edited = project / "out" / SITE / CERT
    edited.write_text(edited.read_text().replace("gpusPerNode: 8", "gpusPerNode: 4", 1))
    before = files(project)

    result = run("render", "--check")

    assert result.exit_code == 1
    shown = f"out/{SITE}/{CERT}"
    # one line per file by default: how much changed, and which keys
    assert f"{shown}: changed (+1 -1 lines: gpusPerNode)\n" in result.output
    assert "--- a/" not in result.output
    assert "`render --check --verbose` shows every line" in result.output
    assert last_line(result) == "nvcregen: out/ is out of date; run `nvcregen render`"
    verbose = run("render", "--check", "--verbose")
    assert f"{shown}: changed (+1 -1 lines: gpusPerNode)\n--- a/{shown}\n+++ b/{shown}\n" in (
        verbose.output
    )
    assert "\n-        gpusPerNode: 4\n+        gpusPerNode: 8\n" in verbose.output
    assert files(project) == before


def test_check_reports_a_deleted_file(project: Path) -> None:
    assert run("render").exit_code == 0
    (project / "out" / SITE / CERT).unlink()
    before = files(project)

    result = run("render", "--check")

    assert result.exit_code == 1
    assert f"out/{SITE}/{CERT}: added\n" in result.output
    assert "1 files differ" in result.output or "1 file differs" in result.output
    assert files(project) == before


def test_check_without_out_writes_nothing(project: Path) -> None:
    before = files(project)
    result = run("render", "--check")
    assert result.exit_code == 1
    assert f"out/{SITE}/index.json: added" in result.output
    assert files(project) == before
    assert not (project / "out").exists()


def test_render_writes_nothing_when_any_site_is_broken(project: Path) -> None:
    add_broken_site(project)
    result = run("render")
    assert result.exit_code == 2
    assert first_line(result).startswith("sites/broken.yaml:6:7: error[NVC203]: ")
    assert last_line(result).endswith("; nothing written to out/")
    assert not (project / "out").exists()


def test_render_to_another_folder(project: Path) -> None:
    result = run("render", "--out", "other/")
    assert result.exit_code == 0
    # the site names gitops.path out/<site>: its Applications still apply that folder
    assert f"warning[NVC379]: the GitOps objects apply out/{SITE}" in result.output
    assert last_line(result) == f"nvcregen: 1 warning; wrote other/{SITE}/"
    assert not (project / "out").exists()
    assert files(project / "other" / SITE) == files(COMMITTED)

    assert run("render", "--check", "--out", "other/").exit_code == 0
    assert run("render", "--check").exit_code == 1  # out/ was never written

    (project / "other" / SITE / CERT).write_text("edited: true\n")
    result = run("render", "--check", "--out", "other/")
    assert result.exit_code == 1
    assert f"other/{SITE}/{CERT}: changed" in result.output


def test_render_refuses_a_folder_with_a_hand_added_file(project: Path) -> None:
    (project / "sites" / "l20-pool.yaml").write_text((ROOT / "sites" / "l20-pool.yaml").read_text())
    assert run("render", f"sites/{SITE}.yaml").exit_code == 0
    site_dir = project / "out" / SITE
    (site_dir / "NOTES.md").write_text("my notes\n")
    # An edit render would normally overwrite: it must survive the refusal.
    (site_dir / CERT).write_text("edited: true\n")
    before = files(project)

    result = run("render")

    assert result.exit_code == 2
    assert first_line(result) == (
        f"out/{SITE}/NOTES.md:1:1: error[NVC502]: "
        "this file was not written by nvcregen; refusing to replace the folder"
    )
    assert last_line(result).endswith("; nothing written to out/")
    assert files(project) == before
    assert not (project / "out" / "l20-pool").exists()


def test_render_refuses_two_sites_with_one_name(project: Path) -> None:
    shutil.copyfile(SITE_FILE, project / "sites" / "h20-copy.yaml")
    for command in (["validate"], ["render"]):
        result = run(*command)
        assert result.exit_code == 2
        assert first_error(result) == (
            f"sites/h20-copy.yaml:8:9: error[NVC503]: "
            f"site name '{SITE}' is also used by sites/{SITE}.yaml"
        )
        assert "   = at /metadata/name\n" in result.output
    assert not (project / "out").exists()


@pytest.mark.parametrize("sites_folder", [True, False], ids=["empty-sites", "no-sites-folder"])
def test_no_sites(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sites_folder: bool) -> None:
    if sites_folder:
        (tmp_path / "sites").mkdir()
    monkeypatch.chdir(tmp_path)
    for command in (["validate"], ["render"], ["render", "--check"]):
        result = run(*command)
        assert result.exit_code == 2
        assert first_line(result) == "sites/:1:1: error[NVC100]: no site files found"
    assert sorted(p.name for p in tmp_path.iterdir()) == (["sites"] if sites_folder else [])


# the schema and the committed sites


def test_schema_drift() -> None:
    result = run("schema")
    assert result.exit_code == 0
    committed = (ROOT / "schemas" / "site.v1alpha1.json").read_text()
    assert json.loads(result.output) == json.loads(committed), (
        f"schemas/site.v1alpha1.json is out of date; refresh it with `{REFRESH_SCHEMA}`"
    )
    assert result.output == committed, f"formatting differs; refresh with `{REFRESH_SCHEMA}`"


@pytest.mark.parametrize("site", sorted(p.name for p in (ROOT / "sites").glob("*.y*ml")))
def test_every_site_names_the_schema(site: str) -> None:
    first = (ROOT / "sites" / site).read_text().splitlines()[0]
    prefix = "# yaml-language-server: $schema="
    assert first.startswith(prefix)
    target = (ROOT / "sites" / first.removeprefix(prefix).strip()).resolve()
    assert target == (ROOT / "schemas" / "site.v1alpha1.json").resolve()


def test_render_out_names_the_folder_gitops_applies(project: Path) -> None:
    """Issue 12: `--out DIR` left every GitOps path at out/<site>."""
    shutil.copyfile(ROOT / "sites" / "l20-pool.yaml", project / "sites" / "l20-pool.yaml")
    result = run("render", "sites/l20-pool.yaml", "--out", "deploy/out")
    assert result.exit_code == 0, result.output
    gitops = project / "deploy" / "out" / "l20-pool" / "gitops"
    # Flux reads the site folder through its artifact: the ArtifactGenerator names it
    generator = (gitops / "artifactgenerator-l20-pool.yaml").read_text()
    assert 'from: "@repo/deploy/out/l20-pool/**"' in generator


def test_render_out_outside_the_project_previews_with_a_warning(
    project: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Issue 19: `--out /tmp/x` was refused (NVC379) for a site without `gitops.path`."""
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    shutil.copyfile(ROOT / "sites" / "l20-pool.yaml", project / "sites" / "l20-pool.yaml")
    result = run("render", "sites/l20-pool.yaml", "--out", str(elsewhere))
    assert result.exit_code == 0, result.output
    assert "error[" not in result.output
    assert (
        "sites/l20-pool.yaml:74:5: warning[NVC379]: the output folder is outside the project, "
        "so this render is a preview: the GitOps objects in it still point at out/l20-pool, "
        "the folder the site is committed at (render's default; no gitops.path)"
    ) in result.output
    assert last_line(result) == f"nvcregen: 1 warning; wrote {elsewhere}/l20-pool/"
    # the preview is what `render` commits: its GitOps objects apply out/l20-pool
    assert files(elsewhere / "l20-pool") == files(ROOT / "out" / "l20-pool")
    assert not (project / "out").exists()
    # and it is fresh for `render --check` of the same folder
    assert run("render", "--check", "sites/l20-pool.yaml", "--out", str(elsewhere)).exit_code == 0


@pytest.mark.slow
def test_render_out_outside_the_project_previews_every_shipped_site(
    project: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Every shipped site previews into a folder outside the project with exit 0."""
    for site in (ROOT / "sites").glob("*.yaml"):
        shutil.copyfile(site, project / "sites" / site.name)
    elsewhere = tmp_path_factory.mktemp("x")
    result = run("render", "--out", str(elsewhere))
    assert result.exit_code == 0, result.output
    names = sorted(p.stem for p in (ROOT / "sites").glob("*.yaml"))
    assert len(names) >= 3
    for name in names:
        assert files(elsewhere / name) == files(ROOT / "out" / name)
        # the site names gitops.path, or is committed at out/<site>: the warning says which
        assert f"still point at out/{name}, the folder the site is committed at (" in result.output
    assert "error[" not in result.output
    assert result.output.count("warning[NVC379]") == len(names)


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["text", "json"])
def test_check_as_a_process_prints_everything_and_exits_with_its_code(
    project: Path, fmt: str
) -> None:
    """`check` run as the command ends without tearing down its heap: nothing may be lost."""
    assert run("render").exit_code == 0
    edited = project / "out" / SITE / CERT
    text = edited.read_text()
    assert "gpusPerNode: 8" in text
    edited.write_text(text.replace("gpusPerNode: 8", "gpusPerNode: 9"))
    done = subprocess.run(
        [sys.executable, "-m", "nvcregen", "check", "out", "--format", fmt],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert done.returncode == 1
    if fmt == "json":
        # 9 GPUs per node: a count above the pool's (NVC631), so no node can take it (NVC670)
        assert {d["code"] for d in json.loads(done.stdout)} == {"NVC631", "NVC670"}
    else:
        assert "error[NVC631]" in done.stderr
        assert done.stderr.endswith("checked out/\n")


@pytest.mark.slow
def test_render_and_plan_as_processes_flush_everything_before_they_exit(project: Path) -> None:
    """`render` and `plan` run as the command exit without freeing the heap (`exit_now`).

    Into pipes, their output is buffered: all of it must still arrive, with the code.
    """
    done = _process("render")
    assert done.returncode == 0, done.stderr
    assert done.stderr.endswith(f"wrote out/{SITE}/\n")
    assert files(project / "out" / SITE) == files(COMMITTED)
    planned = _process("plan", f"sites/{SITE}.yaml", "--format", "json")
    assert planned.returncode == 0, planned.stderr
    # All of it sits in the pipe's buffer until the exit flushes it.
    in_process = run("plan", f"sites/{SITE}.yaml", "--format", "json")
    assert json.loads(planned.stdout) == json.loads(in_process.output)
    site = project / "sites" / f"{SITE}.yaml"
    site.write_text(site.read_text().replace("kind: Site", "kind: Sight", 1))
    broken = _process("plan", f"sites/{SITE}.yaml")
    assert broken.returncode == 2, broken.stderr
    assert "error[" in broken.stderr


def _process(*args: str) -> subprocess.CompletedProcess[str]:
    """`nvcregen ARGS` as a process of its own, in the current directory, output piped."""
    return subprocess.run(
        [sys.executable, "-m", "nvcregen", *args],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )


def test_render_out_elsewhere_in_the_project_warns_that_gitops_path_still_names_out(
    project: Path,
) -> None:
    """h20-3e-lab names `gitops.path: out/h20-3e-lab`; rendering to build/ leaves it stale."""
    result = run("render", f"sites/{SITE}.yaml", "--out", "build/gitops")
    assert result.exit_code == 0, result.output
    assert "warning[NVC379]: the GitOps objects apply out/h20-3e-lab" in result.output
    assert "but this render writes build/gitops/h20-3e-lab" in result.output
    same = run("render", f"sites/{SITE}.yaml", "--out", "out")
    assert same.exit_code == 0 and "NVC379" not in same.output


def test_only_a_render_warns_that_gitops_path_names_another_folder(project: Path) -> None:
    """validate (and plan, diff) write nothing: a gitops.path of their own is no concern."""
    site = project / "sites" / f"{SITE}.yaml"
    site.write_text(site.read_text().replace(f"path: out/{SITE}", f"path: gitops/{SITE}"))
    assert "NVC379" not in run("validate").output
    assert "warning[NVC379]: the GitOps objects apply gitops/h20-3e-lab" in run("render").output


def test_an_out_folder_that_links_elsewhere_is_still_out_in_the_repository(
    project: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    shutil.copyfile(ROOT / "sites" / "l20-pool.yaml", project / "sites" / "l20-pool.yaml")
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    (project / "out").symlink_to(elsewhere, target_is_directory=True)
    result = run("render", "sites/l20-pool.yaml")
    assert result.exit_code == 0, result.output
    generator = elsewhere / "l20-pool" / "gitops" / "artifactgenerator-l20-pool.yaml"
    assert 'from: "@repo/out/l20-pool/**"' in generator.read_text()


def test_check_replays_a_tree_rendered_elsewhere_in_the_project_with_its_own_paths(
    project: Path,
) -> None:
    """Flux objects of `render --out deploy/out` read deploy/out/<site>: check follows them."""
    shutil.copyfile(ROOT / "sites" / "l20-pool.yaml", project / "sites" / "l20-pool.yaml")
    assert run("render", "sites/l20-pool.yaml", "--out", "deploy/out").exit_code == 0
    assert run("check", "deploy/out").exit_code == 0
    pairs = project / "deploy/out/l20-pool/gitops/kustomization-l20-pool-readiness-02-pairs.yaml"
    text = pairs.read_text()
    assert "  dependsOn:\n    - name: l20-pool-readiness-01-single-node\n" in text
    pairs.write_text(
        text.replace("  dependsOn:\n    - name: l20-pool-readiness-01-single-node\n", "")
    )
    result = run("check", "deploy/out")
    assert result.exit_code == 1
    assert "error[NVC672]" in result.output  # the pairs may run with the single-node tests


def test_a_project_in_a_subfolder_of_its_repository_names_paths_from_the_top(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """GitOps reads paths from the repository's top: `platform/gpu/out/<site>`."""
    project = tmp_path / "platform" / "gpu"
    (project / "sites").mkdir(parents=True)
    shutil.copyfile(ROOT / "sites" / "l20-pool.yaml", project / "sites" / "l20-pool.yaml")
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    monkeypatch.chdir(project)
    assert run("render").exit_code == 0
    generator = project / "out/l20-pool/gitops/artifactgenerator-l20-pool.yaml"
    assert 'from: "@repo/platform/gpu/out/l20-pool/**"' in generator.read_text()
    assert run("render", "--check").exit_code == 0  # the cache key holds the folder
    assert run("check", "out").exit_code == 0  # and check replays with the same paths
