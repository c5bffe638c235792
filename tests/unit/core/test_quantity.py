"""One Kubernetes quantity parser (issue 35, item 5): exact, every suffix the API server
accepts, and the same answers as the three parsers it replaced, kept here as oracles."""

from __future__ import annotations

import math
import re
import time
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter

from nvcregen.compile.queue.shape import parse_cpu, parse_memory
from nvcregen.core.quantity import INT64_MAX, is_quantity, parse_quantity, whole_units
from nvcregen.replay.selectors import quantity
from nvcregen.spec.v1alpha1 import Cpu, Memory

# The three parsers as they were before issue 35 (check/cel_k8s.py, replay/selectors.py,
# compile/queue/shape.py), verbatim but for names.
_CEL = re.compile(r"([+-]?)([0-9]*)(?:\.([0-9]*))?([eEinumkKMGTP]*[-+]?[0-9]*)")
_DECIMAL = {"": 0, "n": -9, "u": -6, "m": -3, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_EXPONENT = re.compile(r"[eE]([-+]?[0-9]+)")


def old_cel(text: str) -> Fraction:
    match = _CEL.fullmatch(text)
    if match is None or not (match[2] or match[3]):
        raise ValueError("quantities must match")
    sign, whole, fraction, suffix = match.groups()
    if suffix in _DECIMAL:
        scale = Fraction(10) ** _DECIMAL[suffix]
    elif suffix in _BINARY:
        scale = Fraction(2) ** _BINARY[suffix]
    elif exponent := _EXPONENT.fullmatch(suffix):
        scale = Fraction(10) ** int(exponent[1])
    else:
        raise ValueError("unable to parse quantity's suffix")
    magnitude = Fraction(f"{whole or 0}.{fraction or 0}") * scale
    nanos = magnitude * 10**9
    if nanos.denominator != 1:
        magnitude = Fraction(math.ceil(nanos), 10**9)
    magnitude = min(magnitude, Fraction(2**63 - 1))
    return -magnitude if sign == "-" else magnitude


_SELECTOR = re.compile(r"^([0-9]+(?:\.[0-9]*)?|\.[0-9]+)([a-zA-Z]*)$")
_SELECTOR_SCALE = {
    **{k: Fraction(10) ** v for k, v in _DECIMAL.items() if k in ("", "m", "k", "M", "G", "T")},
    **{k: Fraction(2) ** v for k, v in _BINARY.items() if k in ("Ki", "Mi", "Gi", "Ti")},
}


def old_selector(millis: bool, text: str) -> int | None:
    found = _SELECTOR.match(text)
    if found is None or found[2] not in _SELECTOR_SCALE:
        return None
    amount = Fraction(found[1]) * _SELECTOR_SCALE[found[2]]
    return math.ceil(amount * 1000 if millis else amount)


def old_cpu(text: str) -> int:
    if text.endswith("m"):
        return int(text[:-1])
    whole, _, fraction = text.partition(".")
    return int(whole) * 1000 + int((fraction + "000")[:3])


_OLD_MEMORY = re.compile(r"^(?P<n>[0-9]+)(?P<unit>Ki|Mi|Gi|Ti)?$")
_OLD_MEMORY_UNITS = {"": 1, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40}


def old_memory(text: str) -> int:
    found = _OLD_MEMORY.match(text)
    if found is None:
        raise ValueError
    return int(found["n"]) * _OLD_MEMORY_UNITS[found["unit"] or ""]


def _outcome(parse: object, text: str) -> object:
    try:
        return parse(text)  # type: ignore[operator]
    except ValueError:
        return ValueError


SUFFIXES = (*_DECIMAL, *_BINARY, "K", "ki", "Mx", "e", "E", "i", "mm", "kE", "Ki3")
digits = st.text("0123456789", max_size=8)
exponent = st.builds(
    lambda e, sign, n: f"{e}{sign}{n}",
    st.sampled_from("eE"),
    st.sampled_from(("", "+", "-")),
    st.text("0123456789", min_size=1, max_size=3),
)
grammar = st.builds(
    lambda sign, whole, point, fraction, suffix: f"{sign}{whole}{point}{fraction}{suffix}",
    st.sampled_from(("", "+", "-", "--")),
    digits,
    st.sampled_from(("", ".", "..")),
    digits,
    st.one_of(st.sampled_from(SUFFIXES), exponent),
)
noise = st.text("0123456789.+-eEinumkKMGTPi xG", max_size=12)
texts = st.one_of(grammar, noise)
PROPERTY = settings(max_examples=400, deadline=None, derandomize=True)


@PROPERTY
@given(texts)
@pytest.mark.slow
def test_the_same_values_and_refusals_as_the_cel_library_had(text: str) -> None:
    assert _outcome(parse_quantity, text) == _outcome(old_cel, text)


@pytest.mark.slow
@PROPERTY
@given(texts, st.booleans())
def test_every_amount_the_replay_read_reads_the_same(text: str, millis: bool) -> None:
    before = old_selector(millis, text)
    try:
        after: int | None = quantity("cpu" if millis else "memory", text)
    except ValueError:
        after = None
    if before is not None:
        assert after == before
    elif after is not None:  # newly read: only forms the replay did not know
        known = _SELECTOR.match(text)
        assert known is None or known[2] not in _SELECTOR_SCALE


@pytest.mark.slow
@PROPERTY
@given(st.from_regex(r"\A([1-9][0-9]{0,6}m|[0-9]{1,6}(\.[0-9]{1,3})?)\Z"))
def test_every_site_cpu_reads_as_before(text: str) -> None:
    assert TypeAdapter(Cpu).validate_python(text) == text  # a value a site may write
    assert parse_cpu(text) == old_cpu(text)


@PROPERTY
@given(st.from_regex(r"\A[0-9]{1,9}(Ki|Mi|Gi|Ti)?\Z"))
@pytest.mark.slow
def test_every_site_memory_reads_as_before(text: str) -> None:
    assert TypeAdapter(Memory).validate_python(text) == text
    # the one change: past 8 EiB (2^63-1 bytes) the API server caps, and so does this now
    assert parse_memory(text) == min(old_memory(text), INT64_MAX)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("0", Fraction(0)),
        ("1n", Fraction(1, 10**9)),
        ("1u", Fraction(1, 10**6)),
        ("500m", Fraction(1, 2)),
        ("1k", Fraction(1000)),
        ("1M", Fraction(10**6)),
        ("1G", Fraction(10**9)),
        ("1T", Fraction(10**12)),
        ("1P", Fraction(10**15)),
        ("1E", Fraction(10**18)),
        ("1Ki", Fraction(2**10)),
        ("1Mi", Fraction(2**20)),
        ("1.5Gi", Fraction(3 * 2**29)),
        ("1Ti", Fraction(2**40)),
        ("1Pi", Fraction(2**50)),
        ("1Ei", Fraction(2**60)),
        ("1e3", Fraction(1000)),
        ("1E-3", Fraction(1, 1000)),
        ("1e+3", Fraction(1000)),
        ("+.5k", Fraction(500)),
        ("1.", Fraction(1)),
        ("-1Ki", Fraction(-1024)),
        ("0.1n", Fraction(1, 10**9)),  # finer than a nano-unit: rounds up
        ("-0.1n", Fraction(-1, 10**9)),  # away from zero
        ("1.000000001", Fraction(1_000_000_001, 10**9)),  # exactly a nano-unit: kept
        ("9223372036854775807", Fraction(INT64_MAX)),
        ("9223372036854775808", Fraction(INT64_MAX)),  # capped
        ("-9223372036854775808", Fraction(-INT64_MAX)),
        ("8Ei", Fraction(INT64_MAX)),
        ("1e18", Fraction(10**18)),
        ("10e18", Fraction(INT64_MAX)),
        ("0.00000000000000000001e19", Fraction(1, 10)),
        ("0e9223372036854775807", Fraction(0)),
        ("1e9223372036854775807", Fraction(INT64_MAX)),  # at once, not 10^(2^63)
        ("1e-9223372036854775807", Fraction(1, 10**9)),
        ("123e-12", Fraction(1, 10**9)),  # 0.123 nano: one
        ("1234e-12", Fraction(2, 10**9)),
        ("1e-9", Fraction(1, 10**9)),
        ("15e-10", Fraction(2, 10**9)),
        ("9.2e18", Fraction(9_200_000_000_000_000_000)),
        ("9.3e18", Fraction(INT64_MAX)),
        ("0." + "0" * 40 + "1Ei", Fraction(1, 10**9)),  # 1.2e-23: one nano-unit
        ("0." + "0" * 26 + "1Ei", Fraction(2, 10**9)),  # 2^60 / 10^27: 1.15 nano, rounded up
        ("0." + "0" * 27 + "1Ei", Fraction(1, 10**9)),  # 0.115 nano
        ("0." + "0" * 28 + "1Ei", Fraction(1, 10**9)),  # the first known without computing
        ("1" * 1000, Fraction(INT64_MAX)),  # MAX_DIGITS significant digits: read
        ("1" + "0" * 5000, Fraction(INT64_MAX)),  # zeros are not significant
        ("0." + "0" * 5000 + "1", Fraction(1, 10**9)),
    ],
)
def test_parse_quantity(text: str, value: Fraction) -> None:
    assert parse_quantity(text) == value


