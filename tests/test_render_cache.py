"""`render --check` skips sites whose inputs and files are unchanged, and still sees edits."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

import nvcregen.chain.sites
from nvcregen.chain.pipeline import compile_site
from nvcregen.cli import main

ROOT = Path(__file__).resolve().parent.parent
H20, L20 = "h20-3e-lab", "l20-pool"
# The single-node Certification, whose name ends in a hash of its spec.
CERT = next((ROOT / "out" / H20).glob("readiness/01-*/certification-*.yaml")).name
CERT = f"readiness/01-single-node/{CERT}"
NOTE = "nvcregen: {} not recompiled: inputs unchanged and every file matches its digest"


@pytest.fixture
def compiled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[], list[str]]:
    """A rendered copy of two example sites as the current folder; returns compile counts.

    Calling the fixture's value gives the sites compiled since the last call.
    """
    (tmp_path / "sites").mkdir()
    for site in (H20, L20):
        shutil.copyfile(ROOT / "sites" / f"{site}.yaml", tmp_path / "sites" / f"{site}.yaml")
    monkeypatch.chdir(tmp_path)
    assert run("render").exit_code == 0
    seen: list[str] = []

    def counting(path: Path, *args: Any, **kwargs: Any) -> Any:
        seen.append(path.stem)
        return compile_site(path, *args, **kwargs)

    monkeypatch.setattr(nvcregen.chain.sites, "compile_site", counting)

    def take() -> list[str]:
        done = sorted(seen)
        seen.clear()
        return done

    return take


def run(*args: str) -> Result:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    assert "Traceback" not in result.output
    return result


def test_unchanged_sites_are_not_compiled(compiled: Callable[[], list[str]]) -> None:
    result = run("render", "--check")
    assert result.exit_code == 0
    assert compiled() == []
    assert NOTE.format("2 sites") in result.output
    assert result.output.splitlines()[-1] == "nvcregen: no problems; 0 files differ"


def test_no_cache_compiles_every_site(compiled: Callable[[], list[str]]) -> None:
    assert run("render", "--check", "--no-cache").exit_code == 0
    assert compiled() == [H20, L20]


def test_a_hand_edit_is_drift_and_only_that_site_is_compiled(
    compiled: Callable[[], list[str]],
) -> None:
    edited = Path("out", H20, CERT)
    edited.write_text(edited.read_text().replace("gpusPerNode: 8", "gpusPerNode: 4", 1))
    result = run("render", "--check", "--verbose")
    assert result.exit_code == 1
    assert compiled() == [H20]
    assert f"out/{H20}/{CERT}: changed (+1 -1 lines: gpusPerNode)\n" in result.output
    assert "\n-        gpusPerNode: 4\n+        gpusPerNode: 8\n" in result.output
    assert NOTE.format("1 site") in result.output
    assert result.output.splitlines()[-1] == "nvcregen: out/ is out of date; run `nvcregen render`"


def _shift_first_line(index: str) -> str:
    """index.json with its first source line number moved by one: content drift only."""
    return re.sub(r'"line": (\d+)', lambda m: f'"line": {int(m.group(1)) + 1}', index, count=1)


@pytest.mark.parametrize(
    "damage",
    [
        lambda d: (d / "NOTES.md").write_text("mine\n"),
        lambda d: (d / "images.txt").unlink(),
        lambda d: (d / "index.json").write_text((d / "index.json").read_text() + "\n"),
        lambda d: (d / "index.json").write_text(_shift_first_line((d / "index.json").read_text())),
    ],
    ids=["file-added", "file-removed", "index-whitespace", "index-content"],
)
def test_any_change_to_the_folder_is_drift(
    compiled: Callable[[], list[str]], damage: Callable[[Path], object]
) -> None:
    damage(Path("out", H20))
    result = run("render", "--check")
    assert result.exit_code == 1
    assert compiled() == [H20]
    assert f"out/{H20}/" in result.output


def test_a_site_edit_is_compiled_and_shows_as_drift(compiled: Callable[[], list[str]]) -> None:
    site = Path("sites", f"{L20}.yaml")
    site.write_text(site.read_text().replace("rounds: 2", "rounds: 1", 1))
    assert "rounds: 1" in site.read_text()
    result = run("render", "--check")
    assert result.exit_code == 1
    assert compiled() == [L20]
    assert "\n+    rounds: 1\n" not in result.output  # the diff is of out/, not of the site
    assert f"out/{L20}/index.json: changed" in result.output
    new_name = f"out/{L20}/readiness/01-single-node/certification-l20-pool-"
    assert new_name in result.output


def test_a_comment_edit_changes_the_key_but_only_the_index(
    compiled: Callable[[], list[str]],
) -> None:
    site = Path("sites", f"{L20}.yaml")
    site.write_text(site.read_text() + "# a comment\n")
    result = run("render", "--check")
    assert result.exit_code == 1
    assert compiled() == [L20]
    assert f"out/{L20}/index.json: changed" in result.output


def test_a_new_site_reusing_a_cached_name_is_still_an_error(
    compiled: Callable[[], list[str]],
) -> None:
    shutil.copyfile(Path("sites", f"{H20}.yaml"), Path("sites", "h20-copy.yaml"))
    result = run("render", "--check")
    assert result.exit_code == 2
    assert f"site name '{H20}' is also used by" in result.output


def test_strict_compiles_a_site_that_had_warnings(compiled: Callable[[], list[str]]) -> None:
    site = Path("sites", f"{H20}.yaml")
    text = site.read_text()
    start = text.index("nccl: nvcr.io/nvidia/pytorch:26.01-py3@")
    tagged = (
        text[:start]
        + "nccl: nvcr.io/nvidia/pytorch:26.01-py3\n"
        + text[text.index("\n", start) + 1 :]
    )
    site.write_text(tagged)
    assert run("render").exit_code == 0
    index = json.loads(Path("out", H20, "index.json").read_text())
    assert index["inputs"]["notices"] >= 1
    compiled()
    assert run("render", "--check").exit_code == 0
    assert compiled() == []
    assert run("render", "--check", "--strict").exit_code == 2
    assert H20 in compiled()


def test_strict_compiles_a_site_whose_only_notes_strict_refuses(
    compiled: Callable[[], list[str]],
) -> None:
    """Example digests are information, and errors under --strict: never cached past it."""
    assert run("render").exit_code == 0
    index = json.loads(Path("out", H20, "index.json").read_text())
    assert index["inputs"]["notices"] >= 1  # NVC376 notes, no warning
    compiled()
    result = run("render", "--check", "--strict")
    assert result.exit_code == 2
    assert "error[NVC376]" in result.output
    assert H20 in compiled()
