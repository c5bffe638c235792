"""Issue #31: `dcgmi diag` excerpts of result rows alone, as field reports quote them."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from nvcregen.cli import main
from nvcregen.ingest import parse_dcgm
from nvcregen.ingest.models import IngestFormatError

ROOT = Path(__file__).resolve().parents[3]
ROWS = (
    ROOT
    / "tests"
    / "fixtures"
    / "written-logs"
    / "dcgm"
    / "dcgm-3.x-diag-r2-text-excerpt-memory-fail-row-remap-rows-only.txt"
)
MESSAGE = (
    "GPU 0 had uncorrectable memory errors and row remapping failed. Run a field diagnostic"
    " on the GPU"
)
CUT = (
    "the table has no top border or header: an excerpt from inside it",
    "the table has no closing border: output cut short",
)


def row(left: str, right: str) -> str:
    """One row as DCGM 3.x prints it: a 27-character cell, then a 48-character one."""
    return f"| {left:<26}| {right:<47}|"


def test_result_rows_alone_are_read_failed_and_marked_cut() -> None:
    (run,) = parse_dcgm(ROWS.read_text(), "rows")
    assert (run.status, run.level, run.format) == ("failed", 2, "text")
    assert [(t.name, t.result) for t in run.tests] == [("Memory", "Fail"), ("Diagnostic", "Pass")]
    dbe = "Detected 2 volatile double-bit ECC error(s) in GPU 1."  # wrapped after "i"
    assert run.tests[0].errors == (MESSAGE, dbe)  # DCGM's 45-wide chunks joined as cut
    assert run.errors == CUT
    result = CliRunner().invoke(main, ["ingest", "dcgm", str(ROWS)])
    assert result.exit_code == 1, result.output
    assert "Memory      Fail" in result.stdout


def test_result_rows_that_pass_are_an_excerpt_truncated_not_failed() -> None:
    text = "\n".join([row("Memory", "Pass - All"), row("PCIe", "Skip - All")]) + "\n"
    (run,) = parse_dcgm(text, "rows")
    assert (run.status, [t.result for t in run.tests]) == ("truncated", ["Pass", "Skip"])
    assert run.errors == CUT


def test_a_warning_that_the_memory_failed_fails_its_test_whatever_the_row_says() -> None:
    text = ROWS.read_text().replace("Fail - All", "Pass - All")
    (run,) = parse_dcgm(text, "rows")
    assert (run.status, run.tests[0].result) == ("failed", "Fail")
    other = text.replace("uncorrectable memory errors", "a note for the operator")
    assert parse_dcgm(other, "rows")[0].tests[0].result == "Fail"  # the DBE warning still fails
    other = other.replace("double-bit ECC error(s) i", "notes for the operator i")
    (benign,) = parse_dcgm(other, "rows")
    assert (benign.status, benign.tests[0].result) == ("truncated", "Pass")


@pytest.mark.parametrize(
    "warning",
    [
        row("Warning", "GPU 3 had uncorrectable memory errors and row remapping failed."),
        "| Warning: GPU 3 had uncorrectable memory errors and row remapping failed. |",
        "| Warning: Detected 2 volatile double-bit ECC error(s) in GPU 3. |",
    ],
)
def test_an_excerpt_starting_at_the_warning_fails_the_run(warning: str) -> None:
    (run,) = parse_dcgm(warning + "\n", "warning")
    assert (run.status, run.tests) == ("failed", ())
    assert run.errors[0].startswith("Warning (its test row is not in the excerpt): ")
    assert run.errors[0].endswith(
        ("GPU 3 had uncorrectable memory errors and row remapping failed.", "in GPU 3.")
    )
    assert run.errors[1:] == CUT
    (after,) = parse_dcgm(row("Memory", "Pass - All") + "\n" + warning + "\n", "after")
    assert (after.status, after.tests[0].result) == ("failed", "Fail")
    assert after.tests[0].errors == (run.errors[0].split(": ", 1)[1],)


@pytest.mark.parametrize(
    "text",
    [
        "| name | value |\n| a | b |\n",  # a table, but no result word
        row("Warning", "a note for the operator") + "\n",  # no memory failure
        "| Memory uncorrectable memory errors |\n",  # neither a result nor a Warning row
        "| Pass | |\n",
        "| Info: GPU 3 had uncorrectable memory errors and row remapping failed. |\n",
        row("Info", "GPU 3 had uncorrectable memory errors") + "\n",
    ],
)
def test_rows_that_are_not_dcgm_results_are_still_refused(text: str) -> None:
    with pytest.raises(IngestFormatError, match="not dcgmi diag output"):
        parse_dcgm(text, "other")
