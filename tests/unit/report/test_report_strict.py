"""Archives are read as strictly as `sha256sum -c --strict`, their strings escaped (issue #20).

`report`, `history` and `export metrics` accepted a SHA256SUMS with CRLF line ends or a
`\\x1c` where a line end was, an added empty folder and a run folder that is a link; a
5000-digit number in verdicts.json or 100,000 brackets in summary.json were internal
errors (exit 70); strings from the archive reached the terminal with their escape
sequences. Each is refused or escaped now, with a code.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from reportfactory import (
    sample_files,
    sample_rows,
    sample_run,
    sample_summary,
    sample_verdicts,
    write_run,
)

from nvcregen.cli import main
from nvcregen.core.errors import ExitCode
from nvcregen.core.terminal import one_line, printable
from nvcregen.report.folder import ReportError, verified_run, verify
from nvcregen.report.metrics import Sample, render
from nvcregen.results.archive import SUMS

ESCAPE = "\x1b]0;owned\x07\x1b[31m"


def invoke(*args: str) -> Result:
    result = CliRunner().invoke(main, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(
        result.exception
    )  # never an internal error
    return result


def test_crlf_line_ends_are_refused(tmp_path: Path) -> None:
    run = sample_run(tmp_path)
    (run / SUMS).write_bytes((run / SUMS).read_bytes().replace(b"\n", b"\r\n"))
    problems = verify(run)
    assert any(
        "error[NVC720]: SHA256SUMS line 1 holds the control character '\\r'" in p for p in problems
    )


def test_a_file_separator_where_a_line_ends_is_refused(tmp_path: Path) -> None:
    run = sample_run(tmp_path)
    data = (run / SUMS).read_bytes()
    (run / SUMS).write_bytes(data.replace(b"\n", b"\x1c", 1))  # two lines become one
    assert any("error[NVC720]" in p and "'\\x1c'" in p for p in verify(run))
    done = subprocess.run(  # the reference tool agrees: no such file
        ["sha256sum", "-c", "--strict", "--quiet", SUMS], cwd=run, capture_output=True, check=False
    )
    assert done.returncode != 0


def test_an_added_empty_folder_is_refused(tmp_path: Path) -> None:
    run = sample_run(tmp_path)
    (run / "objects" / "extra").mkdir()
    assert verify(run) == ["error[NVC721]: objects/extra/ is a folder holding no listed file"]


def test_folders_holding_listed_files_are_fine(tmp_path: Path) -> None:
    assert verify(sample_run(tmp_path)) == []


def test_a_run_folder_that_is_a_link_is_refused(tmp_path: Path) -> None:
    run = sample_run(tmp_path)
    link = tmp_path / "linked-run"
    link.symlink_to(run, target_is_directory=True)
    with pytest.raises(ReportError) as raised:
        verified_run(link)
    assert "error[NVC722]: linked-run is a symbolic link" in str(raised.value)
    result = invoke("report", str(link), "--out", str(tmp_path / "page"))
    assert result.exit_code == ExitCode.INVALID and not (tmp_path / "page").exists()


def test_a_5000_digit_number_in_verdicts_json_is_a_refusal(tmp_path: Path) -> None:
    files = sample_files()
    files["verdicts.json"] = re.sub(
        r'"threshold": \d+', '"threshold": ' + "9" * 5000, files["verdicts.json"], count=1
    )
    assert "9" * 5000 in files["verdicts.json"]
    run = write_run(tmp_path / "site" / "20261014T130100Z-0123456789ab", files)
    for args in (
        ("report", str(run), "--out", str(tmp_path / "page")),
        ("export", "metrics", str(run)),
    ):
        result = invoke(*args)
        assert result.exit_code == ExitCode.INVALID
        assert "verdicts.json: error[NVC713]" in result.output
    history = invoke("history", str(run.parent))
    assert (history.exit_code, "error[NVC713]" in history.output) == (ExitCode.INVALID, True)


def test_deep_nesting_in_summary_json_is_a_refusal(tmp_path: Path) -> None:
    files = sample_files()
    files["summary.json"] = "[" * 100_000 + "]" * 100_000
    run = write_run(tmp_path / "site" / "20261014T130100Z-0123456789ab", files)
    result = invoke("report", str(run), "--out", str(tmp_path / "page"))
    assert result.exit_code == ExitCode.INVALID
    assert "summary.json: error[NVC714]: nested too deeply" in result.output


def test_strings_from_an_archive_are_escaped_on_the_terminal(tmp_path: Path) -> None:
    summary = sample_summary() | {"site": f"edge{ESCAPE}lab"}
    run = sample_run(tmp_path, summary=summary)
    result = invoke("report", str(run), "--out", str(tmp_path / "page"))
    assert result.exit_code == ExitCode.OK
    assert "\x1b" not in result.output and "\x07" not in result.output
    assert "edge\\x1b]0;owned\\x07\\x1b[31mlab" in result.output


def test_export_metrics_labels_carry_no_control_character() -> None:
    sample = Sample("nvcregen_nccl_busbw_gbs", (("stage", f"two{ESCAPE}node\\"),), 1.0, 2.0)
    text = render([sample])
    assert 'stage="two\ufffd]0;owned\ufffd\ufffd[31mnode\\\\"' in text
    assert "\x1b" not in text and "\x07" not in text


def test_a_line_feed_in_a_group_name_forges_no_sample(tmp_path: Path) -> None:
    """OpenMetrics escapes a label value's backslash, double quote and line feed (issue #32)."""
    group = 'g\nnvcregen_nccl_busbw_gbs{group="forged"} 9e9 1\\"'
    rows = [{**row, "group": group} for row in sample_rows()]
    run = sample_run(tmp_path, rows=rows)
    result = invoke("export", "metrics", str(run), "--cluster", "lab")
    assert result.exit_code == ExitCode.OK, result.output
    lines = result.stdout.splitlines()
    assert all(line.startswith(("# ", "nvcregen_nccl_")) for line in lines)
    assert not [line for line in lines if line.startswith('nvcregen_nccl_busbw_gbs{group="forged"')]
    escaped = 'group="g\\nnvcregen_nccl_busbw_gbs{group=\\"forged\\"} 9e9 1\\\\\\""'
    samples = [line for line in lines if not line.startswith("#")]
    assert samples and all(escaped in line for line in samples)


def test_a_line_feed_in_a_finding_forges_no_report_line(tmp_path: Path) -> None:
    """The evidence lines report prints quote the archive: each stays one line (issue #32)."""
    verdicts = sample_verdicts()
    verdicts["findings"] = [
        {"code": "NVC731", "kind": "unbound", "word": "fail", "stage": "two-node",
         "test": "nccl-all-reduce", "group": "g\nFORGED pass", "round": 1,
         "message": "hosts are not the pinned nodes"}
    ]  # fmt: skip
    run = sample_run(tmp_path, verdicts=verdicts)
    result = invoke("report", str(run), "--out", str(tmp_path / "page"))
    assert result.exit_code == ExitCode.OK, result.output
    assert "g\\nFORGED pass" in result.stdout
    assert not [line for line in result.stdout.splitlines() if line.startswith("FORGED")]


def test_printable_keeps_line_ends_and_escapes_the_rest() -> None:
    assert printable("a\tb\nc\x1b[0m\x9b\u2028\x7f") == "a\tb\nc\\x1b[0m\\x9b\\u2028\\x7f"
    assert one_line("a\nb\tc") == "a\\nb\\tc"
    assert json.loads(json.dumps(printable("é ü"))) == "é ü"  # printable text is left alone
