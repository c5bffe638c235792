"""Tests of nvcregen.core.units: byte sizes, bandwidths, durations and threshold comparisons."""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Callable
from typing import Any

import pytest

from nvcregen.core import units
from nvcregen.core.units import (
    Bandwidth,
    Comparison,
    UnitError,
    UnitKind,
    format_duration,
    format_gbs,
    format_size,
    nccl_size_arg,
    parse_bandwidth,
    parse_comparison,
    parse_duration,
    parse_size,
)

NCCL_ARG = re.compile(r"^[0-9]+(K|M|G|T)?$")  # nccl-tests -b/-e and NVCRE maxBytes
NVCRE_DURATION = re.compile(r"^([0-9]+(h|m|s|ms))+$")  # the NVCRE CRD pattern
CANONICAL_SIZE = re.compile(r"^[0-9]+(B|KiB|MiB|GiB|TiB|KB|MB|GB|TB)$")
CEL_DOUBLE = re.compile(r"^-?[0-9]+\.[0-9]+$")

KIB, MIB, GIB, TIB = 1024, 1024**2, 1024**3, 1024**4


def raises_unit_error(call: Callable[[], object], in_message: str, in_hint: str) -> UnitError:
    """Run `call`, expect a UnitError whose message and hint contain the given parts."""
    with pytest.raises(UnitError) as caught:
        call()
    error = caught.value
    assert in_message in error.message, error.message
    assert in_hint in error.hint, error.hint
    assert str(error) == error.message
    return error


# --- UnitError ------------------------------------------------------------------------------


def test_unit_error_carries_message_and_hint() -> None:
    error = UnitError("a size needs a unit", hint="write 1GiB")
    assert isinstance(error, ValueError)
    assert str(error) == "a size needs a unit"
    assert error.message == "a size needs a unit"
    assert error.hint == "write 1GiB"
    assert UnitError("no hint").hint == ""


# --- sizes ----------------------------------------------------------------------------------


def test_seed_figures() -> None:
    assert parse_size("1GiB") == 1073741824
    assert parse_size("1GB") == 10**9
    assert parse_size("1GiB") != parse_size("1GB")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("0B", 0),
        ("1B", 1),
        ("8B", 8),
        ("1KiB", KIB),
        ("1MiB", MIB),
        ("1GiB", GIB),
        ("1TiB", TIB),
        ("512MiB", 512 * MIB),
        ("16GiB", 16 * GIB),
        ("1KB", 1000),
        ("1kB", 1000),
        ("1MB", 10**6),
        ("1GB", 10**9),
        ("1TB", 10**12),
        ("1 GiB", GIB),
        ("8 GB", 8 * 10**9),
        ("  4 GiB  ", 4 * GIB),
        ("1.5KiB", 1536),
        ("0.5GiB", GIB // 2),
        ("2.5GB", 2_500_000_000),
        ("1.25MB", 1_250_000),
        ("1.0B", 1),
    ],
)
def test_parse_size_accepts(text: str, expected: int) -> None:
    assert parse_size(text) == expected


@pytest.mark.parametrize(
    ("text", "in_message", "in_hint"),
    [
        ("1024", "a size needs a unit", "write 1GiB (2^30 bytes) or 1GB (10^9 bytes)"),
        ("1.5", "a size needs a unit", "1GB (10^9 bytes)"),
        ("1Gb", "'Gb' is bits", "1Gb = 125MB"),
        ("8Gb", "bits, but a size is in bytes", "8Gb = 1GB"),
        ("1 Mb", "bits", "1GiB (2^30 bytes)"),
        ("4Gbit", "'Gbit' is bits", "1GB (10^9 bytes)"),
        ("1GiB/s", "'GiB/s' is a bandwidth", "1GiB"),
        ("1 GB/s", "bandwidth (per second), not a size", "1GB"),
        ("10Gbps", "'Gbps' is a bandwidth", "1GiB"),
        ("1G", "unknown size unit 'G'", "1GiB (1024-based) or 1GB (1000-based)"),
        ("4Gi", "unknown size unit 'Gi'", "4GiB"),
        ("1gib", "case-sensitive", "1GiB"),
        ("2 mb", "unknown size unit 'mb'", "2MiB (1024-based) or 2MB (1000-based)"),
        ("1 PB", "unknown size unit 'PB'", "GiB"),
        ("5 bytes", "unknown size unit 'bytes'", "write 5B"),
        ("1e9B", "unknown size unit", "1GB"),
        ("1.3B", "not a whole number of bytes", "1B"),
        ("1.1KiB", "not a whole number of bytes (1126.4)", "1126B"),
        ("1  GiB", "at most one space", "write 1GiB"),
        ("-1GiB", "cannot be negative", "1GiB"),
        ("+1GiB", "takes no sign", "write 1GiB"),
        ("", "not a size", "1GiB"),
        ("GiB", "not a size", "1GiB"),
        ("one GiB", "not a size", "1GiB"),
    ],
)
def test_parse_size_rejects(text: str, in_message: str, in_hint: str) -> None:
    raises_unit_error(lambda: parse_size(text), in_message, in_hint)


