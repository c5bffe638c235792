"""Tests for loading site YAML: data, positions, raw text, scalar resolution, robustness."""

from __future__ import annotations

import math
import random
from pathlib import Path

import pytest

from nvcregen.core.errors import Diagnostic, Span
from nvcregen.spec.load import load_document, load_file
from nvcregen.spec.positions import Document

SITE = """\
apiVersion: nvcre.example.com/v1alpha1
kind: Site
metadata:
  name: "lab-1"
  labels: {tier: gold, zone: 'b'}
spec:
  kubernetesVersion: 1.30
  nodePools:
    - name: a100
      gpusPerNode: 8
      scale: 1e3
    - name: h100
      gpusPerNode: 4
      mode: on
  notes: |
    first line
    second line
  empty:
"""


def load(text: str | bytes) -> tuple[Document | None, list[Diagnostic]]:
    raw = text.encode() if isinstance(text, str) else text
    return load_document(raw, "site.yaml")


def ok(text: str | bytes) -> Document:
    doc, diags = load(text)
    assert doc is not None, diags
    return doc


# --- data and positions ---------------------------------------------------------------


def test_site_data() -> None:
    doc = ok(SITE)
    assert doc.data == {
        "apiVersion": "nvcre.example.com/v1alpha1",
        "kind": "Site",
        "metadata": {"name": "lab-1", "labels": {"tier": "gold", "zone": "b"}},
        "spec": {
            "kubernetesVersion": 1.3,
            "nodePools": [
                {"name": "a100", "gpusPerNode": 8, "scale": 1000.0},
                {"name": "h100", "gpusPerNode": 4, "mode": "on"},
            ],
            "notes": "first line\nsecond line\n",
            "empty": None,
        },
    }
    assert doc.path == "site.yaml"
    assert doc.source_line(7) == "  kubernetesVersion: 1.30"


@pytest.mark.parametrize(
    ("ptr", "line", "column", "end"),
    [
        ("", 1, 1, None),
        ("/apiVersion", 1, 13, 39),
        ("/metadata", 4, 3, None),  # a block mapping starts at its first key
        ("/metadata/name", 4, 9, 16),  # quotes included
        ("/metadata/labels", 5, 11, None),  # flow mapping: at "{"
        ("/metadata/labels/tier", 5, 18, 22),
        ("/metadata/labels/zone", 5, 30, 33),
        ("/spec/kubernetesVersion", 7, 22, 26),
        ("/spec/nodePools", 9, 5, None),  # a block sequence starts at its first "-"
        ("/spec/nodePools/0", 9, 7, None),
        ("/spec/nodePools/0/name", 9, 13, 17),
        ("/spec/nodePools/0/gpusPerNode", 10, 20, 21),
        ("/spec/nodePools/0/scale", 11, 14, 17),
        ("/spec/nodePools/1/gpusPerNode", 13, 20, 21),
        ("/spec/nodePools/1/mode", 14, 13, 15),
        ("/spec/notes", 15, 10, None),  # block scalar: at "|", spans lines
        ("/spec/empty", 18, 9, 9),  # empty value: just after the ":"
    ],
)
def test_value_spans(ptr: str, line: int, column: int, end: int | None) -> None:
    assert ok(SITE).spans[ptr] == Span("site.yaml", line, column, end)


@pytest.mark.parametrize(
    ("ptr", "line", "column", "end"),
    [
        ("/apiVersion", 1, 1, 11),
        ("/metadata/name", 4, 3, 7),
        ("/metadata/labels/tier", 5, 12, 16),
        ("/metadata/labels/zone", 5, 24, 28),
        ("/spec/nodePools/0/name", 9, 7, 11),
        ("/spec/nodePools/0/gpusPerNode", 10, 7, 18),
        ("/spec/nodePools/1/mode", 14, 7, 11),
        ("/spec/notes", 15, 3, 8),
    ],
)
def test_key_spans(ptr: str, line: int, column: int, end: int) -> None:
    doc = ok(SITE)
    assert doc.key_spans[ptr] == Span("site.yaml", line, column, end)
    assert doc.span(ptr, key=True) == doc.key_spans[ptr]


def test_sequence_items_have_no_key_span() -> None:
    doc = ok(SITE)
    assert "/spec/nodePools/0" not in doc.key_spans
    assert doc.span("/spec/nodePools/0", key=True) == Span("site.yaml", 9, 7)


def test_span_of_missing_pointer_is_nearest_ancestor() -> None:
    assert ok(SITE).span("/spec/nodePools/1/missing") == Span("site.yaml", 12, 7)


def test_raw_keeps_source_text_of_non_strings() -> None:
    raw = ok(SITE).raw
    assert raw["/spec/kubernetesVersion"] == "1.30"
    assert raw["/spec/nodePools/0/scale"] == "1e3"
    assert raw["/spec/nodePools/0/gpusPerNode"] == "8"
    assert raw["/spec/empty"] == ""
    assert "/spec/nodePools/1/mode" not in raw  # `on` is a string in YAML 1.2
    assert "/metadata/name" not in raw
    assert "/spec/notes" not in raw


def test_quoted_numbers_are_strings_without_raw() -> None:
    doc = ok("a: '1.30'\nb: \"1e3\"\n")
    assert doc.data == {"a": "1.30", "b": "1e3"}
    assert dict(doc.raw) == {}


