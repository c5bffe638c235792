"""`nvcregen collect --from DIR` for a trainer-mode site: saved pod logs, judged as ingested."""

from __future__ import annotations

import csv
import hashlib
import io
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from trainerlogs import (
    IB_LINES,
    REAL,
    SOCKET_LINES,
    default_log,
    is_two_node_all_reduce,
    labels,
    nccl_log,
    runs,
    write_saved_logs,
)

from nvcregen.cli import main
from nvcregen.collect.collector import collect
from nvcregen.collect.model import CollectOptions, CollectOutcome
from nvcregen.core.errors import ExitCode
from nvcregen.kinds.nccl.files import ingest_nccl
from nvcregen.results.archive import verify_archive

ROOT = Path(__file__).resolve().parents[3]
SITE = str(ROOT / "tests" / "fixtures" / "perrun" / "h20-3e-trainer.yaml")
GIB = 1 << 30


def run(folder: Path, out: Path) -> CollectOutcome:
    return collect(CollectOptions(SITE, out, ROOT, from_dir=folder))


def verdicts(outcome: CollectOutcome) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((outcome.archive.path / "verdicts.json").read_text())
    return data


def threshold(outcome: CollectOutcome, test: str, scope: str) -> dict[str, Any]:
    found = [
        v for v in verdicts(outcome)["thresholds"] if v["test"] == test and v["scope"] == scope
    ]
    assert len(found) == 1
    return found[0]  # type: ignore[no-any-return]


def two_node_logs(folder: Path) -> list[Path]:
    """The saved launcher logs of the two-node all-reduce, by round."""
    names = sorted(
        (labels(o)["nvcregen.io/round"], o["metadata"]["name"])
        for o in runs()
        if is_two_node_all_reduce(o)
    )
    return [folder / "logs" / "nvcre" / f"{name}.log" for _, name in names]


def test_collect_from_saved_logs_gives_the_verdicts_of_ingest(tmp_path: Path) -> None:
    folder = write_saved_logs(tmp_path / "saved")
    outcome = run(folder, tmp_path / "results")
    assert (outcome.archive.state, outcome.archive.verified) == ("written", True)
    assert outcome.exit_code is ExitCode.OK
    ingested = ingest_nccl(two_node_logs(folder), at=GIB)
    (medians,) = ingested.summary
    assert medians.median_busbw_gbs == 427.58  # the field report's middle round
    verdict = threshold(outcome, "nccl-all-reduce", "inter-node")
    (group,) = verdict["groups"]
    figures = {f["name"]: f for f in group["figures"]}
    assert figures["busbw"]["median"] == medians.median_busbw_gbs
    assert figures["algbw"]["median"] == medians.median_algbw_gbs
    assert figures["busbw"]["spread"] == medians.spread
    assert figures["busbw"]["rounds"] == [363.76, 427.58, 452.28]
    assert [list(r.transports) for r in ingested.runs] == [["IB"]] * 3
    assert group["transport"] == {"expected": "IB", "seen": ["IB"], "pinned": "IB", "checked": True}
    assert (verdict["word"], group["nodes"]) == ("pass", ["node-a", "node-b"])
    tcp = threshold(outcome, "nccl-all-reduce-tcp", "inter-node")
    assert tcp["word"] == "pass"
    assert tcp["groups"][0]["transport"]["seen"] == ["Socket"]


@pytest.mark.slow
def test_the_archive_holds_every_log_byte_for_byte(tmp_path: Path) -> None:
    folder = write_saved_logs(tmp_path / "saved")
    outcome = run(folder, tmp_path / "results")
    archive = outcome.archive.path
    assert verify_archive(archive) == []
    sums = (archive / "SHA256SUMS").read_text()
    saved = sorted(p for p in (folder / "logs").rglob("*.log"))
    assert len(saved) == len(runs()) == 42
    for path in saved:
        kept = archive / path.relative_to(folder)
        assert kept.read_bytes() == path.read_bytes()
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        assert f"{digest}  {path.relative_to(folder).as_posix()}" in sums
    summary = json.loads((archive / "summary.json").read_text())
    assert len(summary["logs"]) == 42
    provenance = json.loads((archive / "provenance.json").read_text())
    assert provenance["nccl_versions"] == ["2.21.5+cuda12.4"]
    assert provenance["dcgm_versions"] == ["3.1.0"]
    rows = list(csv.DictReader(io.StringIO((archive / "bandwidth.csv").read_text())))
    gib = [r for r in rows if r["stage"] == "two-node" and r["test"] == "nccl-all-reduce"]
    gib = [r for r in gib if r["size_bytes"] == str(GIB)]
    assert [(r["round"], r["busbw_gbs"], r["samples"]) for r in gib] == [
        ("1", "363.76", "1"),
        ("2", "427.58", "1"),
        ("3", "452.28", "1"),
    ]
    again = run(folder, tmp_path / "results")  # same logs, same run id: kept, re-verified
    assert (again.archive.path, again.archive.state) == (archive, "exists")


def test_logs_are_placed_by_name_without_exported_objects(tmp_path: Path) -> None:
    with_objects = run(write_saved_logs(tmp_path / "a"), tmp_path / "results-a")
    by_name = run(write_saved_logs(tmp_path / "b", export=False), tmp_path / "results-b")
    assert not (tmp_path / "b" / "objects.yaml").exists()
    assert verdicts(by_name) == verdicts(with_objects)
    assert by_name.exit_code is ExitCode.OK


