"""Link counters collected from a packed site's saved logs (issue #36, item 3): the
verdicts name node + HCA + port, and a node whose port failed is held back alone.

Logs as the packed runs print them (`packfactory.py`), the link counters section a
passing run of the eight HCAs built from the public captures (`linkctrlogs.py`).
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from linkctrlogs import ctr_lines, every_port, grown, healthy_counters, link_log
from packfactory import PackLog, packed, pod_log, section, write_packed_logs
from trainerfactory import example_text

from nvcregen.collect.collector import collect
from nvcregen.collect.model import CollectOptions, CollectOutcome
from nvcregen.core.errors import ExitCode

ROOT = Path(__file__).resolve().parents[3]
STAGE = "      - name: single-node\n        scope: intra-node\n        tests: ["
TEST = "link-counters"


def site() -> str:
    """The shipped trainer site, packed, with link counters in its intra-node stage."""
    text = packed(example_text()).replace(STAGE, STAGE + f"{TEST}, ", 1)
    return text.replace("deadline: 16h,", "deadline: 20h,")  # its runs join the budget


def collected(tmp: Path, edit: Any = None) -> CollectOutcome:
    text = site()
    tmp.mkdir(parents=True, exist_ok=True)
    (tmp / "site.yaml").write_text(text, encoding="utf-8")
    write_packed_logs(tmp / "saved", text, edit=edit)
    options = CollectOptions(str(tmp / "site.yaml"), tmp / "results", ROOT, from_dir=tmp / "saved")
    return collect(options)


def downed(logs: list[PackLog]) -> None:
    """node-b's round 2: mlx5_3 port 1 lost its link twice while its traffic ran."""
    log = pod_log(logs, TEST, 2, "node-b")
    i = section(log, TEST)
    was = log.sections[i]
    after = every_port(healthy_counters())
    after[("mlx5_3", 1)] = ctr_lines(
        "mlx5_3", 1, "counters", grown(healthy_counters(), link_downed=2)
    )
    body = link_log(
        every_port(healthy_counters()),
        after,
        seconds=75,
        node="node-b",
        pod=was.pod,
        start=was.start,
    )
    log.sections[i] = replace(was, body=body)


def test_passing_counters_clear_every_node(tmp_path: Path) -> None:
    outcome = collected(tmp_path)
    assert outcome.exit_code is ExitCode.OK
    assert {n.node: str(n.status) for n in outcome.verdicts.nodes} == {
        "node-a": "cleared",
        "node-b": "cleared",
    }
    summary = json.loads((outcome.archive.path / "summary.json").read_text())
    ours = [log for log in summary["logs"] if log["test"] == TEST]
    assert len(ours) == 2 * 3 and all(log["status"] == "ok" for log in ours)
    assert all(log["hosts"] == log["nodes"] for log in ours)  # bound by its begin line


def test_a_downed_link_fails_its_node_named_with_hca_and_port(tmp_path: Path) -> None:
    outcome = collected(tmp_path, downed)
    assert outcome.exit_code is ExitCode.DRIFT
    nodes = {n.node: n for n in outcome.verdicts.nodes}
    assert str(nodes["node-a"].status) == "cleared"
    assert str(nodes["node-b"].status) == "failed"
    (reason,) = [r for r in nodes["node-b"].reasons if "LinkCountersFailed" in r]
    assert "NVC762: node-b mlx5_3 port 1: counters/link_downed grew by 2, more than 0" in reason
    verdicts = json.loads((outcome.archive.path / "verdicts.json").read_text())
    text = json.dumps(verdicts)
    assert "node-b mlx5_3 port 1" in text and "LinkCountersFailed" in text
