"""`render --out DIR`: what `render --help` says is what the README says, and what it does.

Issue #32: the help said `--out` outside the project was refused, the README that it is a
preview (it is), and neither said that DIR is relative to the current folder while "the
project" is the site's.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from nvcregen.cli import main, render

ROOT = Path(__file__).resolve().parents[1]
SITE = "l20-pool.yaml"
STATEMENT = re.compile(
    r"DIR is relative to the current folder\..*?\(`gitops\.path`, or `out/<site>`\)\."
)


def flat(text: str) -> str:
    return " ".join(text.split())


def statement(text: str) -> str:
    found = STATEMENT.search(flat(text))
    assert found is not None, "no statement of --out found"
    return found.group(0)


def run(*args: str) -> Result:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    assert "Traceback" not in result.output
    return result


def test_render_help_states_what_the_readme_states() -> None:
    helped = statement(render.help or "")
    assert helped == statement((ROOT / "README.md").read_text(encoding="utf-8"))
    assert "refused for sites" not in flat(render.help or "")  # the old, wrong sentence
    assert "outside it nothing is refused: the render is a preview" in helped
    shown = run("render", "--help")
    assert shown.exit_code == 0 and "DIR is relative to the current folder" in flat(shown.output)


@pytest.fixture
def elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project at tmp/project; the current folder tmp/elsewhere, outside it."""
    (tmp_path / "project" / "sites").mkdir(parents=True)
    shutil.copyfile(ROOT / "sites" / SITE, tmp_path / "project" / "sites" / SITE)
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    return tmp_path


def test_out_is_relative_to_the_current_folder_and_a_preview_outside_the_project(
    elsewhere: Path,
) -> None:
    site = str(elsewhere / "project" / "sites" / SITE)
    result = run("render", site, "--out", "out")
    assert result.exit_code == 0, result.output
    assert (elsewhere / "elsewhere" / "out" / "l20-pool" / "index.json").is_file()
    assert not (elsewhere / "project" / "out").exists()
    assert "warning[NVC379]: the output folder is outside the project" in result.output
    generator = "gitops/artifactgenerator-l20-pool.yaml"
    preview = (elsewhere / "elsewhere" / "out" / "l20-pool" / generator).read_text()
    assert 'from: "@repo/out/l20-pool/**"' in preview  # the folder the site is committed at


def test_out_inside_the_sites_project_is_what_gitops_applies(elsewhere: Path) -> None:
    site = str(elsewhere / "project" / "sites" / SITE)
    result = run("render", site, "--out", "../project/deploy")  # from the current folder
    assert result.exit_code == 0, result.output
    assert "NVC379" not in result.output
    generator = elsewhere / "project" / "deploy" / "l20-pool" / "gitops"
    text = (generator / "artifactgenerator-l20-pool.yaml").read_text()
    assert 'from: "@repo/deploy/l20-pool/**"' in text
