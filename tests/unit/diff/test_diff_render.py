"""Value formatting and Markdown safety of the diff renderers."""

from __future__ import annotations

from nvcregen.diff.domain import Change, Summary
from nvcregen.diff.objectdiff import FieldChange, ObjectChange, ObjectDiff, ObjectRef
from nvcregen.diff.render import (
    MAX_COMMENT,
    MAX_VALUE,
    TOO_LONG,
    MarkdownRenderer,
    code,
    show_pair,
    show_value,
)
from nvcregen.diff.report import DiffReport, SiteDiff


def test_code_spans_survive_pipes_and_backticks() -> None:
    assert code("a|b") == "`a\\|b`"
    assert code("say `hi`") == "`` say `hi` ``"


def test_multi_line_strings_and_structures_stay_on_one_line() -> None:
    assert show_value("two\nlines") == '"two\\nlines"'
    assert show_value({"b": 1, "a": [True]}) == '{"a": [true], "b": 1}'
    assert show_value("plain") == "plain"


def test_long_values_are_cut_around_their_difference() -> None:
    old = "x" * 300 + " < 420.0 " + "y" * 300
    new = "x" * 300 + " < 440.0 " + "y" * 300
    shown_old, shown_new = show_pair(old, new)
    assert "420.0" in shown_old
    assert "440.0" in shown_new
    assert shown_old.startswith("…")
    assert shown_old.endswith("…")
    assert len(shown_old) <= MAX_VALUE


def test_short_values_are_shown_whole() -> None:
    assert show_pair("3", "5") == ("3", "5")


def big_report(objects: int) -> DiffReport:
    change = ObjectChange(
        ObjectRef("ConfigMap", "ns", "x", "p.yaml"),
        ObjectRef("ConfigMap", "ns", "x", "p.yaml"),
        tuple(FieldChange(f"/data/k{i}", "changed", "a" * 80, "b" * 80) for i in range(20)),
    )
    summary = Summary(facts=(Change("rounds", "3", "5"),))
    site = SiteDiff(
        "lab",
        "changed",
        "sites/lab.yaml",
        "sites/lab.yaml",
        summary,
        ObjectDiff(changed=(change,) * objects),
    )
    return DiffReport("HEAD~1", "0" * 40, (site,))


def test_a_comment_too_long_for_github_drops_the_object_diffs() -> None:
    small = MarkdownRenderer().render(big_report(2))
    assert "<details>" in small
    assert TOO_LONG not in small
    text = MarkdownRenderer().render(big_report(200))
    assert len(text) <= MAX_COMMENT
    assert "| **rounds** | **3 → 5** |" in text
    assert "<details>" not in text
    assert text.endswith(f"{TOO_LONG}\n")
