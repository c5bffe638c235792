"""Finding the run and verifying it: a run that does not match SHA256SUMS is refused."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner
from reportfactory import sample_files, sample_run, sample_summary, write_run
from timebounds import HANG

from nvcregen.cli import main
from nvcregen.core.errors import ExitCode
from nvcregen.report.archive import read_archive
from nvcregen.report.folder import (
    ReportError,
    entry,
    locate,
    run_sort_key,
    verified_run,
    verify,
)
from nvcregen.report.markdown import summary_markdown
from nvcregen.report.writer import write_report


def test_a_written_run_verifies(tmp_path: Path) -> None:
    assert verify(sample_run(tmp_path)) == []


@pytest.mark.parametrize(
    ("tamper", "problem"),
    [
        (lambda r: (r / "verdicts.json").write_text("{}"), "verdicts.json does not match"),
        (lambda r: (r / "bandwidth.csv").unlink(), "bandwidth.csv is listed in SHA256SUMS but"),
        (lambda r: (r / "extra.txt").write_text("x"), "extra.txt is not listed in SHA256SUMS"),
        (lambda r: (r / "SHA256SUMS").unlink(), "SHA256SUMS cannot be read"),
        (
            lambda r: (r / "SHA256SUMS").write_text(f"{'0' * 64}  ../../etc/passwd\n"),
            "names a path outside the run",
        ),
        (
            lambda r: (r / "SHA256SUMS").write_text("not a sum line\n"),
            "line 1 is not `<sha256>  <path>`",
        ),
    ],
)
def test_a_changed_archive_does_not_verify(tmp_path: Path, tamper: object, problem: str) -> None:
    run = sample_run(tmp_path)
    tamper(run)  # type: ignore[operator]
    problems = verify(run)
    assert any(problem in p for p in problems), problems
    with pytest.raises(ReportError, match="does not verify") as caught:
        verified_run(run)
    assert any(problem in p for p in caught.value.problems)


def test_a_run_missing_a_required_file_does_not_verify(tmp_path: Path) -> None:
    files = sample_files()
    del files["provenance.json"]
    run = write_run(tmp_path / "run", files)
    assert verify(run) == ["provenance.json is missing"]


def test_the_command_refuses_a_changed_archive_and_writes_nothing(tmp_path: Path) -> None:
    run = sample_run(tmp_path)
    summary = sample_summary() | {"verdict": "pass"}
    (run / "summary.json").write_text(json.dumps(summary))
    out = tmp_path / "report"
    result = CliRunner().invoke(main, ["report", str(run), "--out", str(out)])
    assert result.exit_code == ExitCode.INVALID
    assert "does not verify against its SHA256SUMS; no report written" in result.stderr
    assert "summary.json does not match its sha256 in SHA256SUMS" in result.stderr
    assert not out.exists()


def test_a_site_folder_reports_its_newest_run_and_lists_all(tmp_path: Path) -> None:
    old = sample_run(tmp_path, "20261013T090000Z-aaaaaaaaaaaa")
    new = sample_run(tmp_path, "20261014T130100Z-bbbbbbbbbbbb")
    undated = sample_run(tmp_path, "undated-cccccccccccc")
    (tmp_path / "edge-lab" / ".20261015T000000Z-dddddddddddd.tmp-1").mkdir()  # half written
    located = locate(tmp_path / "edge-lab")
    assert located.run == new
    assert [r.path for r in located.runs] == [undated, old, new]


def test_the_newest_run_must_verify_even_when_older_ones_do(tmp_path: Path) -> None:
    sample_run(tmp_path, "20261013T090000Z-aaaaaaaaaaaa")
    new = sample_run(tmp_path, "20261014T130100Z-bbbbbbbbbbbb")
    (new / "bandwidth.csv").write_text("changed\n")
    with pytest.raises(ReportError, match="20261014T130100Z-bbbbbbbbbbbb does not verify"):
        write_report(tmp_path / "edge-lab", tmp_path / "out")


def test_a_results_root_is_refused_with_its_site_folders_named(tmp_path: Path) -> None:
    sample_run(tmp_path)
    with pytest.raises(ReportError, match=r"holds site folders \(edge-lab\): give one"):
        locate(tmp_path)
    with pytest.raises(ReportError, match="neither a run folder"):
        locate(tmp_path / "edge-lab" / "20261014T130100Z-0123456789ab" / "objects")


def test_run_ids_sort_undated_first_then_by_time() -> None:
    ids = ["20261014T130100Z-b", "undated-a", "20261013T090000Z-c"]
    assert sorted(ids, key=run_sort_key) == [
        "undated-a", "20261013T090000Z-c", "20261014T130100Z-b"
    ]  # fmt: skip


def test_the_report_is_not_written_into_the_archive(tmp_path: Path) -> None:
    run = sample_run(tmp_path)
    with pytest.raises(ReportError, match="inside the archive"):
        write_report(run, run / "report")
    assert verify(run) == []


def test_a_file_that_is_not_what_collect_writes_is_named(tmp_path: Path) -> None:
    files = sample_files()
    files["verdicts.json"] = json.dumps({"word": "maybe"})
    run = write_run(tmp_path / "run", files)
    with pytest.raises(ReportError, match=r"verdicts\.json: word: Input should be 'pass'"):
        write_report(run, tmp_path / "out")
    files["summary.json"] = "{not json"
    run = write_run(tmp_path / "run2", files)
    with pytest.raises(ReportError, match=r"summary\.json: error\[NVC716\]: not JSON"):
        write_report(run, tmp_path / "out")


def test_runs_are_ordered_by_when_their_measurements_finished_not_by_hash(
    tmp_path: Path,
) -> None:
    """Two runs from saved logs: both `undated-<hash>`; the one measured later is newest."""
    import os

    def summary(finished: str | None) -> dict[str, object]:
        return sample_summary() | {"finished_at": finished}

    later = sample_run(tmp_path, "undated-111111111111", summary=summary("2026-10-15T08:00:00Z"))
    earlier = sample_run(tmp_path, "undated-ffffffffffff", summary=summary("2026-10-14T08:00:00Z"))
    located = locate(tmp_path / "edge-lab")
    assert located.run == later
    assert [r.path for r in located.runs] == [earlier, later]
    assert located.runs[-1].finished_at == "2026-10-15T08:00:00Z"
    # with no time in either, the one collected last is newest, whatever its hash
    first = sample_run(tmp_path / "b", "undated-ffffffffffff", summary=summary(None))
    second = sample_run(tmp_path / "b", "undated-111111111111", summary=summary(None))
    os.utime(first / "SHA256SUMS", (1_700_000_000, 1_700_000_000))
    os.utime(second / "SHA256SUMS", (1_800_000_000, 1_800_000_000))
    assert locate(tmp_path / "b" / "edge-lab").run == second


def _at(run: Path, when: str) -> Path:
    """Date the run's collection (its SHA256SUMS file's time) to `when`, UTC."""
    stamp = datetime.strptime(when, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC).timestamp()
    os.utime(run / "SHA256SUMS", (stamp, stamp))
    return run


MEASURED = "2026-10-14T08:00:00Z"


def finished(when: str | None) -> dict[str, object]:
    return sample_summary() | {"finished_at": when}


def test_a_run_dated_2099_is_refused_not_the_newest(tmp_path: Path) -> None:
    """Issue #31: a completionTime in 2099 made a run the newest for report and verify."""
    good = sample_run(tmp_path, "undated-aaaaaaaaaaaa", summary=finished("2026-10-14T08:00:00Z"))
    future = sample_run(tmp_path, "undated-bbbbbbbbbbbb", summary=finished("2099-01-01T00:00:00Z"))
    _at(good, "2026-10-14T09:00:00Z")
    _at(future, "2026-10-15T09:00:00Z")
    located = locate(tmp_path / "edge-lab")
    assert [(r.path, r.order[1]) for r in located.runs] == [
        (good, "2026-10-14T08:00:00.000000Z"),
        (future, "2026-10-15T09:00:00.000000Z"),  # at its collection, not in 2099
    ]
    (problem,) = located.runs[-1].problems
    assert problem.startswith(
        "error[NVC755]: it says its measurements finished at 2099-01-01T00:00:00Z, after it"
        " was collected (2026-10-15T09:00:00Z): a run cannot be measured after it was archived"
    )
    out = str(tmp_path / "r")
    result = CliRunner().invoke(main, ["report", str(tmp_path / "edge-lab"), "--out", out])
    assert result.exit_code == ExitCode.INVALID
    assert "undated-bbbbbbbbbbbb does not verify" in result.stderr and "NVC755" in result.stderr
    history = CliRunner().invoke(main, ["history", str(tmp_path / "edge-lab")])
    assert history.exit_code == 0, history.output
    assert "left out: undated-bbbbbbbbbbbb: refused (NVC755): measured, it says, after it was" in (
        history.stdout
    )
    assert "history of edge-lab: 1 run(s)" in history.stdout
    listed = summary_markdown(read_archive(good), located.runs)
    assert "- undated-bbbbbbbbbbbb — measured until 2099-01-01T00:00:00Z — refused (NVC755)" in (
        listed
    )


