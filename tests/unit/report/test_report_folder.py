"""Finding the run and verifying it: a run that does not match SHA256SUMS is refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from reportfactory import sample_files, sample_run, sample_summary, write_run

from nvcregen.cli import main
from nvcregen.core.errors import ExitCode
from nvcregen.report.folder import ReportError, locate, run_sort_key, verified_run, verify
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