@pytest.mark.parametrize(
    ("n", "expected"),
    [
        (0, "0B"),
        (1, "1B"),
        (8, "8B"),
        (1023, "1023B"),
        (1536, "1536B"),
        (KIB, "1KiB"),
        (GIB, "1GiB"),
        (512 * MIB, "512MiB"),
        (1536 * MIB, "1536MiB"),
        (3 * TIB, "3TiB"),
        (1024 * TIB, "1024TiB"),
        (1000, "1KB"),
        (10**6, "1MB"),
        (10**9, "1GB"),
        (10**12, "1TB"),
        (2 * 10**9, "2GB"),  # divisible by 1KiB, but 1953125KiB is not a short form
        (5 * 10**12, "5TB"),
        (1000 * KIB, "1000KiB"),  # 1024KB is as short: binary wins ties
    ],
)
def test_format_size(n: int, expected: str) -> None:
    assert format_size(n) == expected


SIZES = sorted(
    set(range(0, 4100, 13))
    | {
        k * unit
        for k in (1, 2, 3, 5, 7, 10, 100, 999, 1000, 1023, 1024, 1536, 4097)
        for unit in (1, 1000, KIB, 10**6, MIB, 10**9, GIB, 10**12, TIB)
    }
)


@pytest.mark.parametrize("n", SIZES)
def test_size_round_trip(n: int) -> None:
    text = format_size(n)
    assert CANONICAL_SIZE.match(text), text
    assert parse_size(text) == n
    assert format_size(parse_size(text)) == text


@pytest.mark.parametrize(
    ("n", "expected"),
    [
        (0, "0"),
        (1, "1"),
        (1000, "1000"),
        (1536, "1536"),
        (KIB, "1K"),
        (MIB, "1M"),
        (GIB, "1G"),
        (TIB, "1T"),
        (8 * GIB, "8G"),
        (3 * GIB // 2, "1536M"),
        (1024 * TIB, "1024T"),
        (10**9, "1000000000"),  # 1GB is not a whole number of nccl-tests' G (GiB)
        (2 * 10**9, "1953125K"),
    ],
)
def test_nccl_size_arg(n: int, expected: str) -> None:
    assert nccl_size_arg(n) == expected


def nccl_bytes(arg: str) -> int:
    """Read an nccl-tests size argument back the way nccl-tests does (K/M/G/T = 1024^k)."""
    factor = {"K": KIB, "M": MIB, "G": GIB, "T": TIB}.get(arg[-1], 1)
    return int(arg.rstrip("KMGT")) * factor


@pytest.mark.parametrize("n", SIZES)
def test_nccl_size_arg_matches_pattern_and_value(n: int) -> None:
    arg = nccl_size_arg(n)
    assert NCCL_ARG.match(arg), arg
    assert nccl_bytes(arg) == n


def test_nccl_size_arg_of_parsed_sizes() -> None:
    assert nccl_size_arg(parse_size("1GiB")) == "1G"
    assert nccl_size_arg(parse_size("1GB")) == "1000000000"
    assert nccl_size_arg(parse_size("8GiB")) == "8G"


@pytest.mark.parametrize("formatter", [format_size, nccl_size_arg, format_duration])
def test_formatters_reject_negative(formatter: Callable[[int], str]) -> None:
    raises_unit_error(lambda: formatter(-1), "cannot be negative", "")


# --- bandwidths -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "gbs", "written", "converted"),
    [
        ("380 GB/s", 380.0, "380 GB/s", False),
        ("380GB/s", 380.0, "380 GB/s", False),
        ("  427.58   GB/s ", 427.58, "427.58 GB/s", False),
        ("380 GB / s", 380.0, "380 GB/s", False),
        ("0 GB/s", 0.0, "0 GB/s", False),
        ("3040 Gb/s", 380.0, "3040 Gb/s", True),
        ("400 Gbps", 50.0, "400 Gbps", True),
        ("400Gbps", 50.0, "400 Gbps", True),
        ("500 MB/s", 0.5, "500 MB/s", True),
        ("8 Mb/s", 0.001, "8 Mb/s", True),
        ("8 Mbps", 0.001, "8 Mbps", True),
        ("1 TB/s", 1000.0, "1 TB/s", True),
        ("1 Tb/s", 125.0, "1 Tb/s", True),
        ("1 Tbps", 125.0, "1 Tbps", True),
        ("1 GiB/s", 1.073741824, "1 GiB/s", True),
        ("100 GiB/s", 107.3741824, "100 GiB/s", True),
        ("1024 MiB/s", 1.073741824, "1024 MiB/s", True),
        ("1 TiB/s", 1099.511627776, "1 TiB/s", True),
    ],
)
def test_parse_bandwidth_accepts(text: str, gbs: float, written: str, converted: bool) -> None:
    bandwidth = parse_bandwidth(text)
    assert bandwidth.gbytes_per_s == pytest.approx(gbs, rel=1e-12, abs=0)
    assert bandwidth.written == written
    assert bandwidth.converted() is converted