@pytest.mark.parametrize(
    ("measured", "refused"),
    [("2026-10-14T08:05:00Z", False), ("2026-10-14T08:05:01Z", True)],
)
def test_a_cluster_clock_may_run_five_minutes_ahead(
    tmp_path: Path, measured: str, refused: bool
) -> None:
    run = _at(sample_run(tmp_path, summary=finished(measured)), "2026-10-14T08:00:00Z")
    assert bool(locate(run).runs[0].problems) is refused


def test_a_time_after_collection_is_taken_as_the_collection_time(tmp_path: Path) -> None:
    # measured 08:04 but collected 08:01: ordered at 08:01, before a run measured at 08:02
    late = sample_run(tmp_path, "undated-aaaaaaaaaaaa", summary=finished("2026-10-14T08:04:00Z"))
    other = sample_run(tmp_path, "undated-bbbbbbbbbbbb", summary=finished("2026-10-14T08:02:00Z"))
    _at(late, "2026-10-14T08:01:00Z")
    _at(other, "2026-10-14T09:00:00Z")
    assert locate(tmp_path / "edge-lab").run == other


def test_a_run_copied_under_another_name_is_listed_once(tmp_path: Path) -> None:
    """Issue #31: `history` listed a run folder copied under another name twice."""
    original = sample_run(
        tmp_path, "undated-bbbbbbbbbbbb", summary=finished("2026-10-14T08:00:00Z")
    )
    copy = shutil.copytree(original, tmp_path / "edge-lab" / "00-copy")  # sorts first by name
    located = locate(tmp_path / "edge-lab")
    assert [r.path for r in located.runs] == [original]
    assert located.findings == (
        f"error[NVC756]: {copy} holds the run of {original} (the same SHA256SUMS): listed once,"
        " as undated-bbbbbbbbbbbb (hint: a run copied under another name; remove the copy)",
    )
    history = CliRunner().invoke(main, ["history", str(tmp_path / "edge-lab"), "--format", "json"])
    doc = json.loads(history.stdout)
    assert [r["run_id"] for r in doc["runs"]] == ["undated-bbbbbbbbbbbb"]
    assert doc["skipped"] == list(located.findings)
    report = CliRunner().invoke(
        main, ["report", str(tmp_path / "edge-lab"), "--out", str(tmp_path / "r")]
    )
    assert report.exit_code == 0, report.output
    assert "error[NVC756]" in report.stderr


