"""The writer under concurrency, kills and other people's files (issue #14, items 1, 2, 4, 11).

Renders run in real subprocesses: several at once into one tree, or one killed with
SIGKILL at each step of its swap (`writer.on_step`, the writer's fault-injection hook).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from nvcregen.emit import swap, writer
from nvcregen.emit.naming import INDEX_FILE
from nvcregen.emit.ownership import STAGING_MARK
from nvcregen.emit.tree import Tree
from nvcregen.emit.writer import check_ownership, read_tree, write_tree, write_trees

SITE = "lab"
ROOT = Path(__file__).resolve().parents[3]


def make_tree(files: dict[str, str], tag: str) -> Tree:
    index = {"site": SITE, "tag": tag, "files": {path: {"kind": "Test"} for path in files}}
    return {**files, INDEX_FILE: json.dumps(index, indent=2, sort_keys=True) + "\n"}


OLD = make_tree(
    {f"readiness/o{i}.yaml": f"o: {i}\n" for i in range(12)} | {"x/c.yaml": "c\n"}, "old"
)
NEW = make_tree({f"readiness/n{i}.yaml": f"n: {i}\n" for i in range(9)}, "new")

# A child process: write OLD or NEW (argv) into out/, dying at one step if asked.
CHILD = textwrap.dedent(
    """
    import json, os, signal, sys
    from pathlib import Path
    from nvcregen.emit import swap, writer
    out, which, rounds, die_at, fallback = sys.argv[1:6]
    trees = json.loads(Path(sys.argv[6]).read_text())
    if fallback == "1":
        def refuse(a, b):
            raise swap.ExchangeUnsupported("test")
        swap.exchange = refuse
    if die_at:
        def step(name):
            if name == die_at:
                os.kill(os.getpid(), signal.SIGKILL)
        writer.on_step = step
    for n in range(int(rounds)):
        tree = trees[which if which != "alternate" else ("old", "new")[n % 2]]
        writer.write_tree(Path(out), "lab", tree)
    """
)


@pytest.fixture
def trees_file(tmp_path: Path) -> Path:
    path = tmp_path / "trees.json"
    path.write_text(json.dumps({"old": OLD, "new": NEW}))
    return path


def child(
    out: Path, trees: Path, which: str, rounds: int = 1, die_at: str = "", fallback: bool = False
) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    args = [
        sys.executable,
        "-c",
        CHILD,
        str(out),
        which,
        str(rounds),
        die_at,
        "1" if fallback else "0",
        str(trees),
    ]
    return subprocess.Popen(args, env=env, stderr=subprocess.PIPE)


def whole(site_dir: Path) -> str:
    """Which tree the folder holds, whole: 'old' or 'new'; anything else fails the test."""
    found = read_tree(site_dir)
    assert found in (OLD, NEW), sorted(found)
    return "old" if found == OLD else "new"


def names(out: Path) -> list[str]:
    return sorted(p.name for p in out.iterdir())


def test_renders_at_once_never_damage_the_tree(tmp_path: Path, trees_file: Path) -> None:
    """Item 1: a lock per tree and a staging folder per run; every render succeeds."""
    out = tmp_path / "out"
    procs = [child(out, trees_file, "alternate", rounds=8) for _ in range(4)]
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err.decode()
    whole(out / SITE)
    assert names(out) == [SITE]  # no staging folder, no .old, no lock file left
    assert check_ownership(out, SITE) == []


def test_a_reader_always_finds_a_whole_tree_during_swaps(tmp_path: Path, trees_file: Path) -> None:
    """Item 2: out/<site> is never missing while trees are swapped back and forth."""
    out = tmp_path / "out"
    write_tree(out, SITE, OLD)
    seen: list[str] = []
    stop = threading.Event()

    def read() -> None:
        while not stop.is_set():
            try:
                index = json.loads((out / SITE / INDEX_FILE).read_text())
            except FileNotFoundError:
                seen.append("missing")
                continue
            seen.append(index["tag"])

    reader = threading.Thread(target=read)
    reader.start()
    try:
        proc = child(out, trees_file, "alternate", rounds=40)
        _, err = proc.communicate(timeout=120)
    finally:
        stop.set()
        reader.join()
    assert proc.returncode == 0, err.decode()
    assert "missing" not in seen
    assert {"old", "new"} <= set(seen)


@pytest.mark.parametrize("step", ["staged", "swapped", "checked", "cleaned"])
def test_a_kill_at_any_step_of_the_swap_leaves_a_whole_tree(
    tmp_path: Path, trees_file: Path, step: str
) -> None:
    """Item 2: SIGKILL at each step; out/<site> is the old or new tree; the next render repairs."""
    out = tmp_path / "out"
    write_tree(out, SITE, OLD)
    proc = child(out, trees_file, "new", die_at=step)
    proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    assert whole(out / SITE) == ("old" if step == "staged" else "new")
    assert write_tree(out, SITE, NEW) is (step == "staged")
    assert read_tree(out / SITE) == NEW
    assert names(out) == [SITE]


@pytest.mark.parametrize("step", ["staged", "moved-aside", "swapped", "checked", "cleaned"])
def test_the_two_rename_fallback_is_repaired_by_the_next_render(
    tmp_path: Path, trees_file: Path, step: str
) -> None:
    """Where no atomic exchange exists, a kill between the renames is undone next time."""
    out = tmp_path / "out"
    write_tree(out, SITE, OLD)
    proc = child(out, trees_file, "new", die_at=step, fallback=True)
    proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    if step == "moved-aside":  # the documented window of the fallback
        assert not (out / SITE).exists()
    else:
        whole(out / SITE)
    assert writer.recover(out, SITE) == []
    assert whole(out / SITE) in {"old", "new"}
    write_tree(out, SITE, NEW)
    assert read_tree(out / SITE) == NEW
    assert names(out) == [SITE]


def _user_things(site_dir: Path) -> None:
    (site_dir / "empty").mkdir()
    (site_dir / "readiness" / "link.yaml").symlink_to("o1.yaml")
    (site_dir / "dirlink").symlink_to("/")
    os.mkfifo(site_dir / "pipe")


def test_links_fifos_and_empty_folders_are_refused_and_kept(tmp_path: Path) -> None:
    """Item 4: what the user put there is never deleted silently."""
    out = tmp_path / "out"
    write_tree(out, SITE, OLD)
    _user_things(out / SITE)
    result = write_trees(out, {SITE: NEW})
    assert result.written == []
    assert [
        (d.code, d.span.file.removeprefix(f"{out.as_posix()}/")) for d in result.diagnostics
    ] == [
        ("NVC502", "lab/dirlink"),
        ("NVC502", "lab/empty"),
        ("NVC511", "lab/pipe"),
        ("NVC502", "lab/readiness/link.yaml"),
    ]
    assert "symbolic link" in result.diagnostics[0].message
    assert "empty folder" in result.diagnostics[1].message
    assert "FIFO" in result.diagnostics[2].message
    assert (out / SITE / "empty").is_dir() and (out / SITE / "pipe").exists()
    assert (out / SITE / "readiness" / "link.yaml").is_symlink()
    assert names(out) == [SITE]


def test_a_symlinked_site_folder_is_refused_and_nothing_is_left(tmp_path: Path) -> None:
    out = tmp_path / "out"
    real = tmp_path / "elsewhere"
    write_tree(real, SITE, OLD)
    out.mkdir()
    (out / SITE).symlink_to(real / SITE)
    result = write_trees(out, {SITE: NEW})
    assert [d.code for d in result.diagnostics] == ["NVC508"]
    assert (out / SITE).is_symlink() and read_tree(real / SITE) == OLD
    assert names(out) == [SITE]


def test_a_file_added_during_the_render_is_kept_and_the_render_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out"
    write_tree(out, SITE, OLD)

    def meanwhile(step: str) -> None:
        if step == "staged":
            (out / SITE / "notes.md").write_text("mine\n")

    monkeypatch.setattr(writer, "on_step", meanwhile)
    result = write_trees(out, {SITE: NEW})
    assert [d.code for d in result.diagnostics] == ["NVC502"]
    assert result.diagnostics[0].span.file.endswith("lab/notes.md")
    assert (out / SITE / "notes.md").read_text() == "mine\n"
    assert {k: v for k, v in read_tree(out / SITE).items() if k != "notes.md"} == OLD
    assert names(out) == [SITE]


def test_a_damaged_tree_and_leftovers_are_repaired_but_strangers_kept(tmp_path: Path) -> None:
    """index.json gone (files keep their generated header), leftovers of crashed runs."""
    out = tmp_path / "out"
    header = "# Generated by nvcregen from sites/lab.yaml. Do not edit.\n"
    generated = {k: (header + v if k.endswith(".yaml") else v) for k, v in OLD.items()}
    write_tree(out, SITE, generated)
    (out / SITE / INDEX_FILE).unlink()
    stage = out / f".nvcregen-{SITE}.999-abcd.new"
    (stage / "readiness").mkdir(parents=True)
    (stage / ".nvcregen-staging").write_text("")
    (stage / "readiness" / "half.yaml").write_text("half")
    theirs = out / f".nvcregen-{SITE}.998-beef.old"
    theirs.mkdir()
    (theirs / "keep.txt").write_text("not ours\n")

    result = write_trees(out, {SITE: NEW})

    assert result.written == [SITE]
    assert [(d.code, d.severity) for d in result.diagnostics] == [("NVC509", "warning")]
    assert read_tree(out / SITE) == NEW
    assert names(out) == [theirs.name, SITE]
    assert (theirs / "keep.txt").read_text() == "not ours\n"


def test_a_file_without_index_or_header_is_still_refused(tmp_path: Path) -> None:
    out = tmp_path / "out"
    (out / SITE).mkdir(parents=True)
    (out / SITE / "plain.yaml").write_text("a: 1\n")
    assert [d.code for d in write_trees(out, {SITE: NEW}).diagnostics] == ["NVC502"]
    assert (out / SITE / "plain.yaml").exists()


def test_an_unwritable_out_is_a_user_error(tmp_path: Path) -> None:
    """Item 11: --out under a file (or without permission) is NVC504, not a crash."""
    blocker = tmp_path / "file"
    blocker.write_text("x")
    [diag] = write_trees(blocker / "out", {SITE: NEW}).diagnostics
    assert diag.code == "NVC504" and "cannot write to" in diag.message and diag.hint


def test_a_permission_error_while_writing_is_a_user_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def denied(file: Path, text: str) -> None:
        raise PermissionError(13, "Permission denied", str(file))

    monkeypatch.setattr(writer, "_write_file", denied)
    [diag] = write_trees(tmp_path / "out", {SITE: NEW}).diagnostics
    assert diag.code == "NVC504"
    assert names(tmp_path / "out") == []


def test_a_render_waits_for_the_lock_then_gives_up_clearly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    monkeypatch.setattr(swap, "LOCK_TIMEOUT", 0.2)
    with swap.tree_lock(out):
        [diag] = write_trees(out, {SITE: NEW}).diagnostics
    assert diag.code == "NVC507"
    assert not (out / SITE).exists()
    assert write_trees(out, {SITE: NEW}).written == [SITE]


def test_a_staged_tree_is_synced_before_its_marker_goes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # One syncfs for the whole staged tree (issue #22: an fsync per file was most of a
    # 1,024-node render); the marker is still there when it runs, so a crash before it
    # leaves a folder `recover` deletes.
    synced: list[tuple[str, list[str]]] = []

    def sync(folder: Path, files: list[Path]) -> None:
        assert (folder / STAGING_MARK).exists()
        synced.append((folder.name, sorted(f.relative_to(folder).as_posix() for f in files)))

    monkeypatch.setattr(swap, "sync_written", sync)
    tree: Tree = {"a.yaml": "a: 1\n", "sub/b.yaml": "b: 2\n"}
    write_tree(tmp_path / "out", "site", tree)
    ((name, files),) = synced
    assert name.startswith(".nvcregen-site.") and name.endswith(".new")
    assert files == sorted([STAGING_MARK, "a.yaml", "sub/b.yaml"])
    assert read_tree(tmp_path / "out" / "site") == tree


def test_without_syncfs_every_file_and_folder_is_fsynced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "sub").mkdir()
    files = [tmp_path / "a.yaml", tmp_path / "sub" / "b.yaml"]
    for file in files:
        file.write_text("x: 1\n")
    synced: list[int] = []
    real = os.fsync

    def fsync(fd: int) -> None:
        synced.append(os.fstat(fd).st_ino)
        real(fd)

    monkeypatch.setattr(swap, "_SYNCFS", None)
    monkeypatch.setattr(os, "fsync", fsync)
    swap.sync_written(tmp_path, files)
    assert set(synced) == {p.stat().st_ino for p in [*files, tmp_path, tmp_path / "sub"]}


@pytest.mark.skipif(swap._SYNCFS is None, reason="syncfs(2) is Linux's")
def test_with_syncfs_no_file_is_fsynced_one_by_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    file = tmp_path / "a.yaml"
    file.write_text("x: 1\n")

    def refuse(fd: int) -> None:
        raise AssertionError("fsync called although syncfs synced the filesystem")

    monkeypatch.setattr(os, "fsync", refuse)
    swap.sync_written(tmp_path, [file])