def test_gigabits_are_an_eighth_of_gigabytes() -> None:
    assert parse_bandwidth("3040 Gb/s").gbytes_per_s == parse_bandwidth("380 GB/s").gbytes_per_s
    assert parse_bandwidth("380 Gb/s").gbytes_per_s != parse_bandwidth("380 GB/s").gbytes_per_s
    assert parse_bandwidth("380 Gb/s").gbytes_per_s == 47.5
    assert parse_bandwidth("380 Gbps") == Bandwidth(47.5, "380 Gbps")


@pytest.mark.parametrize(
    ("bits", "bytes_"),
    [("Gb/s", "GB/s"), ("Gbps", "GB/s"), ("Mb/s", "MB/s"), ("Mbps", "MB/s"), ("Tb/s", "TB/s")],
)
def test_bit_units_never_mixed_with_byte_units(bits: str, bytes_: str) -> None:
    assert parse_bandwidth(f"8 {bits}").gbytes_per_s == parse_bandwidth(f"1 {bytes_}").gbytes_per_s
    assert (
        parse_bandwidth(f"1 {bits}").gbytes_per_s * 8 == parse_bandwidth(f"1 {bytes_}").gbytes_per_s
    )
    assert parse_bandwidth(f"1 {bits}").converted()


def test_bandwidth_is_frozen() -> None:
    bandwidth = parse_bandwidth("380 GB/s")
    with pytest.raises(dataclasses.FrozenInstanceError):
        bandwidth.gbytes_per_s = 1.0  # type: ignore[misc]


@pytest.mark.parametrize(
    ("text", "in_message", "in_hint"),
    [
        ("380", "a bandwidth needs a unit: GB/s (bytes) or Gb/s (bits)", "380 Gb/s"),
        ("427.5", "a bandwidth needs a unit", "427.5 GB/s"),
        ("380 GBps", "'GBps' is ambiguous", "380 GB/s (gigabytes per second)"),
        ("380 MBps", "ambiguous", "380 Gb/s (gigabits per second)"),
        ("380 gbps", "ambiguous", "380 GB/s"),
        ("380 gb/s", "case-sensitive", "write 380 GB/s or write 380 Gb/s"),
        ("380 gib/s", "case-sensitive", "write 380 GiB/s"),
        ("380 GB", "'GB' is a size, not a bandwidth", "write 380 GB/s"),
        ("380 Gb", "is a size, not a bandwidth", "write 380 Gb/s"),
        ("1 GiB", "is a size", "write 1 GiB/s"),
        ("380 GB/sec", "unknown bandwidth unit 'GB/sec'", "write 380 GB/s"),
        ("380 Gbit/s", "unknown bandwidth unit", "write 380 Gb/s"),
        ("380 furlongs", "unknown bandwidth unit 'furlongs'", "GB/s"),
        ("-380 GB/s", "cannot be negative", "380 GB/s"),
        ("", "not a bandwidth", "380 GB/s"),
        ("GB/s", "not a bandwidth", "380 GB/s"),
    ],
)
def test_parse_bandwidth_rejects(text: str, in_message: str, in_hint: str) -> None:
    raises_unit_error(lambda: parse_bandwidth(text), in_message, in_hint)


