"""Typed units of site files: byte sizes, bandwidths, durations and threshold comparisons."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from itertools import pairwise
from typing import Literal

from nvcregen.core.secrets import shown as quoted


def _q(value: str) -> str:
    """A value from an input as a message quotes it: masked unless known safe."""
    return quoted(value, quote="'")


class UnitError(ValueError):
    """A value whose unit is missing, unknown, ambiguous or of the wrong kind.

    Every parser and formatter in this module raises it on input it cannot read.

    Attributes:
        message: What is wrong, quoting the offending text.
        hint: How to write it instead; empty when there is nothing useful to add.

    """

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


_NUMBER = r"[0-9]+(?:\.[0-9]+)?"
_NUMBER_UNIT = re.compile(rf"(?P<sign>[+-]?)(?P<num>{_NUMBER})(?P<space>\s*)(?P<unit>.*)", re.S)


# No size, bandwidth or duration a site states needs more digits than this; longer numbers
# would overflow floats (an inf threshold) or Python's int-from-text limit downstream.
MAX_DIGITS = 18


def _too_long(num: str, kind: str, shown: str) -> UnitError:
    cut = shown if len(shown) <= 40 else f"{shown[:20]}...{shown[-12:]}"
    return UnitError(
        f"a {kind} of {len(num)} digits is out of range: {_q(cut)}",
        f"write a {kind} of at most {MAX_DIGITS} digits",
    )


def _split(text: str, kind: str, example: str) -> tuple[Decimal, str, str, str]:
    """Split `text` into (value, number as written, spacing, unit), or raise."""
    shown = text.strip()
    digits = re.match(r"[+-]?([0-9]+)", shown)
    if digits is not None and len(digits[1].lstrip("0")) > MAX_DIGITS:
        raise _too_long(digits[1], kind, shown)
    match = _NUMBER_UNIT.fullmatch(shown)
    if match is None:
        raise UnitError(f"{_q(shown)} is not a {kind}: expected a number and a unit", example)
    num, space, unit = match["num"], match["space"], match["unit"]
    if match["sign"] == "-":
        raise UnitError(f"a {kind} cannot be negative: {_q(shown)}", example)
    if match["sign"] == "+":
        raise UnitError(f"a {kind} takes no sign: {_q(shown)}", f"write {num}{space}{unit}")
    return Decimal(num), num, space, unit


def _check_non_negative(n: int, kind: str) -> None:
    if n < 0:
        raise UnitError(f"a {kind} cannot be negative: {n}")


_BINARY = {"TiB": 1024**4, "GiB": 1024**3, "MiB": 1024**2, "KiB": 1024}
_DECIMAL = {"TB": 10**12, "GB": 10**9, "MB": 10**6, "KB": 10**3}
_SIZE_UNITS = {"B": 1, **_BINARY, **_DECIMAL, "kB": 10**3}
_BIT_UNITS = {"b": 1, "Kb": 10**3, "kb": 10**3, "Mb": 10**6, "Gb": 10**9, "Tb": 10**12}
_BIT_UNITS |= {"Kib": 1024, "Mib": 1024**2, "Gib": 1024**3, "Tib": 1024**4}
_SIZE_HINT = "write 1GiB (2^30 bytes) or 1GB (10^9 bytes)"
_NCCL_SUFFIXES = {"T": 1024**4, "G": 1024**3, "M": 1024**2, "K": 1024}


def _size_unit_error(value: Decimal, num: str, unit: str) -> UnitError:
    """Explain why `unit` is not a size unit."""
    if "/" in unit or unit.lower().endswith("ps"):
        return UnitError(f"{_q(unit)} is a bandwidth (per second), not a size", _SIZE_HINT)
    if unit in _BIT_UNITS or unit.lower().endswith(("bit", "bits")):
        nbytes = value * _BIT_UNITS.get(unit, 0) / 8
        exact = unit in _BIT_UNITS and nbytes == int(nbytes)
        same = f"{num}{unit} = {format_size(int(nbytes))}; " if exact else ""
        return UnitError(f"{_q(unit)} is bits, but a size is in bytes (B)", same + _SIZE_HINT)
    if unit.lower() in ("byte", "bytes"):
        return UnitError(f"unknown size unit {_q(unit)}", f"write {num}B")
    prefix = unit[:1].upper()
    if prefix in _NCCL_SUFFIXES:
        return UnitError(
            f"unknown size unit {_q(unit)} (units are case-sensitive; say 1024- or 1000-based)",
            f"write {num}{prefix}iB (1024-based) or {num}{prefix}B (1000-based)",
        )
    return UnitError(f"unknown size unit {_q(unit)}", f"use {', '.join(_SIZE_UNITS)}; {_SIZE_HINT}")


def parse_size(text: str) -> int:
    """Parse a byte size such as "1GiB", "512 MiB", "1.5KiB" or "1GB".

    KiB, MiB, GiB, TiB are powers of 1024; KB (or kB), MB, GB, TB powers of 1000.

    Args:
        text: The size as written: a number, at most one space, and a unit.

    Returns:
        The size in bytes.

    """
    value, num, space, unit = _split(text, "size", _SIZE_HINT)
    shown = text.strip()
    if not unit:
        raise UnitError(f"a size needs a unit: {_q(shown)}", f"{_SIZE_HINT}; {num}B is bytes")
    if space not in ("", " "):
        raise UnitError(f"at most one space before the unit: {_q(shown)}", f"write {num}{unit}")
    factor = _SIZE_UNITS.get(unit)
    if factor is None:
        raise _size_unit_error(value, num, unit)
    nbytes = value * factor
    if nbytes != int(nbytes):
        raise UnitError(
            f"{_q(shown)} is not a whole number of bytes ({nbytes.normalize():f})",
            f"round to whole bytes, e.g. {int(nbytes)}B",
        )
    return int(nbytes)


def format_size(n: int) -> str:
    """Return the canonical short form of `n` >= 0 bytes: "1GiB", "512MiB", "1GB", "8B".

    That is the largest binary unit dividing `n` exactly, unless the largest decimal unit
    that does needs fewer digits: 2GB is "2GB", not "1953125KiB".
    """
    _check_non_negative(n, "size")
    count, best = n, "B"
    for table in (_BINARY, _DECIMAL):
        unit = next((unit for unit, factor in table.items() if n % factor == 0), "B")
        if len(str(n // _SIZE_UNITS[unit])) < len(str(count)):
            count, best = n // _SIZE_UNITS[unit], unit
    return f"{count}{best}"


def nccl_size_arg(n: int) -> str:
    """Return `n` >= 0 bytes as nccl-tests' -b/-e flags and NVCRE's `maxBytes` take it.

    That matches ^[0-9]+(K|M|G|T)?$, K/M/G/T being powers of 1024: the largest suffix
    dividing `n` exactly ("1G" for 1GiB), else plain digits ("1000000000" for 1GB).
    """
    _check_non_negative(n, "size")
    for suffix, factor in _NCCL_SUFFIXES.items():
        if n and n % factor == 0:
            return f"{n // factor}{suffix}"
    return str(n)


_PREFIX_GB = {"G": Decimal(1), "M": Decimal("0.001"), "T": Decimal(1000)}
_BANDWIDTH_UNITS = {  # how many GB/s one unit is; a bit is an eighth of a byte
    f"{p}{u}": gb / (8 if "b" in u else 1)
    for u in ("B/s", "b/s", "bps")
    for p, gb in _PREFIX_GB.items()
}
_BANDWIDTH_UNITS |= {
    f"{p}iB/s": Decimal(1024**k) / 10**9 for p, k in (("G", 3), ("M", 2), ("T", 4))
}
_BOTH_BANDWIDTHS = "write {0} GB/s (gigabytes per second) or {0} Gb/s (gigabits per second)"


@dataclass(frozen=True)
class Bandwidth:
    """A bandwidth in gigabytes per second (1e9 bytes/s), the unit nccl-tests report.

    Attributes:
        gbytes_per_s: The value converted to GB/s.
        written: The text as written, spacing normalised to "<number> <unit>".

    """

    gbytes_per_s: float
    written: str

    def converted(self) -> bool:
        """Return True when the written unit was not GB/s, so the value was converted."""
        return self.written.strip().lstrip("0123456789.").strip() != "GB/s"


def _bandwidth_unit_error(num: str, unit: str) -> UnitError:
    """Explain why `unit` is not a bandwidth unit."""
    if re.fullmatch(r"[KMGT]?bps", unit, re.IGNORECASE):
        return UnitError(f"{_q(unit)} is ambiguous (bytes or bits?)", _BOTH_BANDWIDTHS.format(num))
    if unit in _SIZE_UNITS or unit in _BIT_UNITS:
        hint = f"write {num} {unit}/s" if f"{unit}/s" in _BANDWIDTH_UNITS else ""
        return UnitError(f"{_q(unit)} is a size, not a bandwidth (per second)", hint)
    same = [u for u in _BANDWIDTH_UNITS if u.lower() == unit.lower()]
    guess = re.sub(r"/sec(ond)?$", "/s", unit).replace("bit", "b").replace("Byte", "B")
    if same or guess in _BANDWIDTH_UNITS:
        return UnitError(
            f"unknown bandwidth unit {_q(unit)} (units are case-sensitive: B = bytes, b = bits)",
            " or ".join(f"write {num} {u}" for u in same or [guess]),
        )
    return UnitError(
        f"unknown bandwidth unit {_q(unit)}", "use one of " + ", ".join(_BANDWIDTH_UNITS)
    )


def parse_bandwidth(text: str) -> Bandwidth:
    """Parse a bandwidth such as "380 GB/s", "3040 Gb/s", "400Gbps" or "100 GiB/s".

    GB/s, MB/s, TB/s are bytes per second (1e9, 1e6, 1e12); Gb/s, Gbps, Mb/s, Mbps, Tb/s,
    Tbps are bits per second; GiB/s, MiB/s, TiB/s are 1024-based bytes per second.

    Args:
        text: The bandwidth as written in a site file.

    Returns:
        The bandwidth converted to GB/s, with the text it was written as.

    """
    value, num, _space, unit = _split(text, "bandwidth", "write e.g. 380 GB/s")
    unit = re.sub(r"\s+", "", unit)
    if not unit:
        raise UnitError(
            "a bandwidth needs a unit: GB/s (bytes) or Gb/s (bits)", _BOTH_BANDWIDTHS.format(num)
        )
    factor = _BANDWIDTH_UNITS.get(unit)
    if factor is None:
        raise _bandwidth_unit_error(num, unit)
    return Bandwidth(float(value * factor), f"{num} {unit}")


def format_gbs(x: float) -> str:
    """Return finite `x` as a CEL double literal: 380.0 -> "380.0", 427.58 -> "427.58".

    The shortest decimal form, always with a '.', rounded to 6 decimal places (6
    significant digits below 1) so float noise such as 380.00000000000006 goes away.
    """
    if not math.isfinite(x):
        raise UnitError(f"{x!r} cannot be written as a CEL number")
    if x == 0:
        return "0.0"
    digits = max(6, 5 - math.floor(math.log10(abs(x))))
    text = format(Decimal(repr(round(x, digits))), "f")
    return text if "." in text else f"{text}.0"


_DURATION_MS = {"h": 3_600_000, "m": 60_000, "s": 1000, "ms": 1}
_DURATION = re.compile(r"(?:[0-9]+(?:ms|h|m|s))+")
_DURATION_PART = re.compile(r"([0-9]+)(ms|h|m|s)")
_LOOSE_DURATION = re.compile(rf"(?:\s*{_NUMBER}\s*[^\s0-9.]*)+")
_LOOSE_PART = re.compile(rf"({_NUMBER})\s*([^\s0-9.]*)")
_DURATION_EXAMPLE = "write e.g. 30m, 1h30m, 90s or 500ms (units h, m, s, ms)"
_DURATION_ALIASES = dict.fromkeys(("d", "day", "days"), 86_400_000)  # units NVCRE does not take
_DURATION_ALIASES |= dict.fromkeys(("w", "week", "weeks"), 7 * 86_400_000)
_DURATION_ALIASES |= dict.fromkeys(("H", "hr", "hrs", "hour", "hours"), 3_600_000)
_DURATION_ALIASES |= dict.fromkeys(("min", "mins", "minute", "minutes"), 60_000)
_DURATION_ALIASES |= dict.fromkeys(("S", "sec", "secs", "second", "seconds"), 1000)


def _duration_error(text: str) -> UnitError:
    """Explain why `text` (stripped) is not a duration, suggesting the canonical form."""
    if text.startswith("-"):
        return UnitError(f"a duration cannot be negative: {_q(text)}", _DURATION_EXAMPLE)
    if _LOOSE_DURATION.fullmatch(text) is None:
        return UnitError(f"{_q(text)} is not a duration", _DURATION_EXAMPLE)
    parts = _LOOSE_PART.findall(text)
    total = Decimal(0)
    for num, unit in parts:
        factor = _DURATION_MS.get(unit) or _DURATION_ALIASES.get(unit)
        if factor is None and not unit:
            hint = f"write {num}s or {num}m" if "." not in num else _DURATION_EXAMPLE
            return UnitError(f"a duration needs a unit: {_q(text)}", hint)
        if factor is None:
            return UnitError(f"unknown duration unit {_q(unit)} in {_q(text)}", _DURATION_EXAMPLE)
        total += Decimal(num) * factor
    odd = [unit for _num, unit in parts if unit not in _DURATION_MS]
    reasons = [f"units are h, m, s, ms, not {', '.join(odd)}"] if odd else []
    flags = {"no fractions": "." in text, "no spaces": len(text.split()) > 1}
    reasons += [reason for reason, bad in flags.items() if bad]
    hint = f"write {format_duration(int(total))}" if total == int(total) else _DURATION_EXAMPLE
    return UnitError(f"invalid duration {_q(text)}: {', '.join(reasons)}", hint)


def parse_duration(text: str) -> int:
    """Parse a duration in the Go style NVCRE accepts: "30m", "1h30m", "90s", "500ms".

    Args:
        text: The duration: whole numbers with units h, m, s, ms, each at most once and
            in that order, no spaces.

    Returns:
        The duration in milliseconds.

    """
    shown = text.strip()
    longest = max((len(n.lstrip("0")) for n in re.findall(r"[0-9]+", shown)), default=0)
    if longest > MAX_DIGITS:
        raise _too_long("9" * longest, "duration", shown)
    if _DURATION.fullmatch(shown) is None:
        raise _duration_error(shown)
    parts = [(int(num), unit) for num, unit in _DURATION_PART.findall(shown)]
    total = sum(num * _DURATION_MS[unit] for num, unit in parts)
    ranks = [list(_DURATION_MS).index(unit) for _num, unit in parts]
    if any(later <= earlier for earlier, later in pairwise(ranks)):
        hint = f"write {format_duration(total)}"
        raise UnitError(f"invalid duration {_q(shown)}: use h, m, s, ms once each, in order", hint)
    return total


def format_duration(ms: int) -> str:
    """Return `ms` >= 0 milliseconds in the canonical form NVCRE accepts.

    The non-zero components in order, matching ^([0-9]+(h|m|s|ms))+$: 5400000 -> "1h30m",
    90000 -> "1m30s", 500 -> "500ms"; 0 is "0s".
    """
    _check_non_negative(ms, "duration")
    parts = []
    for unit, factor in _DURATION_MS.items():
        count, ms = divmod(ms, factor)
        if count:
            parts.append(f"{count}{unit}")
    return "".join(parts) or "0s"


UnitKind = Literal["bandwidth", "ratio", "seconds", "number"]
_OPERATOR = re.compile(r"\s*(>=|<=|==|=>|=<|!=|<>|>|<|=|≥|≤)?\s*(.*?)\s*", re.S)
_OPERATOR_FIXES = {"=>": ">=", "=<": "<=", "=": "==", "≥": ">=", "≤": "<="}
_EXAMPLES = {"bandwidth": ">= 380 GB/s", "ratio": ">= 0.9", "seconds": "<= 1.5s", "number": ">= 10"}


@dataclass(frozen=True)
class Comparison:
    """A threshold such as ">= 380 GB/s", with its bound in the unit NVCRE compares.

    Attributes:
        op: One of ">=", ">", "<=", "<", "==".
        value: The bound: GB/s for bandwidths, 0..1 for ratios, seconds for times.
        unit: "GB/s" for bandwidths, "s" for times, "" for ratios and plain numbers.
        written: The text as written, spacing normalised to "<op> <bound>".

    """

    op: str
    value: float
    unit: str
    written: str

    def cel(self) -> str:
        """Return the NVCRE threshold CEL expression over `value`, e.g. "value >= 380.0"."""
        return f"value {self.op} {format_gbs(self.value)}"


def _bandwidth_bound(text: str) -> tuple[float, str, str]:
    bandwidth = parse_bandwidth(text)
    return bandwidth.gbytes_per_s, "GB/s", bandwidth.written


def _ratio_bound(text: str) -> tuple[float, str, str]:
    match = re.fullmatch(rf"([+-]?{_NUMBER})\s*(%?)", text)
    if match is None:
        raise UnitError(f"{_q(text)} is not a ratio", "write a number from 0 to 1, or a percentage")
    value = Decimal(match[1]) / (100 if match[2] else 1)
    if not 0 <= value <= 1:
        raise UnitError(f"ratio {_q(text)} is outside 0..1 (0%..100%)", "write e.g. 0.9 or 90%")
    return float(value), "", f"{match[1]}{match[2]}"


def _seconds_bound(text: str) -> tuple[float, str, str]:
    match = re.fullmatch(rf"({_NUMBER})\s*s", text)
    if match is not None:
        return float(Decimal(match[1])), "s", f"{match[1]}s"
    if re.fullmatch(rf"[+-]?{_NUMBER}", text):
        raise UnitError(f"a time needs a unit: {_q(text)}", f"write {text}s (seconds) or {text}ms")
    return parse_duration(text) / 1000, "s", text


def _number_bound(text: str) -> tuple[float, str, str]:
    plain = re.fullmatch(rf"[+-]?{_NUMBER}(?:[eE][+-]?[0-9]+)?", text)
    if plain is not None and len(text) > 4 * MAX_DIGITS:
        raise _too_long(text, "number", text)
    if plain is None or not math.isfinite(float(text)):
        raise UnitError(
            f"{_q(text)} is not a plain number", "this threshold has no unit: e.g. >= 10"
        )
    return float(text), "", text


_Bound = Callable[[str], tuple[float, str, str]]  # text -> (value, unit, text as shown)
_BOUNDS: dict[str, _Bound] = {"bandwidth": _bandwidth_bound, "ratio": _ratio_bound}
_BOUNDS |= {"seconds": _seconds_bound, "number": _number_bound}


def parse_comparison(text: str, *, unit_kind: UnitKind) -> Comparison:
    """Parse a threshold such as ">= 380 GB/s", "> 0.9", "> 90%" or "<= 1.5s".

    Args:
        text: The threshold as written: an operator (>=, >, <=, <, ==) and a bound.
        unit_kind: What the bound measures: "bandwidth" (converted to GB/s), "ratio"
            (0..1, or a percentage), "seconds" (a number with 's', or a duration such
            as "500ms") or "number" (a bare number).

    Returns:
        The operator and the bound in the unit NVCRE compares.

    """
    match = _OPERATOR.fullmatch(text)
    op, rest = (match[1] or "", match[2]) if match else ("", text)
    example_op, example = _EXAMPLES[unit_kind].split(" ", 1)
    if not op:
        raise UnitError(
            f"threshold {_q(text.strip())} needs a comparison operator (>=, >, <=, <, ==)",
            f"write {example_op} {rest or example}",
        )
    if op not in (">=", "<=", "==", ">", "<"):
        fix = _OPERATOR_FIXES.get(op)
        hint = f"write {fix} {rest}" if fix else "use one of >=, >, <=, <, =="
        raise UnitError(f"unknown comparison operator {_q(op)} in {_q(text.strip())}", hint)
    if not rest:
        raise UnitError(f"threshold {_q(text.strip())} has no bound", f"write {op} {example}")
    value, unit, shown = _BOUNDS[unit_kind](rest)
    return Comparison(op, value, unit, f"{op} {shown}")


def check_unit(unit: str, value: str) -> tuple[str, str] | None:
    """Parse a unit-bearing value; return (message, hint) when it is wrong."""
    try:
        if unit == "size":
            parse_size(value)
        elif unit == "bandwidth":
            parse_bandwidth(value)
        elif unit == "duration":
            parse_duration(value)
        elif unit == "bandwidth-comparison":
            parse_comparison(value, unit_kind="bandwidth")
        elif unit == "ratio-comparison":
            parse_comparison(value, unit_kind="ratio")
    except UnitError as exc:
        return exc.message, exc.hint
    return None
