"""Trainer-mode logs saved with `kubectl logs --timestamps` whose times go backwards (#31).

The lines are not one run's output in order (moved, or logs spliced together), so the
log is no evidence: its round is provisional, its run incomplete with NVC749 naming the
line, and its node is not cleared, though its other groups passed.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from oncallfactory import site_text, write_logs

from nvcregen.cli import main

SITE_NAME = "h20-3e-four"


def stamped(saved: Path) -> Path:
    """Every log's lines stamped one second apart, as kubectl prints them."""
    for log in sorted(saved.rglob("*.log")):
        lines = log.read_text().splitlines()
        log.write_text(
            "".join(
                f"2026-10-14T13:{n // 60 % 60:02d}:{n % 60:02d}.5Z {line}\n"
                for n, line in enumerate(lines)
            )
        )
    return saved


def collected(tmp_path: Path, saved: Path) -> tuple[int, str, dict[str, object]]:
    site = tmp_path / "site.yaml"
    site.write_text(site_text(), encoding="utf-8")
    args = ["collect", "--site", str(site), "--from", str(saved), "--out", str(tmp_path / "r")]
    result = CliRunner().invoke(main, args)
    (run,) = (tmp_path / "r" / SITE_NAME).iterdir()
    return result.exit_code, result.stdout, json.loads((run / "verdicts.json").read_text())


def node_a_single(saved: Path) -> Path:
    """node-a's first single-node all-reduce round (group g0)."""
    (log,) = [
        p for p in saved.rglob("single-node-nccl-all-reduce-*-r1-g0.log") if "-tcp-" not in p.name
    ]
    return log


@pytest.mark.slow
def test_logs_in_time_order_pass(tmp_path: Path) -> None:
    code, _, verdicts = collected(tmp_path, stamped(write_logs(tmp_path / "saved", site_text())))
    assert (code, verdicts["word"]) == (0, "pass")


@pytest.mark.slow
def test_a_log_whose_times_go_backwards_is_no_evidence(tmp_path: Path) -> None:
    saved = stamped(write_logs(tmp_path / "saved", site_text()))
    log = node_a_single(saved)
    lines = log.read_text().splitlines(keepends=True)
    lines[3], lines[4] = lines[4], lines[3]  # two lines moved
    log.write_text("".join(lines))
    code, stdout, verdicts = collected(tmp_path, saved)
    assert (code, verdicts["word"]) == (1, "incomplete")
    (run,) = [
        r
        for r in verdicts["runs"]  # type: ignore[attr-defined]
        if (r["stage"], r["test"]) == ("single-node", "nccl-all-reduce")
    ]
    assert run["word"] == "incomplete"
    (why,) = [r["message"] for r in run["reasons"] if "NVC749" in r["message"]]
    assert why.endswith(
        f"{log.stem}.log: kubectl --timestamps line 5 (2026-10-14T13:00:03.5Z) is earlier"
        " than line 4 (2026-10-14T13:00:04.5Z): not one run's output"
    )
    assert "NVC749" in stdout
    nodes = {n["node"]: n["status"] for n in verdicts["nodes"]}  # type: ignore[attr-defined]
    assert nodes["node-a"] == "untested"
    assert {nodes[n] for n in ("node-b", "node-c", "node-d")} == {"cleared"}