def test_gbps_hint_offers_both_readings() -> None:
    error = raises_unit_error(lambda: parse_bandwidth("400 GBps"), "ambiguous", "")
    assert "400 GB/s" in error.hint
    assert "400 Gb/s" in error.hint


@pytest.mark.parametrize(
    ("x", "expected"),
    [
        (380.0, "380.0"),
        (427.58, "427.58"),
        (2.25, "2.25"),
        (47.5, "47.5"),
        (380.00000000000006, "380.0"),
        (0.1 + 0.2, "0.3"),
        (0.0, "0.0"),
        (-0.0, "0.0"),
        (1.0, "1.0"),
        (-5.0, "-5.0"),
        (1 / 3, "0.333333"),
        (1.073741824, "1.073742"),
        (0.000125, "0.000125"),
        (1e-9, "0.000000001"),
        (1e22, "10000000000000000000000.0"),
        (123456.7891234, "123456.789123"),
    ],
)
def test_format_gbs(x: float, expected: str) -> None:
    text = format_gbs(x)
    assert text == expected
    assert CEL_DOUBLE.match(text), text
    assert float(text) == pytest.approx(x, rel=1e-5, abs=0)


@pytest.mark.parametrize("x", [math.inf, -math.inf, math.nan])
def test_format_gbs_rejects_non_finite(x: float) -> None:
    raises_unit_error(lambda: format_gbs(x), "cannot be written as a CEL number", "")


# --- durations ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "ms"),
    [
        ("30m", 1_800_000),
        ("45m", 2_700_000),
        ("1h30m", 5_400_000),
        ("90s", 90_000),
        ("500ms", 500),
        ("1h0m0s", 3_600_000),
        ("1h", 3_600_000),
        ("48h", 172_800_000),
        ("1m30s", 90_000),
        ("1s500ms", 1500),
        ("1000ms", 1000),
        ("120m", 7_200_000),
        ("2h15m30s250ms", 8_130_250),
        ("0s", 0),
        ("0ms", 0),
        ("  45m ", 2_700_000),
    ],
)
def test_parse_duration_accepts(text: str, ms: int) -> None:
    assert parse_duration(text) == ms


@pytest.mark.parametrize(
    ("text", "in_message", "in_hint"),
    [
        ("1.5h", "no fractions", "write 1h30m"),
        ("0.5s", "no fractions", "write 500ms"),
        ("30", "a duration needs a unit", "write 30s or 30m"),
        ("0", "needs a unit", "0s"),
        ("1h30", "needs a unit", "30m"),
        ("30 min", "not min", "write 30m"),
        ("30min", "not min", "write 30m"),
        ("1d", "not d", "write 24h"),
        ("2 days", "not days", "write 48h"),
        ("1w", "not w", "write 168h"),
        ("1H", "not H", "write 1h"),
        ("10 seconds", "not seconds", "write 10s"),
        ("1h 30m", "no spaces", "write 1h30m"),
        ("30m1h", "in order", "write 1h30m"),
        ("1h1h", "once each", "write 2h"),
        ("500ms1s", "in order", "write 1s500ms"),
        ("5us", "unknown duration unit 'us'", "ms"),
        ("", "not a duration", "1h30m"),
        ("abc", "not a duration", "30m"),
        ("-5m", "cannot be negative", "30m"),
        ("1.5ms", "no fractions", "500ms"),
    ],
)
def test_parse_duration_rejects(text: str, in_message: str, in_hint: str) -> None:
    raises_unit_error(lambda: parse_duration(text), in_message, in_hint)


@pytest.mark.parametrize(
    ("ms", "expected"),
    [
        (0, "0s"),
        (1, "1ms"),
        (500, "500ms"),
        (1000, "1s"),
        (90_000, "1m30s"),
        (2_700_000, "45m"),
        (3_600_000, "1h"),
        (5_400_000, "1h30m"),
        (3_600_500, "1h500ms"),
        (86_400_000, "24h"),
        (3_723_004, "1h2m3s4ms"),
    ],
)
def test_format_duration(ms: int, expected: str) -> None:
    assert format_duration(ms) == expected