def test_one_run_id_in_two_folders_is_listed_once_even_when_the_files_differ(
    tmp_path: Path,
) -> None:
    original = sample_run(
        tmp_path, "undated-bbbbbbbbbbbb", summary=finished("2026-10-14T08:00:00Z")
    )
    summary = finished("2026-10-15T08:00:00Z") | {"run_id": "undated-bbbbbbbbbbbb"}
    sample_run(tmp_path, "undated-cccccccccccc", summary=summary)  # same id, other files
    located = locate(tmp_path / "edge-lab")
    assert [r.path for r in located.runs] == [original]
    (finding,) = located.findings
    assert "undated-cccccccccccc holds the run of" in finding and "(the same run id)" in finding


@pytest.mark.parametrize("name", ["summary.json", "SHA256SUMS"])
def test_a_fifo_in_a_run_is_never_opened_while_runs_are_ordered(tmp_path: Path, name: str) -> None:
    """Ordering reads summary.json and hashes SHA256SUMS: a FIFO there blocked for a writer."""
    sample_run(tmp_path, "undated-aaaaaaaaaaaa", summary=finished(MEASURED))
    stuck = sample_run(tmp_path, "undated-bbbbbbbbbbbb", summary=finished(MEASURED))
    (stuck / name).unlink()
    os.mkfifo(stuck / name)
    done = subprocess.run(
        [sys.executable, "-m", "nvcregen", "history", str(tmp_path / "edge-lab")],
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        capture_output=True,
        text=True,
        check=False,
        timeout=HANG,
    )
    assert done.returncode == 0, done.stderr
    assert "left out: undated-bbbbbbbbbbbb: does not verify" in done.stdout


