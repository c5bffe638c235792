"""Printed diagnostics stay bounded: excerpts read only their lines (issue #14, item 10)."""

from __future__ import annotations

import tempfile
import tracemalloc
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from nvcregen.cli import main
from nvcregen.commands import diagnostics
from nvcregen.commands.diagnostics import MAX_LINE, TextRenderer, cap_per_file, read_lines
from nvcregen.core.errors import Diagnostic, Severity, Span
from nvcregen.spec.positions import LINE_BREAK


def error(file: str, line: int, column: int = 1) -> Diagnostic:
    return Diagnostic(Span(file, line, column), Severity.ERROR, "NVC999", f"at {line}")


@settings(max_examples=200, deadline=None)
@given(
    parts=st.lists(st.sampled_from(["a", "é", "\n", "\r", "\r\n", "\t", "x" * 7]), max_size=30),
    chunk=st.integers(1, 8),
)
def test_lines_are_counted_as_the_loader_counts_them(parts: list[str], chunk: int) -> None:
    """Property: any line breaks (CR, LF, CRLF, split across reads) give the loader's lines."""
    text = "".join(parts)
    expected = LINE_BREAK.split(text)
    with tempfile.NamedTemporaryFile(delete=False) as handle:
        handle.write(text.encode())
    path = Path(handle.name)
    original = diagnostics._CHUNK
    diagnostics._CHUNK = chunk
    try:
        found = read_lines(path, range(1, len(expected) + 2))
    finally:
        diagnostics._CHUNK = original
        path.unlink()
    assert [found.get(n, "") for n in range(1, len(expected) + 1)] == expected


@pytest.mark.slow
def test_an_excerpt_of_a_huge_file_costs_little_memory(tmp_path: Path) -> None:
    big = tmp_path / "big.yaml"
    with big.open("wb") as handle:
        handle.write(b"a: 1\nb: 2\n")
        block = b"c: " + b"x" * 100 + b"\n"
        for _ in range(200):
            handle.write(block * 1000)  # 20 MB in all
        handle.write(b"last: line\n")
    diags = [error("big.yaml", 2, 4), error("big.yaml", 200_003, 1)]
    tracemalloc.start()
    try:
        text = TextRenderer(tmp_path).render(diags)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert "2 | b: 2\n" in text and "200003 | last: line\n" in text
    assert peak < 2 * 1024 * 1024  # the old renderer held the whole file: 20 MB and more


def test_a_huge_single_line_is_cut(tmp_path: Path) -> None:
    (tmp_path / "one.yaml").write_bytes(b"k: " + b"v" * 5_000_000)
    assert len(read_lines(tmp_path / "one.yaml", [1])[1]) == MAX_LINE


def test_at_most_200_per_file_and_a_note_of_the_rest() -> None:
    diags = [error("a.yaml", n) for n in range(1, 40_001)] + [error("b.yaml", 1)]
    shown = cap_per_file(diags)
    assert len(shown) == 202
    note = shown[200]
    assert (note.code, note.severity, note.span.file) == ("NVC001", Severity.INFO, "a.yaml")
    assert note.message == "39800 more diagnostics in this file not shown (at most 200 per file)"
    assert shown[-1].span.file == "b.yaml"


def test_a_site_far_too_large_prints_little_and_reads_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "huge.yaml").write_bytes(b"a: 1\n" + b"# filler line\n" * 1_000_000)
    done = CliRunner().invoke(main, ["validate", "huge.yaml"])
    assert done.exit_code == 2
    assert "error[NVC110]" in done.stderr
    assert len(done.stderr) < 2_000