DURATIONS = sorted(
    set(range(0, 3000, 37))
    | {
        k * unit + extra
        for k in (1, 2, 7, 59, 60, 61, 90, 3599, 3600)
        for unit in (1, 1000, 60_000, 3_600_000)
        for extra in (0, 1, 999, 59_000)
    }
)


@pytest.mark.parametrize("ms", DURATIONS)
def test_duration_round_trip(ms: int) -> None:
    text = format_duration(ms)
    assert NVCRE_DURATION.match(text), text
    assert parse_duration(text) == ms


@pytest.mark.parametrize(
    ("text", "canonical"), [("1h0m0s", "1h"), ("90s", "1m30s"), ("120m", "2h"), ("1000ms", "1s")]
)
def test_durations_canonicalise(text: str, canonical: str) -> None:
    assert format_duration(parse_duration(text)) == canonical


# --- comparisons ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "kind", "expected", "cel"),
    [
        (
            ">= 380 GB/s",
            "bandwidth",
            Comparison(">=", 380.0, "GB/s", ">= 380 GB/s"),
            "value >= 380.0",
        ),
        (
            ">=380GB/s",
            "bandwidth",
            Comparison(">=", 380.0, "GB/s", ">= 380 GB/s"),
            "value >= 380.0",
        ),
        (
            ">= 3040 Gb/s",
            "bandwidth",
            Comparison(">=", 380.0, "GB/s", ">= 3040 Gb/s"),
            "value >= 380.0",
        ),
        (
            "> 427.58 GB/s",
            "bandwidth",
            Comparison(">", 427.58, "GB/s", "> 427.58 GB/s"),
            "value > 427.58",
        ),
        ("> 0.9", "ratio", Comparison(">", 0.9, "", "> 0.9"), "value > 0.9"),
        ("> 90%", "ratio", Comparison(">", 0.9, "", "> 90%"), "value > 0.9"),
        ("> 99.5 %", "ratio", Comparison(">", 0.995, "", "> 99.5%"), "value > 0.995"),
        (">= 1", "ratio", Comparison(">=", 1.0, "", ">= 1"), "value >= 1.0"),
        (">= 100%", "ratio", Comparison(">=", 1.0, "", ">= 100%"), "value >= 1.0"),
        ("> 0", "ratio", Comparison(">", 0.0, "", "> 0"), "value > 0.0"),
        ("<= 1.5s", "seconds", Comparison("<=", 1.5, "s", "<= 1.5s"), "value <= 1.5"),
        ("<= 1.5 s", "seconds", Comparison("<=", 1.5, "s", "<= 1.5s"), "value <= 1.5"),
        ("< 500ms", "seconds", Comparison("<", 0.5, "s", "< 500ms"), "value < 0.5"),
        ("<= 1m30s", "seconds", Comparison("<=", 90.0, "s", "<= 1m30s"), "value <= 90.0"),
        ("== 8", "number", Comparison("==", 8.0, "", "== 8"), "value == 8.0"),
        (">= -3.5", "number", Comparison(">=", -3.5, "", ">= -3.5"), "value >= -3.5"),
        ("< 1e3", "number", Comparison("<", 1000.0, "", "< 1e3"), "value < 1000.0"),
    ],
)
def test_parse_comparison_accepts(
    text: str, kind: UnitKind, expected: Comparison, cel: str
) -> None:
    comparison = parse_comparison(text, unit_kind=kind)
    assert comparison == expected
    assert comparison.cel() == cel


def test_gib_bandwidth_threshold_is_converted_to_gbs() -> None:
    comparison = parse_comparison("< 100 GiB/s", unit_kind="bandwidth")
    assert comparison.unit == "GB/s"
    assert comparison.value == pytest.approx(107.3741824, rel=1e-12, abs=0)
    assert comparison.cel() == "value < 107.374182"


