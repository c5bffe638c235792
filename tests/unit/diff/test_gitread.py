"""Reading a revision's sites from Git: plumbing only, working tree untouched."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from nvcregen.diff.gitsites import GitError, export_sites, list_sites, read_blobs

SITE = b"kind: Site\nspec:\n  nvcre:\n    chart:\n      archive: charts/nvcre.tgz\n"


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project in `proj/` of a repository, committed once, then edited in place."""
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(tmp_path / "no-gitconfig"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    project = tmp_path / "repo" / "proj"
    (project / "sites" / "nested").mkdir(parents=True)
    (project / "charts").mkdir()
    (project / "sites" / "a.yaml").write_bytes(SITE)
    (project / "sites" / "b.yml").write_bytes(b"kind: Site\n")
    (project / "sites" / "notes.md").write_bytes(b"not a site\n")
    (project / "sites" / "nested" / "c.yaml").write_bytes(b"kind: Site\n")
    (project / "sites" / "link.yaml").symlink_to("a.yaml")
    (project / "charts" / "nvcre.tgz").write_bytes(b"\x1f\x8b chart bytes\n")
    git(tmp_path / "repo", "init", "-q")
    git(tmp_path / "repo", "add", ".")
    git(tmp_path / "repo", "commit", "-qm", "one")
    (project / "sites" / "a.yaml").write_bytes(b"edited, not committed\n")
    (project / "charts" / "nvcre.tgz").unlink()
    return project


def test_list_sites_takes_files_directly_under_sites(project: Path) -> None:
    assert sorted(list_sites(project, "HEAD")) == ["sites/a.yaml", "sites/b.yml"]


def test_export_writes_the_committed_sites_and_their_charts(project: Path, tmp_path: Path) -> None:
    target = tmp_path / "export"
    commit = export_sites(project, "HEAD", target)
    assert commit == git(project, "rev-parse", "HEAD").strip()
    assert (target / "sites" / "a.yaml").read_bytes() == SITE  # not the working-tree edit
    assert (target / "charts" / "nvcre.tgz").read_bytes() == b"\x1f\x8b chart bytes\n"
    assert not (project / "charts" / "nvcre.tgz").exists()  # the working tree is untouched
    status = sorted(git(project, "status", "--porcelain").splitlines())
    assert status == [" D proj/charts/nvcre.tgz", " M proj/sites/a.yaml"]


def test_read_blobs_marks_missing_objects(project: Path) -> None:
    assert read_blobs(project, ["HEAD:proj/sites/b.yml", "HEAD:proj/nope"]) == [
        b"kind: Site\n",
        None,
    ]


@pytest.mark.parametrize("ref", ["no-such-ref", "--output=x"])
def test_a_bad_revision_is_a_git_error(project: Path, ref: str) -> None:
    with pytest.raises(GitError, match="not"):
        export_sites(project, ref, project.parent / "export")
