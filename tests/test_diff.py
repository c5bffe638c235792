"""`nvcregen diff` end to end, in a scratch Git repository holding a copy of `sites/`."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest
from chartfactory import package, platform_text
from click.testing import CliRunner, Result

from nvcregen.catalog.load import Catalog
from nvcregen.cli import main
from nvcregen.compile.platform.helm import archive_sha256, select_renderer
from nvcregen.fabric.inventory import Inventory
from nvcregen.plan.model import TestUnit
from nvcregen.plan.resolve import plan as resolve_plan
from nvcregen.spec.v1alpha1 import Site

pytestmark = pytest.mark.slow  # Git repositories and nvcregen processes: seconds each

ROOT = Path(__file__).resolve().parent.parent
H20 = "sites/h20-3e-lab.yaml"
L20 = "sites/l20-pool.yaml"
# The H20 site runs 3 rounds; 5 rounds needs a longer window to stay within budget.
EDITS = {
    "rounds: 3": "rounds: 5",
    "deadline: 16h, gpuHours: 260": "deadline: 30h, gpuHours: 450",
    'busbw: ">= 420 GB/s"': 'busbw: ">= 440 GB/s"',
}


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def edit(file: Path, replacements: dict[str, str]) -> None:
    text = file.read_text()
    for old, new in replacements.items():
        assert old in text, old
        text = text.replace(old, new)
    file.write_text(text)


def snapshot(repo: Path) -> dict[str, tuple[bytes, int]]:
    """Every file outside .git (bytes, mtime) plus the Git index's mtime."""
    files = {
        p.relative_to(repo).as_posix(): (p.read_bytes(), p.stat().st_mtime_ns)
        for p in sorted(repo.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(repo).parts
    }
    index = repo / ".git" / "index"
    files[".git/index"] = (b"", index.stat().st_mtime_ns)
    return files


@pytest.fixture
def git_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Git with no user or system configuration (hooks, signing, templates)."""
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(tmp_path / "no-gitconfig"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, git_env: None) -> Path:
    """A repository with two example sites committed, then one commit editing H20."""
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "sites").mkdir()
    for site in (H20, L20):
        shutil.copyfile(ROOT / site, repo / site)
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "sites")
    edit(repo / H20, EDITS)
    git(repo, "commit", "-qam", "five rounds, a higher intra-node bar")
    monkeypatch.chdir(repo)
    return repo


def run(*args: str) -> Result:
    result = CliRunner().invoke(main, ["diff", *args], catch_exceptions=False)
    assert "Traceback" not in result.output
    return result


def test_markdown_names_the_site_and_shows_old_to_new(repo: Path) -> None:
    before = snapshot(repo)
    result = run("--base", "HEAD~1", "--format", "markdown")
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert out.startswith("## nvcregen diff: `HEAD~1` → working tree\n")
    assert "### `h20-3e-lab`: changed" in out
    assert "| **rounds** | **3 → 5** |" in out
    assert (
        "| **worst-case GPU-hours** | **251.2 (125.6 + 1 retest); budget 260 → "
        "418.7 (209.3 + 1 retest); budget 450** |"
    ) in out
    # the replay's worst case is the budget's: every job to its timeout and the retest
    assert "| **worst-case wall time** | **15h42m (7h51m + 1 retest); deadline 16h → " in out
    assert "| **plan wall time (replayed)** | **3h51m30s, worst case 15h42m (7h51m + 1 retest)" in (
        out
    )
    assert "`busbw >= 420 GB/s` → `busbw >= 440 GB/s`" in out
    assert "| `/spec/repeatCount` | `3` | `5` |" in out
    assert "### `l20-pool`: unchanged" in out
    assert out.count("<details><summary>") == out.count("</details>") == 1
    assert snapshot(repo) == before  # nothing written, not even the Git index
    assert git(repo, "status", "--porcelain") == ""


def test_immutable_objects_are_listed_as_recreated(repo: Path) -> None:
    out = run("--base", "HEAD~1", "--format", "markdown").stdout
    section = out.split("**Recreated**", 1)[1].split("<details>", 1)[0]
    rows = re.findall(r"^\| (Certification|WorkloadRun) \| `(\S+)` \| `(\S+)` \|$", section, re.M)
    assert ("Certification", "h20-3e-lab-single-node") in {(k, o[:-9]) for k, o, _ in rows}
    assert all(old != new and old[:-8] == new[:-8] for _, old, new in rows)
    committed = {p.name for p in (ROOT / "out" / "h20-3e-lab" / "readiness").rglob("*.yaml")}
    assert f"certification-{rows[0][1]}.yaml" in committed


def test_json_structure(repo: Path) -> None:
    result = run("--base", "HEAD~1", "--format", "json")
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    assert data["base"]["ref"] == "HEAD~1"
    assert re.fullmatch(r"[0-9a-f]{40}", data["base"]["commit"])
    assert data["counts"] == {"changed": 1, "added": 0, "removed": 0, "invalid": 0, "unchanged": 1}
    h20 = next(s for s in data["sites"] if s["site"] == "h20-3e-lab")
    assert h20["files"] == {"base": H20, "head": H20}
    facts = {f["label"]: (f["old"], f["new"]) for f in h20["summary"]["facts"]}
    assert facts["rounds"] == ("3", "5")
    assert facts["GPUs under test"] == ("16", "16")
    assert h20["summary"]["thresholds"] == [
        {
            "threshold": "nccl-all-reduce (intra-node, at 1GiB)",
            "old": "busbw >= 420 GB/s",
            "new": "busbw >= 440 GB/s",
        }
    ]
    cert = next(c for c in h20["objects"]["changed"] if c["newName"].startswith("h20-3e-lab-sin"))
    assert cert["recreated"] is True
    assert {"path": "/spec/repeatCount", "change": "changed", "old": 3, "new": 5} in cert["fields"]
    assert {r["newName"] for r in h20["summary"]["recreated"]} >= {cert["newName"]}


def test_each_side_plans_each_site_once(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The facts come from the Plan the side compiled from (`CompileResult.plan`): the site
    is not loaded and planned again for them (it was, once per side, until the review)."""
    planned: list[str] = []

    def counted(site: Site, catalog: Catalog, inventory: Inventory | None) -> list[TestUnit]:
        planned.append(site.metadata.name)
        return resolve_plan(site, catalog, inventory)

    monkeypatch.setattr("nvcregen.validate.site.plan", counted)
    data = json.loads(run("--base", "HEAD~1", "--format", "json").stdout)
    assert data["counts"] == {"changed": 1, "added": 0, "removed": 0, "invalid": 0, "unchanged": 1}
    assert Counter(planned) == {"h20-3e-lab": 2, "l20-pool": 2}  # one a side


def test_default_base_is_head_and_reports_sites_added_and_removed(repo: Path) -> None:
    shutil.copyfile(repo / L20, repo / "sites" / "l20-two.yaml")
    # a cluster of its own: two sites on one cluster would collide (NVC690)
    edit(repo / "sites" / "l20-two.yaml", {"name: l20-pool": "name: l20-two"})
    edit(repo / "sites" / "l20-two.yaml", {"cluster: l20-prod-b": "cluster: l20-prod-c"})
    (repo / H20).unlink()
    data = json.loads(run("--format", "json").stdout)
    status = {s["site"]: s["status"] for s in data["sites"]}
    assert status == {"h20-3e-lab": "removed", "l20-pool": "unchanged", "l20-two": "added"}
    added = next(s for s in data["sites"] if s["site"] == "l20-two")
    assert added["objects"]["added"] and not added["objects"]["removed"]
    removed = next(s for s in data["sites"] if s["site"] == "h20-3e-lab")
    assert {f["label"]: f["new"] for f in removed["summary"]["facts"]}["rounds"] is None
    text = run().stdout
    assert "h20-3e-lab: removed (sites/h20-3e-lab.yaml)" in text
    assert "l20-two: added (sites/l20-two.yaml)" in text


def test_a_site_that_no_longer_compiles_is_reported(repo: Path) -> None:
    edit(repo / L20, {"kind: Site": "kind: Sight"})
    result = run("--format", "text")
    assert result.exit_code == 2  # invalid input, as every command says it (issue 12)
    assert "l20-pool: invalid (sites/l20-pool.yaml)" in result.stdout
    assert "  does not compile at the working tree:\n    sites/l20-pool.yaml:" in result.stdout


def test_an_unknown_revision_is_an_error(repo: Path) -> None:
    result = run("--base", "no-such-branch")
    assert result.exit_code == 2
    assert "nvcregen: 'no-such-branch' does not name a commit here" in result.output


def test_outside_a_repository_is_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "sites").mkdir()
    monkeypatch.chdir(tmp_path)
    result = run()
    assert result.exit_code == 2
    assert "cannot read the base from Git" in result.output


@pytest.mark.skipif(select_renderer() is None, reason="no Helm renderer (SDK or binary)")
def test_the_base_renders_its_chart_archive_from_git(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, git_env: None
) -> None:
    repo = tmp_path / "repo"
    (repo / "charts").mkdir(parents=True)
    (repo / "sites").mkdir()
    archive = package(repo / "charts")
    pin = f"chart: {{archive: charts/{archive.name}, sha256: {archive_sha256(archive)}}}\n"
    (repo / "sites" / "lab.yaml").write_text(platform_text(nvcre=pin))
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "a site rendering its chart")
    archive.unlink()  # only Git still has it
    monkeypatch.chdir(repo)
    result = run("--format", "json")
    assert result.exit_code == 2
    (site,) = json.loads(result.stdout)["sites"]
    assert site["status"] == "invalid"
    assert list(site["errors"]) == ["head"]  # the base compiled, with Git's copy of the chart
    assert "NVC402" in site["errors"]["head"][0]
    assert not archive.exists()