def test_bandwidth_thresholds_never_mix_bits_and_bytes() -> None:
    in_bytes = parse_comparison(">= 380 GB/s", unit_kind="bandwidth")
    in_bits = parse_comparison(">= 3040 Gb/s", unit_kind="bandwidth")
    same_number_in_bits = parse_comparison(">= 380 Gb/s", unit_kind="bandwidth")
    assert in_bits.value == in_bytes.value
    assert in_bits.cel() == in_bytes.cel() == "value >= 380.0"
    assert same_number_in_bits.value != in_bytes.value
    assert same_number_in_bits.cel() == "value >= 47.5"


@pytest.mark.parametrize(
    ("text", "kind", "in_message", "in_hint"),
    [
        ("380 GB/s", "bandwidth", "needs a comparison operator", ">= 380 GB/s"),
        ("", "bandwidth", "needs a comparison operator", ">= 380 GB/s"),
        ("0.9", "ratio", "needs a comparison operator", ">= 0.9"),
        ("1.5s", "seconds", "needs a comparison operator", "<= 1.5s"),
        ("10", "number", "needs a comparison operator", ">= 10"),
        (
            ">= 380",
            "bandwidth",
            "a bandwidth needs a unit: GB/s (bytes) or Gb/s (bits)",
            "380 Gb/s",
        ),
        (">= 380 GBps", "bandwidth", "ambiguous", "380 GB/s"),
        (">= 380 GB", "bandwidth", "is a size", "380 GB/s"),
        (">= 1.5", "ratio", "outside 0..1", "90%"),
        ("> 150%", "ratio", "outside 0..1", "0.9"),
        ("> -0.1", "ratio", "outside 0..1", ""),
        ("> high", "ratio", "not a ratio", "percentage"),
        ("<= 1.5", "seconds", "a time needs a unit", "1.5s"),
        ("<= 1.5h", "seconds", "no fractions", "1h30m"),
        ("<= 1d", "seconds", "not d", "24h"),
        (">= 10 GB/s", "number", "not a plain number", "no unit"),
        ("< 1e999", "number", "not a plain number", ""),
        ("=> 380 GB/s", "bandwidth", "unknown comparison operator '=>'", "write >= 380 GB/s"),
        ("=< 2s", "seconds", "'=<'", "write <= 2s"),
        ("= 5", "number", "'='", "write == 5"),
        ("!= 5", "number", "'!='", ">="),
        ("≥ 0.9", "ratio", "'≥'", "write >= 0.9"),
        (">=", "number", "has no bound", ">= 10"),
    ],
)
def test_parse_comparison_rejects(text: str, kind: UnitKind, in_message: str, in_hint: str) -> None:
    raises_unit_error(lambda: parse_comparison(text, unit_kind=kind), in_message, in_hint)


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        (">= 380 GB/s", "bandwidth"),
        ("> 3040 Gb/s", "bandwidth"),
        ("< 1 Mb/s", "bandwidth"),
        ("> 90%", "ratio"),
        ("<= 250ms", "seconds"),
        ("== 1e30", "number"),
        ("> -2", "number"),
    ],
)
def test_cel_is_a_comparison_with_a_double_literal(text: str, kind: UnitKind) -> None:
    cel = parse_comparison(text, unit_kind=kind).cel()
    assert re.match(r"^value (>=|>|<=|<|==) -?[0-9]+\.[0-9]+$", cel), cel


@pytest.mark.parametrize(
    ("parse", "text"),
    [
        (units.parse_size, "9" * 19 + "GiB"),
        (units.parse_size, "9" * 500 + "GiB"),
        (units.parse_bandwidth, "9" * 5000 + " GB/s"),
        (units.parse_duration, "9" * 5000 + "h"),
        (lambda t: units.parse_comparison(t, unit_kind="number"), ">= " + "9" * 5000),
    ],
)
def test_numbers_too_long_are_unit_errors_not_overflows(parse: Any, text: str) -> None:
    with pytest.raises(units.UnitError, match="digits is out of range"):
        parse(text)


def test_the_digit_limit_is_exact() -> None:
    assert units.parse_size("9" * units.MAX_DIGITS + "B") == int("9" * units.MAX_DIGITS)
    assert units.parse_size("0" * 30 + "1GiB") == 2**30  # leading zeros are not digits of value
    with pytest.raises(units.UnitError):
        units.parse_size("1" + "0" * units.MAX_DIGITS + "B")
    assert units.parse_duration("9" * units.MAX_DIGITS + "ms") == int("9" * units.MAX_DIGITS)
