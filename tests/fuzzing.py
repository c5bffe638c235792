"""The budget of the readers' property-based fuzz tests (hypothesis).

`make test` runs each with a small, bounded budget (a few seconds); `make fuzz` sets
`NVCREGEN_FUZZ_EXAMPLES` to run many more examples. Every reader of untrusted text must
answer a hostile input with its own refusal (a diagnostic, an error naming the file),
never with any other exception: that would be exit 70, an internal error.
"""

from __future__ import annotations

import os

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


def lines_of(fragments: tuple[str, ...]) -> st.SearchStrategy[str]:
    """Lines each made by `mixed`, joined by newlines."""
    return st.lists(mixed(fragments), max_size=25).map("\n".join)