@pytest.mark.parametrize(
    "text",
    [
        "",
        ".",
        "+",
        "1K",
        "1ki",
        "1.2.3",
        "abc",
        "1Mx",
        "--1",
        "e3",
        "1 Gi",
        " 1",
        "1e",
        "1e1.5",
        "1m1",
        "1Ee3",
        "1e9223372036854775808",  # an exponent past int64, as strconv.ParseInt refuses
        "1" * 1001,  # past MAX_DIGITS
    ],
)
def test_parse_quantity_refuses(text: str) -> None:
    with pytest.raises(ValueError, match="quantit"):
        parse_quantity(text)
    assert not is_quantity(text)


def test_a_huge_exponent_costs_no_time() -> None:
    start = time.monotonic()
    assert parse_quantity("9" * 40 + "e-9223372036854775807") == Fraction(1, 10**9)
    assert parse_quantity("1" + "0" * 5000 + "e-5000") == 1
    assert time.monotonic() - start < 1


@pytest.mark.parametrize(
    ("text", "millis", "value"),
    [("1", True, 1000), ("0.0001", True, 1), ("1n", False, 1), ("1.5Ki", False, 1536)],
)
def test_whole_units_round_up(text: str, millis: bool, value: int) -> None:
    assert whole_units(text, millis=millis) == value


def test_whole_units_refuse_a_negative_amount_and_read_zero() -> None:
    assert whole_units("-0", millis=True) == 0
    with pytest.raises(ValueError, match="a negative amount: '-1n'"):
        whole_units("-1n")


def test_a_long_run_of_digits_is_refused_in_linear_time() -> None:
    """Found by review: a suffix of digits alone competed with the number's digits."""
    import time

    started = time.perf_counter()
    for n in (10_000, 40_000):
        with pytest.raises(ValueError):
            parse_quantity("1" * n + "x")
    assert time.perf_counter() - started < 1.0  # a hang guard: quadratic took 6 s
