"""What DCGM's JSON and text outputs share: result words, the worst result, the run status."""

from __future__ import annotations

import re
from collections.abc import Iterable

from nvcregen.ingest.limits import matched
from nvcregen.ingest.models import DcgmTest, RunStatus

_WORDS = {
    "pass": "Pass",
    "passed": "Pass",
    "fail": "Fail",
    "failed": "Fail",
    "skip": "Skip",
    "skipped": "Skip",
    "warn": "Warn",
    "warning": "Warn",
}
_RANK = {"Fail": 4, "Warn": 3, "Pass": 2, "Skip": 1}
_COMMAND = re.compile(r"\bdcgmi\s+diag\b")
_LEVEL = re.compile(r"(?:\s-r|\s--run)[\s=]*(?P<level>[1-4])\b")
UNKNOWN = "Unknown"


def result_word(raw: object) -> str:
    """Normalize a result (`PASS`, `Pass`, `pass`, `Skip`, `Warning`) to Pass/Fail/Skip/Warn.

    Args:
        raw: The status as found in the output; anything else is kept as printed.

    Returns:
        Pass, Fail, Skip, Warn, the printed word, or Unknown when there is none.

    """
    if not isinstance(raw, str) or not raw.strip():
        return UNKNOWN
    return _WORDS.get(raw.strip().lower(), raw.strip())


def worst(results: Iterable[str]) -> str:
    """The most severe of some results (Fail > Warn > Pass > Skip); Unknown for none."""
    ranked = sorted(results, key=lambda word: _RANK.get(word, 0), reverse=True)
    return ranked[0] if ranked else UNKNOWN


def run_status(tests: Iterable[DcgmTest], *, runtime_error: bool, truncated: bool) -> RunStatus:
    """Failed when a test failed or DCGM gave up; truncated when the output is cut; else ok."""
    if runtime_error or any(test.result == "Fail" for test in tests):
        return "failed"
    return "truncated" if truncated else "ok"


def find_level(text: str) -> int | None:
    """The diagnostic level of a captured `dcgmi diag -r N` command line, if any."""
    found = find_level_at(text)
    return found[1] if found is not None else None


def find_level_at(text: str) -> tuple[int, int] | None:
    """Where the first `dcgmi diag -r N` of a text ends, and its level N.

    The first `-r N` after the first `dcgmi diag` of a line, within the line's first
    MAX_LINE characters: each line is scanned once, and a long one only that far.
    """
    offset = 0
    for whole in text.splitlines(keepends=True):
        line = matched(whole)
        command = _COMMAND.search(line) if "dcgmi" in line else None
        if command is not None and (match := _LEVEL.search(line, command.end())):
            return offset + match.end(), int(match["level"])
        offset += len(whole)
    return None


def unique(items: Iterable[str]) -> tuple[str, ...]:
    """Items without repeats, in first-seen order."""
    return tuple(dict.fromkeys(items))
