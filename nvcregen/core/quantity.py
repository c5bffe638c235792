"""Kubernetes quantities (`500m`, `1.5Gi`, `2e3`), read exactly as the API server reads them.

One parser for every reader: the CEL library (`check/cel_k8s.py`), the replay's resource
amounts (`replay/selectors.py`) and the queue's pod sizes (`compile/queue/shape.py`).
It follows k8s.io/apimachinery `resource.ParseQuantity`: an optional sign, digits with at
most one decimal point (`1.`, `.5`), then one suffix: a decimal SI prefix (`n u m "" k M G
T P E`), a binary one (`Ki Mi Gi Ti Pi Ei`) or a decimal exponent (`e3`, `E-3`, `e+3`).
Values finer than a nano-unit round up (away from zero) to the next nano-unit, and
magnitudes above 2^63-1 are capped there. Anything else (`1K`, `1 Gi`, `1e1.5`, an
exponent past int64) is refused with ValueError, and so is a number of more than
`MAX_DIGITS` significant digits (the one limit the API server lacks): no quantity, however
long its exponent or its zeros, is slow to read.
"""

from __future__ import annotations

import functools
import math
import re
from fractions import Fraction

PATTERN = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"
"""The form the API server names in its error (`quantities must match ...`)."""

# The suffix starts with a letter: a suffix of digits alone would compete with the number's
# own digits, which made a long digit run quadratic to read (found by review).
_QUANTITY = re.compile(r"([+-]?)([0-9]*)(?:\.([0-9]*))?((?:[eEinumkKMGTP]+[-+]?[0-9]*)?)")
_DECIMAL = {"": 0, "n": -9, "u": -6, "m": -3, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_EXPONENT = re.compile(r"[eE]([-+]?[0-9]+)")
INT64_MAX = 2**63 - 1
_NANO = 10**9
_CAPPED = 19  # 10^19 > 2^63 - 1: a digit string times 10^19 or more is capped
_TWO_TO_60_DIGITS = 19  # 2^60 < 10^19
MAX_DIGITS = 1000
"""Significant digits read at most (the API server has no such limit; a quantity past it
is refused, never read slowly)."""


@functools.lru_cache(maxsize=4096)
def parse_quantity(text: str) -> Fraction:
    """Return the exact value of a Kubernetes quantity, as `resource.ParseQuantity` reads it.

    Args:
        text: e.g. "500m", "1.5Gi", "2e3", "128", "-1Ki".

    Returns:
        The value, rounded up to a nano-unit and capped at 2^63-1 in magnitude.

    Raises:
        ValueError: The text is not a quantity, or has more than `MAX_DIGITS`
            significant digits.

    """
    match = _QUANTITY.fullmatch(text)
    if match is None or not (match[2] or match[3]):
        raise ValueError(f"quantities must match the regular expression '{PATTERN}'")
    sign, whole, fraction, suffix = match.groups()
    ten, two = _suffix_scale(suffix)
    written = f"{whole}{fraction or ''}".lstrip("0")
    significant = written.rstrip("0")  # trailing zeros move into the power of ten
    if len(significant) > MAX_DIGITS:
        raise ValueError(f"quantities with more than {MAX_DIGITS} significant digits")
    power = ten - len(fraction or "") + len(written) - len(significant)
    magnitude = _magnitude(significant, power, two)
    return -magnitude if sign == "-" else magnitude


def _suffix_scale(suffix: str) -> tuple[int, int]:
    """The suffix as powers of ten and of two."""
    if suffix in _BINARY:
        return 0, _BINARY[suffix]
    if suffix in _DECIMAL:
        return _DECIMAL[suffix], 0
    exponent = _EXPONENT.fullmatch(suffix)
    if exponent is None or abs(int(exponent[1])) > INT64_MAX:
        raise ValueError(f"unable to parse quantity's suffix {suffix!r}")
    return int(exponent[1]), 0


def _magnitude(significant: str, power: int, two: int) -> Fraction:
    """`significant * 10^power * 2^two`, rounded up to a nano-unit and capped.

    Far outside 10^-9..2^63 the answer is known without computing 10^power.
    """
    if not significant:
        return Fraction(0)
    order = len(significant) + power  # 10^(order-1) <= significant * 10^power < 10^order
    if order - 1 >= _CAPPED:
        return Fraction(INT64_MAX)
    if order + _TWO_TO_60_DIGITS <= -9:  # below one nano-unit even times 2^60
        return Fraction(1, _NANO)
    scale = Fraction(10**power) if power >= 0 else Fraction(1, 10**-power)
    value = scale * (int(significant) << two)
    nanos = value * _NANO
    if nanos.denominator != 1:
        value = Fraction(math.ceil(nanos), _NANO)
    return min(value, Fraction(INT64_MAX))


def is_quantity(text: str) -> bool:
    """Whether the API server accepts `text` as a quantity."""
    try:
        parse_quantity(text)
    except ValueError:
        return False
    return True


def whole_units(text: str, *, millis: bool = False) -> int:
    """A non-negative quantity as an integer, rounded up.

    In thousandths with `millis` (cpu in millicores), else in whole units (bytes, GPUs).

    Raises:
        ValueError: The text is not a quantity, or it is negative.

    """
    value = parse_quantity(text)
    if value < 0:
        raise ValueError(f"a negative amount: {text!r}")
    return math.ceil(value * 1000 if millis else value)
