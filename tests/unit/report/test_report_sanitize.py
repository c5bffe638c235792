"""`report --sanitize`: no internal address, host name or private registry left anywhere."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from reportfactory import (
    groups_run,
    sample_provenance,
    sample_run,
    sample_summary,
    sample_verdicts,
)

from nvcregen.cli import main
from nvcregen.report.folder import verify

PRIVATE = "harbor.corp.example:5000"
SECRETS = ("node-a", "node-b", "node-c", "10.20.30.41", "fe80::52b1:b1f3:51c0:ecca", PRIVATE)


def leaky_run(results: Path) -> Path:
    """The sample run with nodes, addresses and a private registry in every file."""
    summary = sample_summary()
    run = summary["runs"][0]
    run["message"] = "rank 8 on node-b (10.20.30.41, fe80::52b1:b1f3:51c0:ecca) exited"
    run["failed_nodes"] = [{"name": "node-b", "reason": "ThresholdViolation", "message": ""}]
    run["bandwidth"] = [{"ref": {"name": "x"}, "group": "group-0", "nodes": ["node-a", "node-b"]}]
    verdicts = sample_verdicts()
    verdicts["nodes"] = [
        {"node": "node-b", "status": "suspect", "word": "fail",
         "reasons": ["only in failing groups with node-a"], "runs": []},
        {"node": "node-c", "status": "cleared", "word": "pass", "reasons": [], "runs": []},
    ]  # fmt: skip
    provenance = sample_provenance()
    provenance["images"].append({"image": f"{PRIVATE}/gpu/nccl-tests:2.17@sha256:" + "ab" * 32})
    return sample_run(results, summary=summary, verdicts=verdicts, provenance=provenance)


def test_sanitized_outputs_hold_none_of_the_originals(tmp_path: Path) -> None:
    run = leaky_run(tmp_path / "results")
    out = tmp_path / "report"
    result = CliRunner().invoke(main, ["report", str(run), "--out", str(out), "--sanitize"])
    assert result.exit_code == 0, result.output
    names = sorted(p.name for p in out.iterdir())
    assert names == ["bandwidth.csv", "index.html", "summary.json", "summary.md"]
    for file in out.iterdir():
        text = file.read_text()
        assert not [s for s in SECRETS if s in text], file.name
    summary = (out / "summary.md").read_text()
    assert "**Hold back 1 of 2 nodes: node-B (suspect).**" in summary
    data = json.loads((out / "summary.json").read_text())
    assert data["runs"][0]["message"] == "rank 8 on node-B (ip-01, ip-02) exited"
    assert data["runs"][0]["bandwidth"][0]["nodes"] == ["node-A", "node-B"]
    assert "registry-01.invalid/gpu/nccl-tests:2.17" in (out / "index.html").read_text()
    assert "nvcr.io/nvidia/pytorch:26.01-py3" in summary  # public registries stay
    assert verify(run) == []  # the archive itself is untouched


def test_placeholders_are_stable(tmp_path: Path) -> None:
    run = leaky_run(tmp_path / "results")
    for out in ("one", "two"):
        args = ["report", str(run), "--out", str(tmp_path / out), "--sanitize"]
        assert CliRunner().invoke(main, args).exit_code == 0
    for name in ("index.html", "summary.md", "summary.json", "bandwidth.csv"):
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "two" / name).read_bytes()


def test_without_sanitize_nothing_is_replaced(tmp_path: Path) -> None:
    run = leaky_run(tmp_path / "results")
    assert (
        CliRunner().invoke(main, ["report", str(run), "--out", str(tmp_path / "r")]).exit_code == 0
    )
    assert "node-b" in (tmp_path / "r" / "summary.md").read_text()
    assert not (tmp_path / "r" / "summary.json").exists()


def test_sanitized_names_are_letters_never_node_numbers() -> None:
    from nvcregen.report.sanitize import letters, sanitizer

    texts = {
        "summary.json": '{"runs": [{"failed_nodes": [{"name": "gpu-01"}, {"name": "gpu-02"}]}]}',
        "verdicts.json": '{"nodes": [{"node": "gpu-01"}, {"node": "gpu-02"}]}',
        "provenance.json": "{}",
    }
    clean = sanitizer(texts)
    assert clean.names == {"gpu-01": "node-A", "gpu-02": "node-B"}  # not host-03, host-04
    assert [letters(i) for i in (0, 25, 26, 27, 701, 702)] == ["A", "Z", "AA", "AB", "ZZ", "AAA"]


def test_a_node_named_only_as_unjudged_is_replaced() -> None:
    from nvcregen.report.sanitize import sanitizer

    texts = {
        "summary.json": '{"runs": [{"unjudged_nodes": [{"name": "gpu-07"}]}]}',
        "verdicts.json": "{}",
        "provenance.json": "{}",
    }
    assert sanitizer(texts).names == {"gpu-07": "node-A"}


def test_a_node_name_inside_a_log_name_is_replaced(tmp_path: Path) -> None:
    """NVCRE mode's saved node-health logs are named by the user, often after the node
    (`node-health-node-b.log`): the log record's path and run kept the real name."""
    summary = sample_summary()
    summary["logs"] = [
        {
            "path": "logs/nvcre/node-health-node-b.log",
            "run": "node-health-node-b",
            "hosts": ["node-b"],
        }
    ]
    run = sample_run(tmp_path / "results", summary=summary)
    out = tmp_path / "report"
    result = CliRunner().invoke(main, ["report", str(run), "--out", str(out), "--sanitize"])
    assert result.exit_code == 0, result.output
    (record,) = json.loads((out / "summary.json").read_text())["logs"]
    (node,) = record["hosts"]
    assert node.startswith("node-") and node != "node-b"
    assert record["path"] == f"logs/nvcre/node-health-{node}.log"
    assert record["run"] == f"node-health-{node}"


