"""Tests for the NVC1xx diagnostics of the site loader: code, position and hint."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from timebounds import HANG

from nvcregen.core.errors import Diagnostic, Severity
from nvcregen.spec.load import (
    MAX_BYTES,
    MAX_COMMENT_LINE,
    MAX_PER_CODE,
    load_document,
    load_file,
)
from nvcregen.spec.positions import Document


def load(text: str | bytes) -> tuple[Document | None, list[Diagnostic]]:
    raw = text.encode() if isinstance(text, str) else text
    return load_document(raw, "site.yaml")


def ok(text: str | bytes) -> Document:
    doc, diags = load(text)
    assert doc is not None, diags
    return doc


def where(diags: list[Diagnostic]) -> list[tuple[str, int, int]]:
    return [(d.code, d.span.line, d.span.column) for d in diags]


def only_error(text: str | bytes) -> Diagnostic:
    doc, diags = load(text)
    assert doc is None
    assert len(diags) == 1, diags
    assert diags[0].severity is Severity.ERROR
    return diags[0]


@pytest.mark.parametrize("name", ["missing.yaml", "."])
def test_nvc100_unreadable_file(tmp_path: Path, name: str) -> None:
    doc, diags = load_file(tmp_path / name, "x.yaml")
    assert doc is None
    assert where(diags) == [("NVC100", 1, 1)]
    assert diags[0].span.file == "x.yaml"


@pytest.mark.parametrize(
    ("raw", "line", "column"),
    [
        (b"a: ok\nb: \xc3\xa9\xff\n", 2, 5),  # column counts characters, not bytes
        (b"\xef\xbb\xbfa: \xfe\n", 1, 4),
        (b"\xff\xfea\x00:\x00", 1, 1),  # UTF-16
        (b"a: x\x00y\n", 1, 5),
        (b"a: x\xc2\x85y\n", 1, 5),  # NEL
        (b"a: 1\r\nb: \x07\n", 2, 4),
    ],
)
def test_nvc101_encoding(raw: bytes, line: int, column: int) -> None:
    diag = only_error(raw)
    assert where([diag]) == [("NVC101", line, column)]
    assert diag.hint


@pytest.mark.parametrize(
    ("text", "line", "column"),
    [
        ("a: 1\n b: 2\n", 2, 3),
        ('a: "x\n', 2, 1),
        ("a: [1, 2\nb: 3\n", 2, 2),
        ("a:\t1\n", 1, 3),
    ],
)
def test_nvc102_syntax(text: str, line: int, column: int) -> None:
    diag = only_error(text)
    assert where([diag]) == [("NVC102", line, column)]
    assert diag.message.startswith("YAML syntax error: ")
    assert "\n" not in diag.message
    assert diag.hint


def test_nvc102_has_context_note() -> None:
    diag = only_error('a: "x')
    assert diag.notes == ("while scanning a quoted scalar (at line 1, column 4)",)


def test_nvc103_tab_indentation_all_lines_no_duplicate_syntax_error() -> None:
    _, diags = load("a:\n\tb: 1\n  \tc: 2\n")
    assert where(diags) == [("NVC103", 2, 1), ("NVC103", 3, 3)]
    assert diags[0].hint == "YAML indentation must use spaces"
    assert diags[0].span.end_column == 2


def test_nvc103_tabs_inside_scalars_and_flow_are_content() -> None:
    doc = ok("a: |\n  x\n  \ty\nb: {c: 1,\n\td: 2}\n")
    assert doc.data == {"a": "x\n\ty\n", "b": {"c": 1, "d": 2}}


def test_nvc104_every_duplicate_is_reported() -> None:
    _, diags = load("a: 1\nb: 2\na: 3\nc:\n  d: 1\n  'd': 2\na: 4\n")
    assert where(diags) == [("NVC104", 3, 1), ("NVC104", 6, 3), ("NVC104", 7, 1)]
    assert "'a'" in diags[0].message
    assert "line 1" in diags[0].message
    assert "line 1" in diags[2].message
    assert "line 5" in diags[1].message
    assert diags[1].path == "/c/d"


def test_nvc105_anchor_alias_and_merge_key() -> None:
    _, diags = load("a: &x 1\nb: *x\nc:\n  <<: {d: 1}\n'<<': fine\n")
    assert where(diags) == [("NVC105", 1, 4), ("NVC105", 2, 4), ("NVC105", 4, 3)]


def test_nvc105_alias_bomb_is_not_expanded() -> None:
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 10)]
    started = time.monotonic()
    doc, diags = load("\n".join(lines) + "\n")
    assert time.monotonic() - started < HANG  # a hang guard, not a speed target
    assert doc is None
    assert {d.code for d in diags} == {"NVC105"}
    assert len(diags) == MAX_PER_CODE + 1  # the rest are summarised
    assert "not shown" in diags[-1].message


@pytest.mark.parametrize("text", ["", "\n\n", "# only a comment\n", "---\n", "--- # c\n...\n"])
def test_nvc106_empty(text: str) -> None:
    assert where([only_error(text)]) == [("NVC106", 1, 1)]


def test_nvc107_several_documents() -> None:
    assert where([only_error("a: 1\n---\nb: 2\n")]) == [("NVC107", 2, 1)]
    assert where([only_error("a: 1\n...\n# x\nb: 2\n")]) == [("NVC107", 4, 1)]


def test_single_explicit_document_is_fine() -> None:
    assert ok("---\na: 1\n...\n").data == {"a": 1}


@pytest.mark.parametrize(
    ("text", "column", "kind"),
    [("- a\n", 1, "sequence"), ("hello\n", 1, "string"), ("  42\n", 3, "number"), ("~", 1, "null")],
)
def test_nvc108_top_level_not_mapping(text: str, column: int, kind: str) -> None:
    diag = only_error(text)
    assert where([diag]) == [("NVC108", 1, column)]
    assert kind in diag.message


@pytest.mark.parametrize("word", ["yes", "No", "ON", "off", "y", "N", "yEs"])
def test_nvc109_yaml11_boolean_words_warn(word: str) -> None:
    doc, diags = load(f"a:\n  - {word}\n")
    assert doc is not None
    assert doc.data == {"a": [word]}
    assert where(diags) == [("NVC109", 2, 5)]
    assert diags[0].severity is Severity.WARNING
    assert diags[0].path == "/a/0"
    assert "quote" in diags[0].hint
    assert "true/false" in diags[0].hint


def test_nvc109_not_for_quoted_values_or_keys() -> None:
    doc, diags = load("on: 'yes'\nn: \"off\"\nx: yesterday\n")
    assert diags == []
    assert doc is not None


def test_nvc110_file_too_large() -> None:
    diag = only_error(b"a: 1\n" + b"#" * MAX_BYTES)
    assert where([diag]) == [("NVC110", 1, 1)]


def test_nvc119_a_line_holding_a_comment_may_be_64_kib_and_no_longer() -> None:
    # ruamel gathers a comment a character at a time: an 800 KB one took 9 s to load.
    limit = MAX_COMMENT_LINE
    at = "a: 1\n# " + "x" * (limit - 2) + "\nb: 2\n"  # the line is exactly the limit
    assert ok(at)
    over = "a: 1\n# " + "x" * (limit - 1) + "\nb: 2\n"
    assert where([only_error(over)]) == [("NVC119", 2, 1)]
    trailing = "a: 1  # " + "x" * limit + "\n"
    assert where([only_error(trailing)]) == [("NVC119", 1, 7)]
    nodes = "nodes: [" + ", ".join(f"gpu-{i:05d}" for i in range(8_000)) + "]\n"
    assert len(nodes) > limit and ok(nodes)  # a long line without a `#` is fine


def test_nvc110_nesting_depth() -> None:
    assert ok("a: " + "[" * 63 + "]" * 63 + "\n")  # 64 levels with the top mapping
    diag = only_error("a: " + "[" * 64 + "]" * 64 + "\n")
    assert where([diag]) == [("NVC110", 1, 67)]
    deep = "".join("  " * i + f"k{i}:\n" for i in range(66))
    assert where([only_error(deep)]) == [("NVC110", 65, 129)]


def test_nvc110_deep_nesting_stops_early() -> None:
    started = time.monotonic()
    assert only_error("a: " + "[" * 200_000).code == "NVC110"
    assert time.monotonic() - started < HANG  # a hang guard, not a speed target


def test_nvc111_non_string_keys() -> None:
    text = "1: x\ntrue: y2\n[a]: z\n? {b: 1}\n: w\n~: v\n'2': ok\n1.5: f\n"
    _, diags = load(text)
    assert where(diags) == [
        ("NVC111", 1, 1),
        ("NVC111", 2, 1),
        ("NVC111", 3, 1),
        ("NVC111", 4, 3),
        ("NVC111", 6, 1),
        ("NVC111", 8, 1),
    ]
    assert "`1` is read as the number 1" in diags[0].message
    assert "quote" in diags[0].hint


def test_nvc112_tags() -> None:
    _, diags = load("a: !!binary aGk=\nb: !custom {c: 1}\n")
    assert where(diags) == [("NVC112", 1, 4), ("NVC112", 2, 4)]
    assert "!!binary" in diags[0].message


def test_all_problems_reported_at_once() -> None:
    doc, diags = load("a: &x 1\nb: 1\nb: 2\n3: c\nd: no\n")
    assert doc is None
    assert where(diags) == [("NVC105", 1, 4), ("NVC104", 3, 1), ("NVC111", 4, 1), ("NVC109", 5, 4)]


def test_many_problems_are_capped_per_code() -> None:
    text = "a: 1\n" + "a: 2\n" * (MAX_PER_CODE + 10)
    _, diags = load(text)
    assert len(diags) == MAX_PER_CODE + 1
    assert diags[-1].span.line == MAX_PER_CODE + 2
    assert "further NVC104" in diags[-1].message
