"""`collect`: a node whose node-health log was not judged whole is never cleared (#32).

Before, a node-health log whose `dmesg` was refused passed the node's Xid check with a
note, a log of another node (or none) left the node to be cleared by its DCGM pass, and
a 5,000-digit number in the log's nvidia-smi XML stopped `collect` with an internal error
(exit 70) and no archive. Now each is an unjudged node of the node-health run: the node is
`untested` (held back, never cleared), the run incomplete, the archive written.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner, Result
from nodehealthlogs import (
    EXAMPLES,
    XML,
    health_log,
)
from oncallfactory import dcgm_log

from nvcregen.cli import main
from nvcregen.report.writer import write_report

REFUSED = "[nvcregen] dmesg refused, Xid events not read: dmesg: read kernel buffer failed:"
DENIED = REFUSED + " Operation not permitted\n"
LONG = "9" * 5000


def run(*args: str | Path) -> Result:
    result = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    assert "Traceback" not in result.output
    return result


def trainer_logs(rendered: dict[str, Path], tmp_path: Path, logs: dict[str, str | None]) -> Path:
    """Trainer mode's saved logs: every DCGM log passing, node-health logs as `logs` says.

    A node missing from `logs` gets a healthy log; one mapped to None gets none.
    """
    saved = tmp_path / "saved"
    (saved / "logs" / "nvcre").mkdir(parents=True)
    for path in sorted(rendered["trainer"].rglob("*.yaml")):
        job = yaml.safe_load(path.read_text())
        if not isinstance(job, dict) or job.get("kind") != "Job":
            continue
        name, node = job["metadata"]["name"], job["metadata"]["annotations"]["nvcregen.io/nodes"]
        if job["metadata"]["labels"]["nvcregen.io/test"] != "node-health":
            text: str | None = dcgm_log(name, node)
        else:
            text = logs.get(node, health_log(node))
        if text is not None:
            (saved / "logs" / "nvcre" / f"{name}.log").write_text(text)
    return saved


def nvcre_logs(rendered: dict[str, Path], tmp_path: Path, logs: dict[str, str]) -> Path:
    """NVCRE mode's `--from` folder: the WorkloadRuns, and a node-health log per entry."""
    saved = tmp_path / "saved"
    (saved / "logs" / "nvcre").mkdir(parents=True)
    for path in rendered["nvcre"].rglob("workloadrun-*.yaml"):
        (saved / path.name).write_text(path.read_text())
    for node, text in logs.items():
        (saved / "logs" / "nvcre" / f"node-health-{node}.log").write_text(text)
    return saved


def collected(site: str, saved: Path, tmp: Path) -> tuple[Result, str, dict[str, Any], Path]:
    """`collect`, then `report`: the result, summary.md, verdicts.json and the archive."""
    results = tmp / "results"
    result = run("collect", "--site", EXAMPLES / site, "--from", saved, "--out", results)
    (archive,) = (results / site.removesuffix(".yaml").replace("h200", "node-health")).iterdir()
    write_report(archive.parent, tmp / "report")
    summary = (tmp / "report" / "summary.md").read_text()
    return result, summary, json.loads((archive / "verdicts.json").read_text()), archive


def nodes_of(verdicts: dict[str, Any]) -> dict[str, str]:
    return {n["node"]: n["status"] for n in verdicts["nodes"]}


def reasons_of(verdicts: dict[str, Any], node: str) -> list[str]:
    return next(n["reasons"] for n in verdicts["nodes"] if n["node"] == node)


def test_trainer_mode_a_refused_kernel_log_leaves_the_node_uncleared_despite_dcgm(
    rendered: dict[str, Path], tmp_path: Path
) -> None:
    saved = trainer_logs(rendered, tmp_path, {"h200-b": health_log("h200-b", kernel=DENIED)})
    result, summary, verdicts, archive = collected("h200-trainer.yaml", saved, tmp_path)
    assert result.exit_code == 1  # incomplete
    assert nodes_of(verdicts) == {"h200-a": "cleared", "h200-b": "untested", "h200-c": "cleared"}
    (why,) = reasons_of(verdicts, "h200-b")
    assert why.startswith(
        "not judged in node-health / node-health: NVC825 node h200-b: Xid events not judged:"
        " dmesg was refused (dmesg: read kernel buffer failed: Operation not permitted)"
    )
    assert "(hint: the pod may not read the kernel log (kernel.dmesg_restrict=1)" in why
    assert "CAP_SYSLOG" in why
    assert summary.splitlines()[2] == "**Hold back 1 of 3 nodes: h200-b (untested).**"
    assert "| h200-b | unjudged | node-health / node-health | NodeHealthUnjudged: NVC825" in (
        summary
    )
    health = next(r for r in verdicts["runs"] if r["test"] == "node-health")
    assert health["word"] == "incomplete"
    assert any(
        r["code"] == "unjudged-node" and r["message"].startswith("h200-b: NodeHealthUnjudged")
        for r in health["reasons"]
    )
    records = json.loads((archive / "summary.json").read_text())["logs"]
    (record,) = [r for r in records if r["kind"] == "node" and r["hosts"] == ["h200-b"]]
    assert (record["status"], record["errors"], record["warnings"]) == ("unjudged", [], [])
    assert record["unjudged"][0].startswith("NVC825 node h200-b: Xid events not judged")


