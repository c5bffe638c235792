"""Golden cases: one folder per case under tests/golden/, found by listing the folder.

A case holds `site.yaml` (or `site.bin` for bytes that are not text) and, optionally,
`flags` (extra render options, one per line). Its expectation is `expected/` (the exact
tree written, index.json included) for a valid site, or `expected.txt` (exit code and
everything printed) for a broken one. Refresh with `make golden`
(`pytest tests/test_golden.py --update-golden`), then review `git diff tests/golden`.
"""

from __future__ import annotations

import difflib
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from nvcregen.cli import main
from nvcregen.emit.canonical import dump_yaml, load_yaml_plain
from nvcregen.emit.writer import read_tree

GOLDEN = Path(__file__).parent / "golden"
CASES = sorted(p.name for p in GOLDEN.iterdir() if p.is_dir())
REFRESH = "make golden  (pytest tests/test_golden.py --update-golden), then review git diff"


def _site_file(case: Path) -> Path:
    return case / "site.bin" if (case / "site.bin").exists() else case / "site.yaml"


def _run(
    case: Path, work: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[int, str, dict[str, str]]:
    """Render the case's site in a scratch project; return exit code, output and tree."""
    (work / "sites").mkdir(parents=True)
    shutil.copyfile(_site_file(case), work / "sites" / f"{case.name}.yaml")
    flags = (case / "flags").read_text().split() if (case / "flags").exists() else []
    with monkeypatch.context() as patch:
        patch.chdir(work)
        result = CliRunner().invoke(main, ["render", *flags], catch_exceptions=False)
    return result.exit_code, result.output, read_tree(work / "out")


def _compare(expected: str, actual: str, label: str) -> None:
    if expected != actual:
        diff = "".join(
            difflib.unified_diff(
                expected.splitlines(keepends=True),
                actual.splitlines(keepends=True),
                f"expected/{label}",
                f"actual/{label}",
            )
        )
        pytest.fail(f"{label} differs from the golden file:\n{diff}\nrefresh with: {REFRESH}")


@pytest.mark.parametrize("name", CASES)
def test_golden(
    name: str, tmp_path: Path, update_golden: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    case = GOLDEN / name
    code, output, tree = _run(case, tmp_path / "project", monkeypatch)
    if code != 0:
        actual = f"exit {code}\n{output}"
        if update_golden:
            (case / "expected.txt").write_text(actual)
            shutil.rmtree(case / "expected", ignore_errors=True)
        assert not tree, "a failed render must write nothing"
        assert "Traceback" not in output
        _compare((case / "expected.txt").read_text(), actual, "expected.txt")
        return
    if update_golden:
        shutil.rmtree(case / "expected", ignore_errors=True)
        (case / "expected.txt").unlink(missing_ok=True)
        for path, text in tree.items():
            (case / "expected" / path).parent.mkdir(parents=True, exist_ok=True)
            (case / "expected" / path).write_text(text)
    expected = read_tree(case / "expected")
    assert sorted(expected) == sorted(tree), f"file lists differ; refresh with: {REFRESH}"
    for path in sorted(tree):
        _compare(expected[path], tree[path], path)
        _check_stable(path, tree[path])
    # Compiling again in a fresh folder gives identical bytes.
    _, _, again = _run(case, tmp_path / "again", monkeypatch)
    assert again == tree


def _check_stable(path: str, text: str) -> None:
    """Re-loading an emitted file and dumping it again changes nothing."""
    if not path.endswith(".yaml"):
        return
    obj = load_yaml_plain(text)
    header = "\n".join(line[2:] for line in text.splitlines() if line.startswith("# "))
    assert dump_yaml(obj, header=header) == text
    assert isinstance(obj, dict)
    assert obj.get("apiVersion") and obj.get("kind") and obj["metadata"].get("name")
