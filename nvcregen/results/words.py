"""Verdict words and reasons, shared by the verdicts of thresholds, runs and nodes."""

from __future__ import annotations

import enum
from collections.abc import Sequence

from nvcregen.results.models import StatusModel


class Word(enum.StrEnum):
    """A verdict."""

    PASS = "pass"
    INCOMPLETE = "incomplete"
    FAIL = "fail"


_RANK = {Word.PASS: 0, Word.INCOMPLETE: 1, Word.FAIL: 2}


def worst(words: Sequence[Word]) -> Word:
    """The worst of some verdicts (pass when there are none)."""
    return max(words, key=_RANK.__getitem__, default=Word.PASS)


class Reason(StatusModel):
    """Why a verdict is what it is: a stable code and a sentence."""

    code: str
    word: Word
    message: str = ""