def test_sequences_of_scalars_and_nested_flow() -> None:
    doc = ok("a:\n- x\n- [1, {b: 2}]\n-\n")
    assert doc.data == {"a": ["x", [1, {"b": 2}], None]}
    assert doc.spans["/a/0"] == Span("site.yaml", 2, 3, 4)
    assert doc.spans["/a/1/1/b"] == Span("site.yaml", 3, 11, 12)
    assert doc.key_spans["/a/1/1/b"] == Span("site.yaml", 3, 8, 9)
    assert doc.spans["/a/2"].line == 4


def test_keys_needing_escapes_in_pointers() -> None:
    doc = ok("labels:\n  nvidia.com/gpu.present: 'true'\n  a~b: 1\n")
    assert doc.spans["/labels/nvidia.com~1gpu.present"] == Span("site.yaml", 2, 27, 33)
    assert doc.key_spans["/labels/a~0b"] == Span("site.yaml", 3, 3, 6)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("~", None),
        ("null", None),
        ("NULL", None),
        ("", None),
        ("true", True),
        ("False", False),
        ("TRUE", True),
        ("tRue", "tRue"),
        ("0", 0),
        ("-12", -12),
        ("+7", 7),
        ("0777", 777),  # YAML 1.2 core: decimal, not octal
        ("0o17", 15),
        ("0x1F", 31),
        ("1_000", "1_000"),
        ("0b101", "0b101"),
        ("1.5", 1.5),
        ("-.5", -0.5),
        ("1.", 1.0),
        ("1e3", 1000.0),
        ("6.02E+23", 6.02e23),
        (".inf", math.inf),
        ("-.Inf", -math.inf),
        ("12:30", "12:30"),
        ("yes", "yes"),
        ("'" + "1" * 5000 + "'", "1" * 5000),  # quoted: text of any length
        ("'1'", "1"),
        ('"true"', "true"),
    ],
)
def test_core_schema_resolution(text: str, value: object) -> None:
    assert ok(f"v: {text}\n").data == {"v": value}


@pytest.mark.parametrize(("digits", "refused"), [(4300, False), (4301, True), (5000, True)])
def test_a_number_too_long_to_convert_is_nvc118_at_its_place(digits: int, refused: bool) -> None:
    """Beyond Python's int conversion limit a plain number is refused, not read as text."""
    doc, diags = load(f"a: 1\nv: -{'9' * digits}\n")
    if not refused:
        assert doc is not None and doc.data == {"a": 1, "v": -int("9" * digits)}
        return
    assert doc is None
    assert [(d.code, d.span.line, d.span.column, d.path) for d in diags] == [("NVC118", 2, 4, "/v")]


@pytest.mark.parametrize("number", ["0x" + "f" * 5000, "0o" + "7" * 6000])
def test_a_hex_or_octal_number_no_message_could_print_is_nvc118(number: str) -> None:
    doc, diags = load(f"v: {number}\n")
    assert doc is None and [d.code for d in diags] == ["NVC118"]


def test_nan() -> None:
    value = ok("v: .NaN\n").data
    assert isinstance(value, dict)
    assert math.isnan(value["v"])


def test_bom_is_stripped() -> None:
    doc = ok(b"\xef\xbb\xbfa: 1\n")
    assert doc.text == "a: 1\n"
    assert doc.spans["/a"] == Span("site.yaml", 1, 4, 5)


def test_load_file_reads_and_names(tmp_path: Path) -> None:
    file = tmp_path / "site.yaml"
    file.write_bytes(SITE.encode())
    doc, diags = load_file(file, "sites/lab.yaml")
    assert doc is not None
    assert diags[0].span.file == "sites/lab.yaml"
    assert doc.span("/kind") == Span("sites/lab.yaml", 2, 7, 11)


# --- robustness -----------------------------------------------------------------------

MUTATIONS = [b":", b"-", b"\t", b"&", b"*", b"'", b'"', b"\xff", b"\xc3", b"\x00", b"{", b"["]
MUTATIONS += [b"]", b"}", b"!", b"#", b"\n", b" ", b"? ", b"|", b">", b",", b"---\n", b"<<: "]
MUTATIONS += [b"&a ", b"*a", b"\r", b"\xe2\x80\xa8", b"%", b"@", b"\\", b"\xef\xbb\xbf"]


def _mutate(rng: random.Random, data: bytes) -> bytes:
    out = bytearray(data)
    for _ in range(rng.randint(1, 6)):
        pos = rng.randrange(len(out) + 1)
        roll = rng.random()
        if roll < 0.35 and out:
            del out[pos : pos + rng.randint(1, 6)]
        elif roll < 0.9:
            out[pos:pos] = rng.choice(MUTATIONS)
        else:
            out[pos:pos] = rng.randbytes(rng.randint(1, 4))
    return bytes(out)


def _check(raw: bytes) -> None:
    doc, diags = load_document(raw, "fuzz.yaml")
    for diag in diags:
        assert diag.span.line >= 1
        assert diag.span.column >= 1
        assert diag.span.file == "fuzz.yaml"
    if doc is None:
        assert any(d.is_error for d in diags), raw
    else:
        assert isinstance(doc.data, dict)
        assert not any(d.is_error for d in diags)


def test_mutated_documents_never_raise() -> None:
    rng = random.Random(0)
    base = SITE.encode()
    for _ in range(400):
        _check(_mutate(rng, base))


def test_random_bytes_never_raise() -> None:
    rng = random.Random(0)
    for _ in range(200):
        _check(rng.randbytes(rng.randint(0, 200)))
