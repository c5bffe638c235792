"""What collect prints: progress only on a terminal, one line per verdict that matters."""

from __future__ import annotations

import io
from pathlib import Path

from click.testing import CliRunner
from labstate import lab_state, write_export

from nvcregen.cli import main
from nvcregen.collect.output import TerminalProgress
from nvcregen.collect.requests import ListRequest

SITE_FILE = Path(__file__).resolve().parents[2] / "fixtures" / "collect" / "site.yaml"


def test_progress_rewrites_one_line_and_clears_it() -> None:
    stream = io.StringIO()
    progress = TerminalProgress(stream)
    progress(ListRequest("Workflow", "nvcre"), 250)
    progress(ListRequest("Workflow", "nvcre"), 5)
    progress.close()
    text = stream.getvalue()
    assert text.startswith("\rreading workflows in nvcre: 250")
    assert "\rreading workflows in nvcre: 5  " in text  # padded over the longer line
    assert text.endswith("\r")


def test_no_progress_is_shown_when_stderr_is_not_a_terminal(tmp_path: Path) -> None:
    folder = write_export(tmp_path / "export", lab_state())
    args = [
        "collect",
        "--site",
        str(SITE_FILE),
        "--from",
        str(folder),
        "--out",
        str(tmp_path / "r"),
    ]
    done = CliRunner().invoke(main, args)
    assert done.exit_code == 0
    assert "\r" not in done.stderr
    # Passing verdicts of the transport-only baseline and goodput print no "at <size>".
    lines = done.stdout.splitlines()
    assert any(
        line.startswith("pass       nccl-all-reduce-tcp inter-node (two-node), transport")
        for line in lines
    )
    assert any(
        line.startswith("pass       nccl-all-reduce inter-node (two-node) at 1GiB")
        for line in lines
    )


def test_kubeconfig_without_a_context_is_a_usage_error(tmp_path: Path) -> None:
    args = [
        "collect",
        "--site",
        str(SITE_FILE),
        "--from",
        str(tmp_path),
        "--kubeconfig",
        str(tmp_path / "k"),
    ]
    done = CliRunner().invoke(main, args)
    assert done.exit_code == 2
    assert "--kubeconfig needs --context CTX" in done.stderr


def test_a_line_feed_in_a_group_name_forges_no_line(tmp_path: Path) -> None:
    """NVCRE's group names are free text: a line feed printed raw made a line of its own,
    here a forged `pass` verdict (issue #32). Each printed line stays one line."""
    forged = "node-a\npass       forged\x1b[2K line"
    objects = lab_state()
    for obj in objects:
        if obj["kind"] == "Workflow" and "single-node-0001" in obj["metadata"]["name"]:
            orchestration = obj["status"]["orchestration"]
            for group in [g for i in orchestration["iterationHistory"] for g in i["groups"]]:
                group["name"] = forged if group["name"] == "node-a" else group["name"]
            for group in orchestration["groups"]:
                group["name"] = forged if group["name"] == "node-a" else group["name"]
    folder = write_export(tmp_path / "export", objects)
    args = ["collect", "--site", str(SITE_FILE), "--from", str(folder), "--out", str(tmp_path)]
    done = CliRunner().invoke(main, args)
    assert done.exit_code == 0, done.output
    lines = done.stdout.splitlines()
    assert not [line for line in lines if line.startswith("pass       forged")]
    assert "node-a\\npass       forged\\x1b[2K line: median busbw" in done.stdout
    assert "\x1b" not in done.output
