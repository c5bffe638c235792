"""`nvcregen collect --from DIR`, end to end: a verified archive with verdicts."""

from __future__ import annotations

import csv
import hashlib
import io
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from labstate import find, lab_state, node_results, write_export

from nvcregen.cli import main
from nvcregen.collect.collector import collect
from nvcregen.collect.model import CollectError, CollectOptions, CollectOutcome
from nvcregen.core.errors import ExitCode
from nvcregen.results.archive import verify_archive

ROOT = Path(__file__).resolve().parents[3]
SITE_FILE = ROOT / "tests" / "fixtures" / "collect" / "site.yaml"
TWO_NODE_BW = "lab-two-node-0002-communication-nccl-all-reduce-group-0-{}-job-bw"


def run(tmp_path: Path, objects: list[dict[str, Any]], name: str = "export") -> CollectOutcome:
    folder = write_export(tmp_path / name, objects)
    return collect(CollectOptions(str(SITE_FILE), tmp_path / "results", ROOT, from_dir=folder))


def read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def verdict(outcome: CollectOutcome, test: str, scope: str) -> dict[str, Any]:
    data = read_json(outcome.archive.path / "verdicts.json")
    found = [v for v in data["thresholds"] if v["test"] == test and v["scope"] == scope]
    assert len(found) == 1
    return found[0]  # type: ignore[no-any-return]


def test_a_complete_collection_is_archived_verified_and_passes(tmp_path: Path) -> None:
    outcome = run(tmp_path, lab_state())
    assert (outcome.archive.state, outcome.archive.verified) == ("written", True)
    assert outcome.exit_code is ExitCode.OK
    folder = outcome.archive.path
    assert folder.parent == tmp_path / "results" / "lab"
    assert verify_archive(folder) == []
    two = verdict(outcome, "nccl-all-reduce", "inter-node")
    assert two["word"] == "pass"
    busbw = two["groups"][0]["figures"][0]
    assert (busbw["name"], busbw["median"], busbw["rounds"]) == (
        "busbw",
        427.58,
        [363.76, 427.58, 452.28],
    )
    assert busbw["spread"] == pytest.approx((452.28 - 363.76) / 427.58)
    provenance = read_json(folder / "provenance.json")
    assert provenance["site"]["sha256"] == hashlib.sha256(SITE_FILE.read_bytes()).hexdigest()
    assert provenance["site"]["file"] == "tests/fixtures/collect/site.yaml"
    assert {i["digest"] for i in provenance["images"]} == {
        "sha256:" + "4c" * 32,
        "sha256:" + "9e" * 32,
    }
    rows = list(csv.DictReader(io.StringIO((folder / "bandwidth.csv").read_text())))
    assert len(rows) == (6 + 3 + 3) * 3  # rounds x sizes of the three all-reduce runs
    gib = [
        r
        for r in rows
        if r["stage"] == "two-node"
        and r["test"] == "nccl-all-reduce"
        and r["size_bytes"] == str(1 << 30)
    ]
    assert [(r["round"], r["busbw_gbs"], r["samples"], r["finality"]) for r in gib] == [
        ("1", "363.76", "10", "final"),
        ("2", "427.58", "10", "final"),
        ("3", "452.28", "10", "final"),
    ]
    archived = {p.parent.parent.name for p in (folder / "objects").rglob("*.yaml")}
    assert archived == {
        "certification",
        "workloadrun",
        "workflow",
        "bandwidthmeasurement",
        "goodputmeasurement",
        "configmap",
        "reportexport",
    }
    assert not list((folder / "objects").rglob("other-site*"))  # another site's objects stay out


@pytest.mark.parametrize(
    "conditions",
    [
        [{"type": "Measuring", "status": "True", "reason": "JobRunning"}],
        [{"type": "Complete", "status": "True", "reason": "NoDataCollected"}],
        [{"type": "Complete", "status": "False", "reason": "FinalReadPending"}],
    ],
)
def test_a_provisional_measurement_is_never_final(
    tmp_path: Path, conditions: list[dict[str, str]]
) -> None:
    objects = lab_state()
    measuring = find(objects, "BandwidthMeasurement", TWO_NODE_BW.format(3))
    measuring["status"]["conditions"] = [
        {**c, "message": "", "lastTransitionTime": "2026-10-14T12:05:00Z"} for c in conditions
    ]
    measuring["status"]["results"][2]["busBW"] = "999.99"  # a fast provisional value never counts
    outcome = run(tmp_path, objects)
    assert outcome.archive.verified
    assert outcome.exit_code is ExitCode.DRIFT  # exit status 1: not every verdict passed
    two = verdict(outcome, "nccl-all-reduce", "inter-node")
    assert two["word"] == "incomplete"
    assert "provisional" in [r["code"] for r in two["reasons"]]
    assert two["groups"][0]["final_rounds"] == 2
    assert 999.99 not in two["groups"][0]["figures"][0]["rounds"]
    summary = read_json(outcome.archive.path / "summary.json")
    rounds = summary["runs"][2]["bandwidth"]
    assert [r["finality"] for r in rounds] == ["final", "final", "provisional"]


def test_a_threshold_fails_when_the_transport_is_wrong(tmp_path: Path) -> None:
    objects = lab_state()
    for i in (1, 2, 3):  # NVCRE after 0.7.0 records the network NCCL used
        find(objects, "BandwidthMeasurement", TWO_NODE_BW.format(i))["status"]["transport"] = [
            "Socket"
        ]
    outcome = run(tmp_path, objects)
    two = verdict(outcome, "nccl-all-reduce", "inter-node")
    assert two["word"] == "fail"
    assert [r["code"] for r in two["reasons"]] == ["transport"]
    assert outcome.exit_code is ExitCode.DRIFT
    tcp = verdict(outcome, "nccl-all-reduce-tcp", "inter-node")
    assert tcp["word"] == "pass"  # the TCP baseline expects Socket and pins it