def test_nvcre_mode_a_refused_kernel_log_leaves_the_node_uncleared(
    rendered: dict[str, Path], tmp_path: Path
) -> None:
    logs = {
        n: health_log(n, kernel=DENIED if n == "h200-c" else "")
        for n in ("h200-a", "h200-b", "h200-c")
    }
    result, _, verdicts, _ = collected(
        "h200-nvcre.yaml", nvcre_logs(rendered, tmp_path, logs), tmp_path
    )
    assert result.exit_code == 1
    assert nodes_of(verdicts) == {"h200-a": "cleared", "h200-b": "cleared", "h200-c": "untested"}
    health = next(r for r in verdicts["runs"] if r["test"] == "node-health")
    assert health["word"] == "incomplete"
    assert (
        "node-health-h200-c.log: NVC825 node h200-c: Xid events not judged"
        in health["reasons"][0]["message"]
    )


def test_a_5000_digit_count_in_a_node_health_log_is_refused_and_the_archive_written(
    rendered: dict[str, Path], tmp_path: Path
) -> None:
    xml = XML.replace("<dram_uncorrectable>0<", f"<dram_uncorrectable>{LONG}<", 1)
    saved = trainer_logs(rendered, tmp_path, {"h200-a": health_log("h200-a", xml)})
    result, _, verdicts, archive = collected("h200-trainer.yaml", saved, tmp_path)
    assert result.exit_code == 1, result.output  # incomplete, not an internal error (70)
    assert nodes_of(verdicts)["h200-a"] == "untested"
    (why,) = reasons_of(verdicts, "h200-a")
    assert "NVC800 node h200-a: GPU 0 dram_unc_volatile not judged: the number has 5000" in why
    assert (archive / "SHA256SUMS").is_file()


def test_trainer_mode_a_log_of_another_node_leaves_the_pinned_node_uncleared(
    rendered: dict[str, Path], tmp_path: Path
) -> None:
    saved = trainer_logs(rendered, tmp_path, {"h200-b": health_log("h200-a")})
    _, _, verdicts, _ = collected("h200-trainer.yaml", saved, tmp_path)
    assert nodes_of(verdicts)["h200-b"] == "untested"  # its DCGM pass does not clear it
    (why,) = reasons_of(verdicts, "h200-b")
    assert why == (
        "not judged in node-health / node-health: the log is from node h200-a, but the run was"
        " pinned to h200-b"
    )


def test_trainer_mode_a_node_without_a_node_health_log_is_not_cleared(
    rendered: dict[str, Path], tmp_path: Path
) -> None:
    saved = trainer_logs(rendered, tmp_path, {"h200-c": None})
    _, _, verdicts, _ = collected("h200-trainer.yaml", saved, tmp_path)
    assert nodes_of(verdicts) == {"h200-a": "cleared", "h200-b": "cleared", "h200-c": "untested"}
    assert reasons_of(verdicts, "h200-c") == [
        "not judged in node-health / node-health: no finished node-health log"
    ]


def test_nvcre_mode_a_named_node_without_a_log_is_named_unjudged(
    rendered: dict[str, Path], tmp_path: Path
) -> None:
    logs = {n: health_log(n) for n in ("h200-a", "h200-b")}
    _, _, verdicts, _ = collected("h200-nvcre.yaml", nvcre_logs(rendered, tmp_path, logs), tmp_path)
    assert nodes_of(verdicts) == {"h200-a": "cleared", "h200-b": "cleared", "h200-c": "untested"}
    assert reasons_of(verdicts, "h200-c") == [
        "not judged in node-health / node-health: no finished node-health log"
    ]
