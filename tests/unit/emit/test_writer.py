"""The writer: the only code that touches `out/`, per site and atomically."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from nvcregen.core.errors import Severity
from nvcregen.emit import writer
from nvcregen.emit.naming import INDEX_FILE
from nvcregen.emit.tree import Tree
from nvcregen.emit.writer import check_ownership, diff_tree, read_tree, write_tree

SITE = "lab"
OUT = Path("out")  # relative: every test runs inside its own tmp_path (see `work`)
LONG_AGO = 1_000_000_000  # seconds since the epoch: mtimes set here show any later write

Snapshot = dict[str, tuple[bytes | None, int]]


def make_tree(files: dict[str, str]) -> Tree:
    """A tree as the compiler makes it: the files plus an index.json listing them."""
    index = {"site": SITE, "files": {path: {"kind": "Test"} for path in files}}
    return {**files, INDEX_FILE: json.dumps(index, indent=2, sort_keys=True) + "\n"}


OLD = make_tree(
    {
        "readiness/a.yaml": "a: 1\n",
        "readiness/b.yaml": "b: 1\n",
        "extra/c.yaml": "c: 1\n",
    }
)
NEW = make_tree(
    {
        "readiness/a.yaml": "a: 2\n",
        "readiness/d.yaml": "d: 1\n",
    }
)


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def snapshot(folder: Path) -> Snapshot:
    """Every file and folder under `folder` with its bytes (None for folders) and mtime."""
    found: Snapshot = {}
    for path in sorted(folder.rglob("*")):
        data = path.read_bytes() if path.is_file() else None
        found[path.relative_to(folder).as_posix()] = (data, path.stat().st_mtime_ns)
    return found


def age(folder: Path) -> None:
    """Set every mtime under `folder` far in the past, so any rewrite shows."""
    for path in [folder, *folder.rglob("*")]:
        os.utime(path, (LONG_AGO, LONG_AGO))


def on_disk(site_dir: Path) -> dict[str, bytes]:
    return {
        p.relative_to(site_dir).as_posix(): p.read_bytes()
        for p in sorted(site_dir.rglob("*"))
        if p.is_file()
    }


def encoded(tree: Tree) -> dict[str, bytes]:
    return {path: text.encode() for path, text in tree.items()}


def entries(out: Path) -> list[str]:
    """The names directly inside `out/`: shows leftovers of a swap."""
    return sorted(p.name for p in out.iterdir())


# write_tree


def test_write_creates_the_site_folder_with_exactly_the_tree(work: Path) -> None:
    assert write_tree(OUT, SITE, OLD) is True
    assert on_disk(work / "out" / SITE) == encoded(OLD)
    assert entries(work / "out") == [SITE]
    folders = sorted(
        p.relative_to(work / "out" / SITE).as_posix()
        for p in (work / "out" / SITE).rglob("*")
        if p.is_dir()
    )
    assert folders == ["extra", "readiness"]


def test_write_keeps_bytes_exact(work: Path) -> None:
    tree = make_tree({"readiness/u.yaml": "name: \u00e9t\u00e9 \u2014 ok\nlast: x\n"})
    write_tree(OUT, SITE, tree)
    raw = (work / "out" / SITE / "readiness" / "u.yaml").read_bytes()
    assert raw == tree["readiness/u.yaml"].encode("utf-8")
    assert b"\r" not in raw


def test_second_identical_write_changes_nothing(work: Path) -> None:
    assert write_tree(OUT, SITE, OLD) is True
    age(work / "out")
    before = snapshot(work / "out")
    inode = (work / "out" / SITE).stat().st_ino
    assert write_tree(OUT, SITE, dict(OLD)) is False
    assert snapshot(work / "out") == before
    assert (work / "out" / SITE).stat().st_ino == inode


def test_replacement_removes_files_no_longer_in_the_tree(work: Path) -> None:
    write_tree(OUT, SITE, OLD)
    assert write_tree(OUT, SITE, NEW) is True
    site_dir = work / "out" / SITE
    assert on_disk(site_dir) == encoded(NEW)
    assert not (site_dir / "readiness" / "b.yaml").exists()
    assert not (site_dir / "extra").exists()
    assert entries(work / "out") == [SITE]


def test_replacement_only_after_ownership_is_checked(work: Path) -> None:
    """Files nvcregen did not write block the replacement that would delete them."""
    write_tree(OUT, SITE, OLD)
    (work / "out" / SITE / "readiness" / "mine.yaml").write_text("kept: true\n")
    assert [d.code for d in check_ownership(OUT, SITE, NEW)] == ["NVC502"]
    # Files the index lists are the writer's to remove: no complaint about b.yaml or c.yaml.
    (work / "out" / SITE / "readiness" / "mine.yaml").unlink()
    assert check_ownership(OUT, SITE, NEW) == []


def test_files_outside_the_site_folder_are_never_touched(work: Path) -> None:
    out = work / "out"
    (out / "other-site" / "readiness").mkdir(parents=True)
    (out / "README.md").write_text("# rendered by nvcregen\n")
    (out / "other-site" / INDEX_FILE).write_text('{"files": {}}\n')
    (out / "other-site" / "readiness" / "x.yaml").write_text("x: 1\n")
    (out / "labx").mkdir()  # a name that shares the site's prefix
    (out / "labx" / "y.yaml").write_text("y: 1\n")
    age(out)
    outside = snapshot(out)

    write_tree(OUT, SITE, OLD)
    write_tree(OUT, SITE, NEW)
    write_tree(OUT, SITE, NEW)

    after = snapshot(out)
    assert {k: v for k, v in after.items() if k.split("/")[0] != SITE} == outside
    assert entries(out) == sorted(["README.md", "other-site", "labx", SITE])


# leftovers and crashes


def _leftover(out: Path, suffix: str, files: dict[str, str]) -> None:
    folder = out / f".nvcregen-{SITE}.{suffix}"
    for path, text in files.items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_text(text)


def test_leftovers_of_a_crash_while_writing_are_cleaned(work: Path) -> None:
    write_tree(OUT, SITE, OLD)
    _leftover(work / "out", "new", {"readiness/a.yaml": "a: 2\n", "stray.yaml": "half"})
    assert write_tree(OUT, SITE, NEW) is True
    assert on_disk(work / "out" / SITE) == encoded(NEW)
    assert entries(work / "out") == [SITE]


def test_leftovers_of_a_crash_between_renames_are_cleaned(work: Path) -> None:
    """The old tree was moved aside, the new one not yet moved in."""
    _leftover(work / "out", "old", OLD)
    _leftover(work / "out", "new", {**NEW, "stray.yaml": "half"})
    assert write_tree(OUT, SITE, NEW) is True
    assert on_disk(work / "out" / SITE) == encoded(NEW)
    assert entries(work / "out") == [SITE]


def test_leftovers_are_cleaned_when_the_tree_is_unchanged(work: Path) -> None:
    write_tree(OUT, SITE, NEW)
    _leftover(work / "out", "new", {"readiness/a.yaml": "half"})
    _leftover(work / "out", "old", OLD)
    assert write_tree(OUT, SITE, NEW) is False
    assert on_disk(work / "out" / SITE) == encoded(NEW)
    assert entries(work / "out") == [SITE]


def _crash_after(count: int) -> Callable[[Path, str], None]:
    real = writer._write_file
    written: list[Path] = []

    def write_file(file: Path, text: str) -> None:
        if len(written) == count:
            raise OSError(28, "No space left on device")
        real(file, text)
        written.append(file)

    return write_file


@pytest.mark.parametrize("count", range(len(NEW) + 1))
def test_a_full_disk_while_writing_leaves_the_old_tree_intact(
    work: Path, monkeypatch: pytest.MonkeyPatch, count: int
) -> None:
    """ENOSPC is a user error (NVC505), the old tree is untouched and nothing is left."""
    write_tree(OUT, SITE, OLD)
    (work / "out" / "README.md").write_text("hand-written\n")
    age(work / "out")
    before = snapshot(work / "out" / SITE)

    with monkeypatch.context() as patch:
        patch.setattr(writer, "_write_file", _crash_after(count))
        with pytest.raises(writer.WriteError) as raised:
            write_tree(OUT, SITE, NEW)

    [diag] = raised.value.diagnostics
    assert (diag.code, diag.span.file) == ("NVC505", "out/lab")
    assert "No space left on device" in diag.message and diag.hint
    assert snapshot(work / "out" / SITE) == before
    assert read_tree(work / "out" / SITE) == OLD
    assert (work / "out" / "README.md").read_text() == "hand-written\n"
    assert entries(work / "out") == ["README.md", SITE]  # no staging folder, no lock file

    assert write_tree(OUT, SITE, NEW) is True
    assert on_disk(work / "out" / SITE) == encoded(NEW)
    assert entries(work / "out") == ["README.md", SITE]


def test_a_full_disk_before_the_first_write_leaves_no_site_folder(
    work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(writer, "_write_file", _crash_after(1))
    with pytest.raises(writer.WriteError, match="no space left"):
        write_tree(OUT, SITE, NEW)
    assert entries(work / "out") == []
    assert diff_tree(OUT, SITE, NEW)


# check_ownership


def test_ownership_of_a_missing_or_own_folder(work: Path) -> None:
    assert check_ownership(OUT, SITE, OLD) == []
    write_tree(OUT, SITE, OLD)
    assert check_ownership(OUT, SITE, NEW) == []
    assert check_ownership(OUT, SITE, OLD) == []


def test_ownership_refuses_a_file_the_index_does_not_list(work: Path) -> None:
    write_tree(OUT, SITE, OLD)
    site_dir = work / "out" / SITE
    (site_dir / "NOTES.md").write_text("mine\n")
    (site_dir / "readiness" / "kustomization.yaml").write_text("resources: []\n")
    (site_dir / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\xff\xfe")
    before = snapshot(site_dir)

    diags = check_ownership(OUT, SITE, NEW)

    assert [(d.code, d.severity, d.span.file) for d in diags] == [
        ("NVC502", Severity.ERROR, "out/lab/NOTES.md"),
        ("NVC502", Severity.ERROR, "out/lab/logo.png"),
        ("NVC502", Severity.ERROR, "out/lab/readiness/kustomization.yaml"),
    ]
    assert all("not written by nvcregen" in d.message and d.hint for d in diags)
    assert snapshot(site_dir) == before


@pytest.mark.parametrize(
    "index",
    [None, "not json {", '["a list"]', '{"files": ["readiness/a.yaml"]}'],
    ids=["no-index", "broken-json", "not-an-object", "files-not-a-mapping"],
)
def test_ownership_refuses_a_folder_without_a_usable_index(work: Path, index: str | None) -> None:
    site_dir = work / "out" / SITE
    (site_dir / "readiness").mkdir(parents=True)
    (site_dir / "readiness" / "a.yaml").write_text("a: 1\n")
    if index is not None:
        (site_dir / INDEX_FILE).write_text(index)
    files = [d.span.file for d in check_ownership(OUT, SITE, NEW)]
    expected = ["out/lab/readiness/a.yaml"]
    if index is not None:
        expected.insert(0, "out/lab/index.json")
    assert files == expected


def test_ownership_ignores_other_folders(work: Path) -> None:
    (work / "out" / "other-site").mkdir(parents=True)
    (work / "out" / "other-site" / "x.yaml").write_text("x: 1\n")
    (work / "out" / "README.md").write_text("hi\n")
    assert check_ownership(OUT, SITE, NEW) == []


# diff_tree


def test_diff_reports_added_removed_and_changed_and_writes_nothing(work: Path) -> None:
    write_tree(OUT, SITE, OLD)
    age(work / "out")
    before = snapshot(work / "out")

    drifts = diff_tree(OUT, SITE, NEW)

    assert [(d.path, d.change) for d in drifts] == [
        ("out/lab/extra/c.yaml", "removed"),
        ("out/lab/index.json", "changed"),
        ("out/lab/readiness/a.yaml", "changed"),
        ("out/lab/readiness/b.yaml", "removed"),
        ("out/lab/readiness/d.yaml", "added"),
    ]
    changed = {d.path: d.diff for d in drifts}
    assert changed["out/lab/readiness/a.yaml"] == (
        "--- a/out/lab/readiness/a.yaml\n"
        "+++ b/out/lab/readiness/a.yaml\n"
        "@@ -1 +1 @@\n"
        "-a: 1\n"
        "+a: 2\n"
    )
    assert '-    "extra/c.yaml": {\n' in changed["out/lab/index.json"]
    assert '+    "readiness/d.yaml": {\n' in changed["out/lab/index.json"]
    assert all(d.diff == "" for d in drifts if d.change != "changed")
    assert snapshot(work / "out") == before


def test_diff_of_an_identical_tree_is_empty(work: Path) -> None:
    write_tree(OUT, SITE, OLD)
    assert diff_tree(OUT, SITE, OLD) == []


def test_diff_against_a_missing_folder_writes_nothing(work: Path) -> None:
    drifts = diff_tree(OUT, SITE, NEW)
    assert [(d.path, d.change) for d in drifts] == [
        ("out/lab/index.json", "added"),
        ("out/lab/readiness/a.yaml", "added"),
        ("out/lab/readiness/d.yaml", "added"),
    ]
    assert list(work.iterdir()) == []


def test_diff_and_write_see_line_endings_and_bytes(work: Path) -> None:
    """A CRLF copy of a generated file is drift, and render restores the exact bytes."""
    write_tree(OUT, SITE, OLD)
    file = work / "out" / SITE / "readiness" / "a.yaml"
    file.write_bytes(b"a: 1\r\n")
    (work / "out" / SITE / "extra" / "c.yaml").write_bytes(b"c: \xff\n")

    drifts = diff_tree(OUT, SITE, OLD)

    assert [(d.path, d.change) for d in drifts] == [
        ("out/lab/extra/c.yaml", "changed"),
        ("out/lab/readiness/a.yaml", "changed"),
    ]
    assert write_tree(OUT, SITE, OLD) is True
    assert on_disk(work / "out" / SITE) == encoded(OLD)