def test_socket_where_ib_is_expected_fails_with_the_transport_reason(tmp_path: Path) -> None:
    def socket(obj: dict[str, Any]) -> str:
        if is_two_node_all_reduce(obj):
            return nccl_log(obj, SOCKET_LINES)
        return default_log(obj)

    outcome = run(write_saved_logs(tmp_path / "saved", socket), tmp_path / "results")
    verdict = threshold(outcome, "nccl-all-reduce", "inter-node")
    assert verdict["word"] == "fail"  # however fast: 427.58 GB/s would pass
    assert [r["code"] for r in verdict["reasons"]] == ["transport"]
    assert "expected IB (RDMA), but the rounds ran over Socket" in verdict["reasons"][0]["message"]
    assert outcome.exit_code is ExitCode.DRIFT
    direct = ingest_nccl(two_node_logs(tmp_path / "saved"))
    assert {r.transports for r in direct.runs} == {("Socket",)}


def test_a_truncated_log_is_not_final(tmp_path: Path) -> None:
    def cut(obj: dict[str, Any]) -> str:
        text = default_log(obj)
        if is_two_node_all_reduce(obj) and labels(obj)["nvcregen.io/round"] == "3":
            return text.split("# Out of bounds")[0]  # the launcher was stopped mid-run
        return text

    folder = write_saved_logs(tmp_path / "saved", cut)
    outcome = run(folder, tmp_path / "results")
    assert [r.status for r in ingest_nccl(two_node_logs(folder)).runs] == [
        "ok",
        "ok",
        "truncated",
    ]
    verdict = threshold(outcome, "nccl-all-reduce", "inter-node")
    assert verdict["word"] == "incomplete"
    codes = {r["code"] for r in verdict["reasons"]}
    assert codes == {"provisional", "rounds"}
    (group,) = verdict["groups"]
    assert (group["rounds"], group["final_rounds"]) == (3, 2)
    run_verdict = next(
        v
        for v in verdicts(outcome)["runs"]
        if (v["stage"], v["test"]) == ("two-node", "nccl-all-reduce")
    )
    assert (run_verdict["state"], run_verdict["word"]) == ("in-progress", "incomplete")
    assert outcome.exit_code is ExitCode.DRIFT


def test_failed_runs_fail_and_a_dcgm_failure_names_its_node(tmp_path: Path) -> None:
    failed_nccl = (
        REAL
        / "nccl-tests"
        / "allreduce-2node-2xGH200-v2.17.8-wrong-nonzero-out-of-bounds-4-FAILED.txt"
    )
    failed_dcgm = REAL / "dcgm" / "dcgm-4.4.1-diag-r2-text-8xB200-slurm-pcie-fail.txt"

    def broken(obj: dict[str, Any]) -> str:
        name = obj["metadata"]["name"]
        if is_two_node_all_reduce(obj) and name.endswith("-r2-g0"):
            return IB_LINES + failed_nccl.read_text()
        if labels(obj)["nvcregen.io/test"] == "dcgm-l2" and name.endswith("-r1-n1"):
            # the real log, below the begin line its Job's script prints (NODE_NAME)
            begin = default_log(obj).splitlines(keepends=True)[0]
            return begin + failed_dcgm.read_text()
        return default_log(obj)

    outcome = run(write_saved_logs(tmp_path / "saved", broken), tmp_path / "results")
    verdict = threshold(outcome, "nccl-all-reduce", "inter-node")
    assert verdict["word"] == "fail"
    assert "job-failed" in {r["code"] for r in verdict["reasons"]}
    dcgm = next(v for v in verdicts(outcome)["runs"] if v["test"] == "dcgm-l2")
    assert dcgm["word"] == "fail"
    failed = [r["message"] for r in dcgm["reasons"] if r["code"] == "failed-node"]
    assert len(failed) == 1
    assert failed[0].startswith("node-b: DiagnosticFailed (round 1: ")


def test_missing_and_unknown_logs_are_incomplete(tmp_path: Path) -> None:
    folder = write_saved_logs(tmp_path / "saved", keep=lambda o: not is_two_node_all_reduce(o))
    (folder / "logs" / "nvcre" / "someone-elses-pod.log").write_text("hello\n")
    outcome = run(folder, tmp_path / "results")
    assert threshold(outcome, "nccl-all-reduce", "inter-node")["word"] == "incomplete"
    summary = json.loads((outcome.archive.path / "summary.json").read_text())
    assert summary["problems"] == [
        "logs/nvcre/someone-elses-pod.log: someone-elses-pod: "
        "not the name of a TrainJob, Job or pod of this site"
    ]
    assert outcome.verdicts.word == "incomplete"


def test_the_command_line_collects_saved_logs(tmp_path: Path) -> None:
    folder = write_saved_logs(tmp_path / "saved")
    out = tmp_path / "results"
    args = ["collect", "--site", SITE, "--from", str(folder), "--out", str(out), "--format", "json"]
    done = CliRunner().invoke(main, args)
    assert done.exit_code == 0, done.output
    data = json.loads(done.stdout)
    assert (data["verified"], data["verdict"]) == (True, "pass")
    empty = tmp_path / "empty"
    empty.mkdir()
    nothing = CliRunner().invoke(main, ["collect", "--site", SITE, "--from", str(empty)])
    assert nothing.exit_code == 2
    assert "no saved logs" in nothing.output
