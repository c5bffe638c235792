"""A trainer-mode DCGM log is bound to its node by the node its begin line names."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from nvcregen.ingest import parse_dcgm
from nvcregen.ingest.beginline import BeginLine, begin_line
from nvcregen.kinds.dcgm.kind import MARK
from nvcregen.results.logrecords import LogRecord
from nvcregen.results.nodebind import FOREIGN, begin_findings, bind_node_log, prints_begin
from nvcregen.results.words import Word

DCGM = Path(__file__).resolve().parents[2] / "fixtures" / "real-logs" / "dcgm"
JSON = (DCGM / "dcgm-3.1.0-diag-json-with-warning-prefix-and-nulls.txt").read_text()
TABLE = (DCGM / "dcgm-3.3.8-diag-r3-text-8xH100-gpu-memory-fail-cuinit.txt").read_text()
BEGIN = "@@nvcregen-dcgm begin node=gpu-07 pod=d-r1-n7-x7k2p start=2026-12-06T07:00:00Z"
BASE: dict[str, Any] = {"path": "logs/nvcre/d-r1-n7.log", "nodes": ("gpu-07",), "pod_node": ""}


def test_the_begin_line_names_node_pod_and_start_under_kubectl_timestamps() -> None:
    text = f"2026-12-06T07:00:00.123456789Z {BEGIN}\n{JSON}"
    assert begin_line(text, MARK) == BeginLine("gpu-07", "d-r1-n7-x7k2p", "2026-12-06T07:00:00Z", 1)
    assert begin_line(JSON, MARK) is None  # an older render's log


@pytest.mark.parametrize(
    ("line", "why"),
    [
        (BEGIN.replace("gpu-07", "GPU_07"), "line 1: an unreadable @@nvcregen-dcgm line"),
        (BEGIN.replace(" start=2026-12-06T07:00:00Z", ""), "line 1: an unreadable"),
        (BEGIN.replace("pod=d-r1-n7-x7k2p", "pod="), "line 1: an unreadable"),
        (f"{BEGIN}\n{BEGIN}", "line 2: a second @@nvcregen-dcgm begin line"),
    ],
)
def test_an_unreadable_or_second_begin_line_names_no_run(line: str, why: str) -> None:
    found = begin_line(f"{line}\n{JSON}", MARK)
    assert isinstance(found, str)
    assert found.startswith(why)


@pytest.mark.parametrize("body", [JSON, TABLE])
def test_dcgm_output_reads_the_same_after_the_begin_line(body: str) -> None:
    assert parse_dcgm(f"{BEGIN}\n{body}", "x") == parse_dcgm(body, "x")


def test_a_log_binds_to_the_pinned_node_and_the_pods_node() -> None:
    text = f"{BEGIN}\n{JSON}"
    assert bind_node_log(text, BASE, mark=MARK) == ("gpu-07",)
    assert bind_node_log(text, BASE | {"pod_node": "gpu-07"}, mark=MARK) == ("gpu-07",)
    assert bind_node_log(JSON, BASE, mark=MARK) == ()
    assert bind_node_log(text, BASE | {"nodes": ("gpu-08",)}, mark=MARK) == (
        "NVC730: logs/nvcre/d-r1-n7.log:1: the log is from node gpu-07 (pod d-r1-n7-x7k2p,"
        " started 2026-12-06T07:00:00Z), but the Job is pinned to gpu-08: another run's evidence"
    )
    scheduled = bind_node_log(text, BASE | {"pod_node": "gpu-09"}, mark=MARK)
    assert isinstance(scheduled, str)
    assert scheduled.endswith("but the API scheduled its pod on gpu-09: another run's evidence")
    unread = bind_node_log(f"{BEGIN} extra\n{JSON}", BASE, mark=MARK)
    assert isinstance(unread, str)
    assert unread.endswith("(no valid node, pod or start time): the log names no run")


def test_a_log_without_the_line_its_job_prints_is_not_its_own() -> None:
    """Found by review: another node's log with its begin line deleted passed as older."""
    assert bind_node_log(JSON, BASE, names_itself=False, mark=MARK) == ()  # an older render's Job
    refused = bind_node_log(JSON, BASE, names_itself=True, mark=MARK)
    assert isinstance(refused, str) and refused.startswith("NVC730: logs/nvcre/d-r1-n7.log:")
    assert "which this run's Job prints: the log is not its own" in refused
    assert prints_begin({"spec": {"template": {"spec": {"containers": [
        {"name": "dcgm", "env": [{"name": "NODE_NAME"}]}]}}}})  # fmt: skip
    assert not prints_begin({"spec": {"template": {"spec": {"containers": [{"name": "d"}]}}}})
    assert not prints_begin(None)


def record(status: str, node: str, round_: int = 1, **fields: Any) -> LogRecord:
    run = f"d-r{round_}-n{node[-1]}"
    base = {"path": f"logs/nvcre/{run}.log", "sha256": run, "stage": "s", "test": "dcgm-l1",
            "run": run, "round": round_, "group": f"n{node[-1]}", "nodes": (node,),
            "kind": "dcgm", "status": status}  # fmt: skip
    return LogRecord.model_validate(base | fields)


def test_a_foreign_log_fails_its_slots_node_and_unnamed_logs_are_one_note() -> None:
    records = [
        record(FOREIGN, "gpu-1", errors=("NVC730: logs/nvcre/d-r1-n1.log:1: from gpu-2",)),
        record("ok", "gpu-2", hosts=("gpu-2",)),
        record("ok", "gpu-3"),
        record("failed", "gpu-3", 2),
        record("no-data", "gpu-4"),
        record("ok", "gpu-5", kind="nccl"),
    ]
    found = begin_findings(records)
    assert [(f.code, f.kind, f.word, f.nodes, f.round, f.source) for f in found] == [
        ("NVC730", "unbound", Word.FAIL, ("gpu-1",), 1, "d-r1-n1"),
        ("NVC739", "bound", Word.PASS, (), None, ""),
    ]
    assert found[0].message == "logs/nvcre/d-r1-n1.log:1: from gpu-2"
    assert found[1].message.startswith(
        "2 DCGM log(s) (logs/nvcre/d-r1-n3.log and 1 more) have no `@@nvcregen-dcgm begin"
    )
    assert begin_findings(records[1:2]) == []  # every log names its node: no note
    unmarked = [record("ok", "gpu-3", kind="burnin"), record("ok", "gpu-6", kind="burnin")]
    assert begin_findings(unmarked) == []  # burn-in's script always printed its line


def test_the_nvbandwidth_begin_line_binds_by_its_own_mark_only() -> None:
    from nvcregen.kinds.nvbandwidth.reader import MARK as NVBW_MARK

    line = BEGIN.replace("@@nvcregen-dcgm", NVBW_MARK)
    assert begin_line(f"{line}\n{JSON}", NVBW_MARK) == BeginLine(
        "gpu-07", "d-r1-n7-x7k2p", "2026-12-06T07:00:00Z", 1
    )
    assert begin_line(f"{line}\n{JSON}", MARK) is None  # not a DCGM log's line
    assert begin_line(f"{BEGIN}\n{JSON}", NVBW_MARK) is None
    assert bind_node_log(f"{line}\n", BASE, mark=NVBW_MARK) == ("gpu-07",)
    refused = bind_node_log("", BASE, names_itself=True, mark=NVBW_MARK)
    assert isinstance(refused, str) and f"no `{NVBW_MARK} begin node=...` line" in refused