@pytest.mark.parametrize("claimed", ["2026-13-45T99:99:99Z", "2026-02-30T08:00:00Z"])
def test_a_time_that_is_no_date_is_no_measurement_time(tmp_path: Path, claimed: str) -> None:
    """A hostile finished_at of the right shape but no real date: ignored, no traceback."""
    run = sample_run(tmp_path, "20261399T250000Z-aaaaaaaaaaaa", summary=finished(claimed))
    (entry,) = locate(run).runs
    assert entry.finished_at is None and entry.problems == ()


def _envelope(run: Path, collected: str, subjects: Sequence[object]) -> None:
    """An `attestation.dsse.json` claiming `collectedAt`, signed by nobody (junk signature)."""
    statement = {
        "_type": "https://in-toto.io/Statement/v1",
        "subject": subjects,
        "predicateType": "https://nvcregen.io/attestation/readiness/v1",
        "predicate": {"collectedAt": collected},
    }
    envelope = {
        "payloadType": "application/vnd.in-toto+json",
        "payload": base64.b64encode(json.dumps(statement).encode()).decode(),
        "signatures": [{"keyid": "x", "sig": base64.b64encode(b"junk").decode()}],
    }
    (run / "attestation.dsse.json").write_text(json.dumps(envelope))


def _subjects(run: Path) -> list[dict[str, object]]:
    """The run's files as SHA256SUMS lists them, and SHA256SUMS itself: what collect signs."""
    sums = (run / "SHA256SUMS").read_bytes()
    listed = [line.split("  ", 1) for line in sums.decode().splitlines()]
    files = [(name, digest) for digest, name in listed]
    files.append(("SHA256SUMS", hashlib.sha256(sums).hexdigest()))
    return [{"name": name, "digest": {"sha256": digest}} for name, digest in sorted(files)]


NOW = datetime(2026, 10, 30, tzinfo=UTC)


