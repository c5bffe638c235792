"""The budget of the readers' property-based fuzz tests (hypothesis).

`make test` runs each with a small, bounded budget (a few seconds); `make fuzz` sets
`NVCREGEN_FUZZ_EXAMPLES` to run many more examples. Every reader of untrusted text must
answer a hostile input with its own refusal (a diagnostic, an error naming the file),
never with any other exception: that would be exit 70, an internal error.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

EXAMPLES = int(os.environ.get("NVCREGEN_FUZZ_EXAMPLES", "60"))
BUDGET = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=EXAMPLES <= 200,  # `make test`: the same examples every run
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# What hostile input is made of: numbers past every bound, non-finite floats, deep
# nesting, control characters, broken UTF-8 stand-ins and long runs.
HUGE = "9" * 5000
HOSTILE = (
    HUGE,
    "-" + HUGE,
    "1e999",
    "inf",
    "-inf",
    "nan",
    "NaN",
    "Infinity",
    "[" * 3000,
    "{" * 3000,
    '{"a":' * 3000,
    "]" * 50,
    "\x00",
    "\x1b[31m",
    "\x1c",
    "\ufffd",
    "\r",
    " " * 200,
    "N/A",
    "0",
    "-1",
    "18446744073709551616",
)
hostile_token = st.sampled_from(HOSTILE)


def mixed(fragments: tuple[str, ...]) -> st.SearchStrategy[str]:
    """Text made of real fragments, hostile tokens and arbitrary text, in any order."""
    piece = st.one_of(
        st.sampled_from(fragments),
        hostile_token,
        st.text(max_size=12),
        st.integers(min_value=-(10**6), max_value=10**6).map(str),
    )
    return st.lists(piece, max_size=40).map("".join)


ENDINGS = ("", " ", " OK", ": Pass |", " |", "]}]}]}}", '", "status": "Pass"}]}]}]}}')


def lines_of(fragments: tuple[str, ...]) -> st.SearchStrategy[str]:
    """Lines joined by newlines: each made by `mixed`, or a fragment whose value is hostile.

    The second kind puts a hostile token exactly where a reader takes a value (after
    `Avg bus bandwidth :`, in a GPU id), which arbitrary mixing rarely does.
    """
    aimed = st.tuples(st.sampled_from(fragments), hostile_token, st.sampled_from(ENDINGS))
    line = st.one_of(mixed(fragments), aimed.map("".join))
    return st.lists(line, max_size=25).map("\n".join)


_NUMBER = re.compile(r"[0-9]+(?:\.[0-9]+)?")
REAL_LOGS = Path(__file__).resolve().parent / "fixtures" / "real-logs"


def real_logs(folder: str) -> tuple[str, ...]:
    """The real logs of one tool (`nccl-tests`, `dcgm`), as text."""
    found = sorted((REAL_LOGS / folder).glob("*.txt"))
    return tuple(p.read_text(encoding="utf-8", errors="replace") for p in found)


@st.composite
def mutated(draw: st.DrawFn, texts: tuple[str, ...]) -> str:
    """A real log with a few of its numbers (or a line) replaced by hostile tokens."""
    text = draw(st.sampled_from(texts))
    numbers = [m.span() for m in _NUMBER.finditer(text)]
    for _ in range(draw(st.integers(1, 3))):
        if numbers:
            start, end = numbers[draw(st.integers(0, len(numbers) - 1))]
            text = text[:start] + draw(hostile_token) + text[end:]
            numbers = [m.span() for m in _NUMBER.finditer(text)]
    return text