def test_failed_nodes_are_decoded_into_the_summary_and_fail_the_run(tmp_path: Path) -> None:
    objects = lab_state()
    cert = find(objects, "Certification", "lab-single-node-0001")
    cert["status"]["categoryStatuses"][0]["status"] = "Failed"
    cert["status"]["categoryStatuses"][0]["failedNodesRef"] = {
        "kind": "ConfigMap",
        "name": "nodes-failed",
    }
    wf = find(objects, "Workflow", "lab-single-node-0001-communication-nccl-all-reduce")
    rows = [{"name": "node-b", "reason": "ThresholdViolation", "message": "busBandwidthGBps 401.2"}]
    objects.append(node_results("nodes-failed", wf, failed=rows))
    outcome = run(tmp_path, objects)
    summary = read_json(outcome.archive.path / "summary.json")
    assert summary["runs"][0]["failed_nodes"] == rows
    runs = read_json(outcome.archive.path / "verdicts.json")["runs"]
    assert runs[0]["word"] == "fail"
    assert "node-b: ThresholdViolation (busBandwidthGBps 401.2)" in [
        r["message"] for r in runs[0]["reasons"]
    ]
    assert (
        outcome.archive.path / "objects" / "configmap" / "nvcre" / "nodes-failed.yaml"
    ).is_file()


def test_collecting_the_same_state_again_changes_nothing(tmp_path: Path) -> None:
    first = run(tmp_path, lab_state())
    before = {p: p.read_bytes() for p in first.archive.path.rglob("*") if p.is_file()}
    second = run(tmp_path, lab_state(), name="export-again")
    assert second.archive.path == first.archive.path
    assert (second.archive.state, second.archive.verified) == ("exists", True)
    assert {p: p.read_bytes() for p in first.archive.path.rglob("*") if p.is_file()} == before


def test_a_changed_state_is_a_new_run(tmp_path: Path) -> None:
    first = run(tmp_path, lab_state())
    objects = lab_state()
    find(objects, "Certification", "lab-two-node-0002")["metadata"]["resourceVersion"] = "9999"
    second = run(tmp_path, objects, name="export-later")
    assert second.archive.path != first.archive.path
    assert sorted(p.name for p in (tmp_path / "results" / "lab").iterdir()) == sorted(
        [first.archive.path.name, second.archive.path.name]
    )


def test_an_unreadable_folder_archives_nothing(tmp_path: Path) -> None:
    folder = tmp_path / "export"
    folder.mkdir()
    (folder / "broken.yaml").write_text("kind: [\n")
    with pytest.raises(CollectError, match=r"broken\.yaml"):
        collect(CollectOptions(str(SITE_FILE), tmp_path / "results", ROOT, from_dir=folder))
    assert not (tmp_path / "results").exists()


def test_an_unknown_site_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(CollectError, match="no site 'nowhere'"):
        collect(CollectOptions("nowhere", tmp_path / "results", ROOT, from_dir=tmp_path))


def test_the_command_line_prints_the_archive_and_exits_by_verdict(tmp_path: Path) -> None:
    folder = write_export(tmp_path / "export", lab_state())
    out = tmp_path / "results"
    args = ["collect", "--site", str(SITE_FILE), "--from", str(folder), "--out", str(out)]
    done = CliRunner().invoke(main, args)
    assert done.exit_code == 0, done.output
    first = done.stdout.splitlines()[0]
    assert first.startswith(f"{out.as_posix()}/lab/20261014T130100Z-") and first.endswith(
        ": written, verified"
    )
    assert done.stderr.endswith("nvcregen: collect lab: pass (10 pass, 0 incomplete, 0 fail)\n")
    again = CliRunner().invoke(main, [*args, "--format", "json"])
    data = json.loads(again.stdout)
    assert (data["state"], data["verified"], data["verdict"]) == ("exists", True, "pass")


@pytest.mark.parametrize(
    ("with_folder", "extra", "message"),
    [
        (False, [], "give exactly one of --context CTX or --from DIR"),
        (True, ["--context", "lab"], "give exactly one of --context CTX or --from DIR"),
        (True, ["--reclaim"], "--reclaim deletes from a cluster: it needs --context"),
    ],
)
def test_usage_errors_exit_2(
    tmp_path: Path, with_folder: bool, extra: list[str], message: str
) -> None:
    source = ["--from", str(tmp_path)] if with_folder else []
    done = CliRunner().invoke(main, ["collect", "--site", str(SITE_FILE), *source, *extra])
    assert done.exit_code == 2
    assert message in done.stderr


def test_an_invalid_site_prints_its_diagnostics_and_exits_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(SITE_FILE.read_text().replace("rounds: 3", "rounds: three"))
    done = CliRunner().invoke(main, ["collect", "--site", str(bad), "--from", str(tmp_path)])
    assert done.exit_code == 2
    assert "error[NVC2" in done.stderr
    assert "is not a valid site" in done.stderr


def test_an_archive_that_cannot_be_written_is_an_error(tmp_path: Path) -> None:
    folder = write_export(tmp_path / "export", lab_state())
    blocked = tmp_path / "results"
    blocked.write_text("a file where the results folder should be")
    with pytest.raises(CollectError, match="cannot write the archive under"):
        collect(CollectOptions(str(SITE_FILE), blocked, ROOT, from_dir=folder))


def test_reclaim_is_refused_for_a_folder(tmp_path: Path) -> None:
    with pytest.raises(CollectError, match="cannot be used with a folder"):
        collect(CollectOptions(str(SITE_FILE), tmp_path, ROOT, from_dir=tmp_path, reclaim=True))