def test_an_unsigned_claim_of_collection_counts_only_when_its_subjects_are_the_files(
    tmp_path: Path,
) -> None:
    """The reviewer's r10: any envelope's `collectedAt` let a run dated 2099 pass for newest."""
    run = _at(
        sample_run(tmp_path, summary=finished("2026-10-20T00:00:00Z")), "2026-10-15T09:00:00Z"
    )
    _envelope(run, "2026-10-21T00:00:00Z", [])  # no subject: claims nothing
    _at(run, "2026-10-15T09:00:00Z")
    (problem,) = entry(run, (), NOW).problems
    assert problem.startswith(
        "error[NVC755]: it says its measurements finished at 2026-10-20T00:00:00Z, after it"
        " was collected (2026-10-15T09:00:00Z): a run"
    )
    _envelope(run, "2026-10-21T00:00:00Z", _subjects(run))  # the files, as collect signs them
    dated = entry(run, (), NOW)
    assert (dated.problems, dated.collected_at) == ((), "2026-10-21T00:00:00.000000Z")
    one_less = _subjects(run)[1:]
    changed = [s for s in _subjects(run) if s["name"] != "SHA256SUMS"]
    changed.append({"name": "SHA256SUMS", "digest": {"sha256": "0" * 64}})
    twice = [*_subjects(run), _subjects(run)[0]]
    hostile = [{"name": ["x"], "digest": {"sha256": "0" * 64}}, *_subjects(run)]  # no crash
    unnamed = [*_subjects(run), {"name": "x", "digest": {"sha256": ["0"]}}]
    for subjects in (
        one_less,
        changed,
        twice,
        [*_subjects(run), "not a subject"],
        hostile,
        unnamed,
    ):
        _envelope(run, "2026-10-21T00:00:00Z", subjects)
        assert entry(run, (), NOW).collected_at == "2026-10-15T09:00:00.000000Z"
    _envelope(run, "2026-10-21T00:00:00Z", _subjects(run))
    (run / "SHA256SUMS").write_bytes(b"not sums\n")  # a listing that does not parse
    assert _at(run, "2026-10-15T09:00:00Z") and entry(run, (), NOW).collected_at == (
        "2026-10-15T09:00:00.000000Z"
    )


@pytest.mark.parametrize(
    ("measured", "refused"),
    [("2026-10-30T00:05:00Z", False), ("2026-10-30T00:05:01Z", True)],
)
def test_a_run_measured_after_now_is_refused_whatever_its_files_times_say(
    tmp_path: Path, measured: str, refused: bool
) -> None:
    run = _at(sample_run(tmp_path, summary=finished(measured)), "2099-06-01T00:00:00Z")
    problems = entry(run, (), NOW).problems
    assert bool(problems) is refused
    if refused:
        assert problems[0].startswith(
            f"error[NVC755]: it says its measurements finished at {measured}, later than now"
            " (2026-10-30T00:00:00Z): a run cannot be measured after it was archived"
        )


def test_a_run_dated_2099_beside_an_unsigned_envelope_is_refused(tmp_path: Path) -> None:
    """r10 through `report` and `history`: the envelope's 2099 is no collection time."""
    good = sample_run(tmp_path, "undated-aaaaaaaaaaaa", summary=finished("2026-10-14T08:00:00Z"))
    future = sample_run(tmp_path, "undated-bbbbbbbbbbbb", summary=finished("2099-01-01T00:00:00Z"))
    _envelope(future, "2099-01-01T00:00:00Z", [])
    _at(good, "2026-10-14T09:00:00Z")
    _at(future, "2026-10-15T09:00:00Z")
    located = locate(tmp_path / "edge-lab")
    assert [r.path for r in located.runs] == [good, future]
    assert located.runs[-1].problems[0].startswith("error[NVC755]")
    result = CliRunner().invoke(
        main, ["report", str(tmp_path / "edge-lab"), "--out", str(tmp_path / "r")]
    )
    assert result.exit_code == ExitCode.INVALID and "NVC755" in result.stderr
    history = CliRunner().invoke(main, ["history", str(tmp_path / "edge-lab")])
    assert "left out: undated-bbbbbbbbbbbb: refused (NVC755)" in history.stdout
