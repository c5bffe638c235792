"""The README's commands, run as written in a copy of the project (issue 19).

After `make render`, nvcregen lives in `.venv/bin/`, not on PATH: the quick start must
say how to run it, and every `nvcregen` command the README shows must then work exactly
as written, printing what the README says it prints.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
ACTIVATE = {". .venv/bin/activate", "source .venv/bin/activate"}
BLOCK = re.compile(r"^```(\w*)\n(.*?)^```$", re.M | re.S)


def blocks(text: str) -> list[tuple[str, str]]:
    """Every fenced code block of a Markdown text: (language, body)."""
    return [(m.group(1), m.group(2)) for m in BLOCK.finditer(text)]


def commands(language: str, body: str) -> list[tuple[str, str | None]]:
    """The commands of a block, each with the output shown under it (None: not shown).

    A `sh` block is a script: each line a command, its comment dropped. In a `text` block
    only lines after a `$ ` prompt are commands, followed by what they print.
    """
    if language == "sh":
        found = [line.split("  #", 1)[0].strip() for line in body.splitlines()]
        return [(line, None) for line in found if line and not line.startswith("#")]
    if language != "text":
        return []
    shown: list[tuple[str, str | None]] = []
    for line in body.splitlines(keepends=True):
        if line.startswith("$ "):
            shown.append((line[2:].strip(), ""))
        elif shown:
            command, output = shown[-1]
            shown[-1] = (command, f"{output}{line}")
    return shown


def runs_nvcregen(command: str) -> bool:
    return command.split(maxsplit=1)[0] in {"nvcregen", ".venv/bin/nvcregen"}


def section(text: str, title: str) -> str:
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : None if end < 0 else end]


def test_the_quick_start_says_how_to_run_nvcregen_after_make_render() -> None:
    quick = [c for lang, body in blocks(section(README.read_text(), "Quick start"))
             for c, _ in commands(lang, body)]  # fmt: skip
    assert quick[0] == "make render"
    after = quick[quick.index("make render") + 1 :]
    # activating the venv puts nvcregen on PATH; its path works without
    (activate,) = [i for i, c in enumerate(after) if c in ACTIVATE]
    assert any(c.startswith("nvcregen ") for c in after[activate + 1 :])
    assert any(c.startswith(".venv/bin/nvcregen ") for c in after)
    # that is where `make render` installs it, and the nvcregen it runs
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^VENV\s*:=\s*\.venv$", makefile, re.M)
    assert re.search(r"^BIN\s*:=\s*\$\(VENV\)/bin$", makefile, re.M)
    assert re.search(r"^render: .*\n\t\$\(BIN\)/nvcregen render$", makefile, re.M)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A copy of the project's sites and output, with the venv running these tests as .venv."""
    shutil.copytree(ROOT / "sites", tmp_path / "sites")
    shutil.copytree(ROOT / "out", tmp_path / "out")
    (tmp_path / ".venv").symlink_to(Path(sys.prefix), target_is_directory=True)
    if not (tmp_path / ".venv" / "bin" / "nvcregen").exists():
        pytest.skip("nvcregen is not installed in the venv running the tests")
    return tmp_path


def readme_commands() -> list[tuple[str, str | None]]:
    found = [c for lang, body in blocks(README.read_text()) for c in commands(lang, body)]
    return [(command, output) for command, output in found if runs_nvcregen(command)]


def test_the_readme_shows_nvcregen_commands() -> None:
    shown = [command for command, _ in readme_commands()]
    assert "nvcregen plan sites/h20-3e-lab.yaml" in shown
    assert ".venv/bin/nvcregen render --check" in shown
    assert [output for _, output in readme_commands() if output]  # one with its output


@pytest.mark.slow
@pytest.mark.parametrize(("command", "output"), readme_commands())
def test_every_readme_nvcregen_command_works_as_written(
    project: Path, command: str, output: str | None
) -> None:
    """Each command in a shell that activated .venv as the quick start says, in the project."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}  # the code under test
    env.pop("VIRTUAL_ENV", None)
    done = subprocess.run(
        ["bash", "-c", f"set -e; . .venv/bin/activate; {command}"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    if output is not None:  # what the README shows it printing
        assert done.stdout == output