def test_the_node_a_launcher_pod_ran_on_is_replaced(tmp_path: Path) -> None:
    """#21's binding records where a log's launcher pod ran (`pod_node`, a round's
    `scheduled_on`): a node the plan does not name (NVC733) was named only there and in
    messages, so sanitizing left it everywhere."""
    summary = sample_summary()
    summary["logs"] = [{"path": "logs/x.log", "run": "x", "pod_node": "rack7-gpu-secret"}]
    summary["runs"][0]["message"] = "the launcher pod ran on rack7-gpu-secret"
    summary["runs"][0]["bandwidth"] = [
        {"ref": {"name": "x"}, "group": "g", "nodes": [], "scheduled_on": ["rack7-gpu-secret"]}
    ]
    run = sample_run(tmp_path / "results", summary=summary)
    out = tmp_path / "report"
    result = CliRunner().invoke(main, ["report", str(run), "--out", str(out), "--sanitize"])
    assert result.exit_code == 0, result.output
    for file in out.iterdir():
        assert "rack7-gpu-secret" not in file.read_text(), file.name


def test_the_history_of_a_sanitized_report_names_no_node(tmp_path: Path) -> None:
    """The history compares each node group with its own earlier runs, so it names nodes;
    an earlier run's node this run does not name gets the next letter, not its name."""
    results = tmp_path / "results"
    groups_run(results, "20261014T080000Z-aaaaaaaaaaaa", "2026-10-14T08:00:00Z",
               {("rack7-gpu-old", "node-a"): (427.58,)})  # fmt: skip
    groups_run(results, "20261015T080000Z-bbbbbbbbbbbb", "2026-10-15T08:00:00Z",
               {("node-a", "node-b"): (430.0,)})  # fmt: skip
    out = tmp_path / "report"
    args = ["report", str(results / "edge-lab"), "--out", str(out), "--sanitize"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    summary = (out / "summary.md").read_text()
    # the sample names node-<b> and node-c too: A is node-<b>, B node-a, C node-b, D node-c
    assert "at 1GiB, nodes node-B, node-C**" in summary  # this run's own letters
    assert "at 1GiB, nodes node-B, node-E**" in summary  # the earlier run's node: the next
    for file in out.iterdir():
        text = file.read_text()
        assert not [n for n in ("rack7-gpu-old", "node-a", "node-b") if n in text], file.name


def test_secrets_an_older_archive_holds_are_masked_in_every_sanitized_output(
    tmp_path: Path,
) -> None:
    """An archive collected before collect masked them (issue #32) still holds NVCRE's
    message with a token and a `user:password@` URL: no sanitized output may."""
    token = "glpat-" + "Ab3De6Gh9Jk2Mn5Pq8St"
    summary = sample_summary()
    summary["runs"][0]["message"] = f"clone https://ci:s3cretpass@git.example.com/x with {token}"
    verdicts = sample_verdicts()
    verdicts["runs"][0]["reasons"] = [
        {"code": "NVC700", "word": "fail", "message": f"node-a: refused {token}"}
    ]
    run = sample_run(tmp_path / "results", summary=summary, verdicts=verdicts)
    out = tmp_path / "report"
    result = CliRunner().invoke(main, ["report", str(run), "--out", str(out), "--sanitize"])
    assert result.exit_code == 0, result.output
    for file in out.iterdir():
        text = file.read_text()
        assert token not in text and "s3cretpass" not in text, file.name
    data = json.loads((out / "summary.json").read_text())
    assert data["runs"][0]["message"] == "clone https://ci:***@git.example.com/x with ***"
    assert verify(run) == []
