"""Reading a revision from Git (`nvcregen.gitrev`): plumbing only, working tree untouched.

`check --base` reads earlier generated files with `old_objects`, `nvcregen diff` a
revision's sites with `export_sites`; both fail the same way, with the same errors.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from nvcregen.gitrev import (
    GitError,
    GitMissingError,
    NotARepositoryError,
    UnknownRevisionError,
    export_sites,
    in_repository,
    list_sites,
    old_objects,
    read_blobs,
    repository_prefix,
)

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


def test_old_objects_reads_the_committed_versions_relative_to_the_project(project: Path) -> None:
    (project.parent / "top.yaml").write_bytes(b"kind: Top\n")
    git(project.parent, "add", "top.yaml")
    git(project.parent, "commit", "-qm", "two")
    paths = ["sites/a.yaml", "sites/b.yml", "../top.yaml", "sites/notes.md", "sites/nope.yaml"]
    found = old_objects(project, "HEAD", [*paths, "../../outside.yaml", "/etc/hostname"])
    assert found == {
        "sites/a.yaml": {
            "kind": "Site",
            "spec": {"nvcre": {"chart": {"archive": "charts/nvcre.tgz"}}},
        },
        "sites/b.yml": {"kind": "Site"},
        "../top.yaml": {"kind": "Top"},
        "sites/notes.md": "not a site",
    }  # not the working-tree edit of a.yaml; nothing missing, outside the repository


def test_a_folder_name_that_is_not_ascii_round_trips(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(tmp_path / "no-gitconfig"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    project = tmp_path / "repo" / "prøj ect"
    (project / "sites").mkdir(parents=True)
    (project / "sites" / "ä.yaml").write_bytes(b"kind: Site\n")
    git(tmp_path / "repo", "init", "-q")
    git(tmp_path / "repo", "add", ".")
    git(tmp_path / "repo", "commit", "-qm", "one")
    assert old_objects(project, "HEAD", ["sites/ä.yaml"]) == {"sites/ä.yaml": {"kind": "Site"}}
    export_sites(project, "HEAD", tmp_path / "export")
    assert (tmp_path / "export" / "sites" / "ä.yaml").read_bytes() == b"kind: Site\n"


Reader = Callable[[Path, str], Any]
READERS: dict[str, Reader] = {
    "check --base": lambda root, ref: old_objects(root, ref, ["sites/a.yaml"]),
    "diff": lambda root, ref: export_sites(root, ref, root.parent / "export"),
}


@pytest.fixture(params=sorted(READERS))
def read(request: pytest.FixtureRequest) -> Reader:
    return READERS[request.param]


def test_a_folder_outside_any_repository(
    read: Reader, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    with pytest.raises(
        NotARepositoryError, match=r"^cannot read the base from Git: fatal: not a git"
    ):
        read(tmp_path, "HEAD")
    with pytest.raises(NotARepositoryError, match="no folder"):
        read(tmp_path / "gone", "HEAD")


@pytest.mark.parametrize(
    ("ref", "message"),
    [
        ("no-such-ref", "^'no-such-ref' does not name a commit here: fatal: "),
        ("HEAD:sites", "does not name a commit here"),
        ("--output=x", "^'--output=x' is not a revision$"),
        ("", "^'' is not a revision$"),
    ],
)
def test_a_revision_that_names_no_commit(
    read: Reader, project: Path, ref: str, message: str
) -> None:
    with pytest.raises(UnknownRevisionError, match=message):
        read(project, ref)
    assert not (project.parent / "x").exists()


def test_git_missing(read: Reader, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(project / "sites"))  # no git there
    with pytest.raises(GitMissingError, match=r"^git is not installed"):
        read(project, "HEAD")


def test_every_error_is_a_git_error() -> None:
    for error in (GitMissingError, NotARepositoryError, UnknownRevisionError):
        assert issubclass(error, GitError)


def test_a_project_folder_is_named_from_the_top_of_its_repository(tmp_path: Path) -> None:
    project = tmp_path / "platform" / "gpu"
    project.mkdir(parents=True)
    assert repository_prefix(project) == ""  # not in Git: the project's own paths
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    assert repository_prefix(project) == "platform/gpu/"
    assert repository_prefix(tmp_path) == ""
    assert in_repository("platform/gpu/", "out") == "platform/gpu/out"
    assert in_repository("platform/gpu/", ".") == "platform/gpu"
    assert in_repository("platform/gpu/", "") == "platform/gpu"
    assert in_repository("", ".") == "."
    assert in_repository("", "deploy/out") == "deploy/out"
