"""Fuzz what `report`, `history` and `export metrics` read: a run folder's files.

A sample run is changed at random: one value anywhere in summary.json, verdicts.json
or provenance.json becomes a hostile one (a number past every bound, a non-finite
float, deep nesting, a control character, another type), a cell of bandwidth.csv too,
or SHA256SUMS gets a hostile line. Every command then writes its output or refuses the
run with a ReportError: never an internal error (exit 70).
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from fuzzing import BUDGET, HOSTILE, hostile_token, mixed
from hypothesis import given
from hypothesis import strategies as st
from reportfactory import sample_files, write_run

from nvcregen.report.archive import read_archive
from nvcregen.report.folder import ReportError, verified_run
from nvcregen.report.historyview import load_history, render_markdown, render_text
from nvcregen.report.metrics import export_metrics
from nvcregen.report.writer import write_report
from nvcregen.results.archive import SUMS, verify_archive

RAW = ("9" * 5000, "1e999", "-1e999", "NaN", "Infinity", "[" * 3000 + "]" * 3000, "-1", "0")
JSON_FILES = ("summary.json", "verdicts.json", "provenance.json")
PLACEHOLDER = "\x00hostile\x00"


def _paths(data: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(data, dict):
        for key, value in data.items():
            found += _paths(value, (*prefix, key))
    elif isinstance(data, list):
        for index, value in enumerate(data):
            found += _paths(value, (*prefix, index))
    return found


def _replace(data: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(data, dict):
        return {**data, head: _replace(data[head], rest, value)}
    return [_replace(item, rest, value) if i == head else item for i, item in enumerate(data)]


@st.composite
def hostile_run(draw: st.DrawFn) -> dict[str, str]:
    files = sample_files()
    name = draw(st.sampled_from((*JSON_FILES, "bandwidth.csv", SUMS)))
    if name in JSON_FILES:
        data = json.loads(files[name])
        path = draw(st.sampled_from(_paths(data)))
        raw = draw(st.sampled_from(RAW))
        value: Any = draw(st.one_of(st.just(PLACEHOLDER), hostile_token, st.none(), st.just([])))
        text = json.dumps(_replace(data, path, value), ensure_ascii=False)
        files[name] = text.replace(json.dumps(PLACEHOLDER), raw)
    elif name == "bandwidth.csv":
        lines = files[name].split("\n")
        line = draw(st.integers(0, len(lines) - 1))
        cells = lines[line].split(",")
        cell = draw(st.integers(0, len(cells) - 1))
        cells[cell] = draw(st.one_of(hostile_token, mixed(HOSTILE)))
        lines[line] = ",".join(cells)
        files[name] = "\n".join(lines)
    return files


@pytest.mark.slow
@BUDGET
@given(hostile_run(), st.sampled_from(["", "extra-line", "crlf"]))
def test_fuzz_archive_readers(files: dict[str, str], sums: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        run = write_run(Path(tmp) / "site" / "20261014T130100Z-0123456789ab", files)
        if sums == "extra-line":
            with (run / SUMS).open("a", encoding="utf-8") as handle:
                handle.write(f"{'0' * 64}  \x1c{HOSTILE[0]}\n")
        elif sums == "crlf":
            (run / SUMS).write_bytes((run / SUMS).read_bytes().replace(b"\n", b"\r\n"))
        problems = verify_archive(run)
        assert bool(problems) == bool(sums)
        for action in (
            lambda: write_report(run, Path(tmp) / "page"),
            lambda: (
                render_text(load_history(run.parent)) + render_markdown(load_history(run.parent))
            ),
            lambda: export_metrics(read_archive(verified_run(run).run), "lab", None).text,
        ):
            try:
                action()
            except ReportError as exc:
                assert str(exc)


SUM_FRAGMENTS = (f"{'ab' * 32}  ", "summary.json", "objects/", "../", "./", "\n", "\r\n", " ")


@pytest.mark.slow
@BUDGET
@given(st.one_of(st.binary(max_size=200), mixed(SUM_FRAGMENTS).map(str.encode)))
def test_fuzz_sha256sums_reader(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        run = write_run(Path(tmp) / "site" / "20261014T130100Z-0123456789ab", sample_files())
        (run / SUMS).write_bytes(data)
        problems = verify_archive(run)
        assert problems and all(isinstance(p, str) and p for p in problems)
