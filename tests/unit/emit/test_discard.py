"""A render killed while deleting a tree leaves nothing that warns forever (issue #20).

Before, a render killed while it deleted the old tree left
`out/.nvcregen-<site>.<pid>-<hex>.new/` with an empty `gitops/` and no index, which every
later render kept with NVC509. A folder being deleted is now marked first and unmarked
last (`DISCARD_MARK`), so the next render proves it is nvcregen's and finishes the job;
a folder it cannot prove is its own is still kept with the warning.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from nvcregen.emit.naming import INDEX_FILE
from nvcregen.emit.ownership import DISCARD_MARK
from nvcregen.emit.writer import read_tree, write_trees

ROOT = Path(__file__).resolve().parents[3]
SITE = "lab"


def make_tree(files: dict[str, str], tag: str) -> dict[str, str]:
    index = {"site": SITE, "tag": tag, "files": {path: {"kind": "Test"} for path in files}}
    return {**files, INDEX_FILE: json.dumps(index, indent=2, sort_keys=True) + "\n"}


OLD = make_tree({"gitops/a.yaml": "a\n", "readiness/o.yaml": "o\n", "z/c.yaml": "c\n"}, "old")
NEW = make_tree({"readiness/n.yaml": "n\n"}, "new")

# Write OLD, then NEW, dying (SIGKILL) at the `die_at`-th time the writer reaches `step`.
CHILD = textwrap.dedent(
    """
    import json, os, signal, sys
    from pathlib import Path
    from nvcregen.emit import writer
    out, step, die_at, trees = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    old, new = json.loads(Path(trees).read_text())
    writer.write_tree(Path(out), "lab", old)
    seen = []
    def on_step(name):
        if name == step:
            seen.append(name)
            if len(seen) == die_at:
                os.kill(os.getpid(), signal.SIGKILL)
    writer.on_step = on_step
    writer.write_tree(Path(out), "lab", new)
    """
)


def killed_render(out: Path, tmp_path: Path, step: str, die_at: int) -> None:
    trees = tmp_path / "trees.json"
    trees.write_text(json.dumps([OLD, NEW]))
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(out), step, str(die_at), str(trees)],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        check=False,
    )
    assert done.returncode == -signal.SIGKILL, done.stderr.decode()


@pytest.mark.parametrize(("step", "die_at"), [("discarding", 1), ("discarded-one", 1)])
def test_a_render_killed_while_deleting_leaves_what_the_next_one_removes(
    tmp_path: Path, step: str, die_at: int
) -> None:
    out = tmp_path / "out"
    killed_render(out, tmp_path, step, die_at)
    [left] = [p for p in out.iterdir() if p.name.startswith(f".nvcregen-{SITE}.")]
    assert (left / DISCARD_MARK).is_file()
    assert read_tree(out / SITE) == NEW  # the swap was done before the deletion began

    result = write_trees(out, {SITE: NEW})

    assert result.diagnostics == []  # no NVC509, now or on any later render
    assert sorted(p.name for p in out.iterdir() if p.name != ".nvcregen-lock") == [SITE]
    assert write_trees(out, {SITE: OLD}).diagnostics == []


def test_the_issues_leftover_is_cleaned_once_marked(tmp_path: Path) -> None:
    """The reproducer's leftover (an empty gitops/, no index), marked by the writer."""
    out = tmp_path / "out"
    assert write_trees(out, {SITE: OLD}).diagnostics == []
    left = out / f".nvcregen-{SITE}.4242-0a1b2c3d.new"
    (left / "gitops").mkdir(parents=True)
    (left / DISCARD_MARK).write_text("4242\n")
    assert write_trees(out, {SITE: NEW}).diagnostics == []
    assert not left.exists()


def test_an_unmarked_or_linked_leftover_is_kept_with_the_warning(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert write_trees(out, {SITE: OLD}).diagnostics == []
    unmarked = out / f".nvcregen-{SITE}.4242-0a1b2c3d.new"
    (unmarked / "gitops").mkdir(parents=True)  # no mark: nothing proves it is ours
    linked = out / f".nvcregen-{SITE}.4243-0a1b2c3e.new"
    linked.mkdir()
    (linked / DISCARD_MARK).write_text("4243\n")
    (linked / "elsewhere").symlink_to(tmp_path)  # not something nvcregen writes

    result = write_trees(out, {SITE: NEW})

    assert sorted((d.code, d.span.file.rsplit("/", 1)[-1]) for d in result.diagnostics) == [
        ("NVC509", unmarked.name),
        ("NVC509", linked.name),
    ]
    assert (unmarked / "gitops").is_dir() and (linked / "elsewhere").is_symlink()
