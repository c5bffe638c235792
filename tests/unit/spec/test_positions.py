"""Tests for JSON pointers and Document span look-ups."""

from __future__ import annotations

import pytest

from nvcregen.core.errors import Span
from nvcregen.spec.positions import Document, pointer, split_pointer


def test_pointer_root_and_path() -> None:
    assert pointer([]) == ""
    assert pointer(["spec", "nodePools", 0, "gpusPerNode"]) == "/spec/nodePools/0/gpusPerNode"


def test_pointer_escapes_tilde_and_slash() -> None:
    assert pointer(["a/b", "c~d", "~/"]) == "/a~1b/c~0d/~0~1"
    assert pointer([""]) == "/"


@pytest.mark.parametrize(
    "parts",
    [[], [""], ["spec"], ["a/b", "~1", "~0~", 3], ["labels", "nvidia.com/gpu.present"]],
)
def test_split_pointer_round_trips(parts: list[str | int]) -> None:
    assert split_pointer(pointer(parts)) == [str(part) for part in parts]


def test_split_pointer_unescapes_in_rfc_order() -> None:
    # "~01" is "~" followed by "1", not "/".
    assert split_pointer("/~01") == ["~1"]


def test_split_pointer_rejects_relative() -> None:
    with pytest.raises(ValueError, match="start with"):
        split_pointer("spec/name")


def _document() -> Document:
    spans = {
        "": Span("s.yaml", 1, 1),
        "/spec": Span("s.yaml", 3, 3),
        "/spec/name": Span("s.yaml", 3, 9, 12),
    }
    return Document(
        path="s.yaml",
        text="# c\r\nspec:\r\n  name: abc\r\n",
        data={"spec": {"name": "abc"}},
        spans=spans,
        key_spans={"/spec": Span("s.yaml", 2, 1, 5), "/spec/name": Span("s.yaml", 3, 3, 7)},
        raw={},
    )


def test_span_exact_and_key() -> None:
    doc = _document()
    assert doc.span("/spec/name") == Span("s.yaml", 3, 9, 12)
    assert doc.span("/spec/name", key=True) == Span("s.yaml", 3, 3, 7)
    assert doc.span("", key=True) == Span("s.yaml", 1, 1)  # no key span: the value's


def test_span_falls_back_to_nearest_ancestor() -> None:
    doc = _document()
    assert doc.span("/spec/missing/0") == Span("s.yaml", 3, 3)
    assert doc.span("/spec/missing", key=True) == Span("s.yaml", 3, 3)
    assert doc.span("/other") == Span("s.yaml", 1, 1)


def test_span_without_any_span_is_start_of_file() -> None:
    doc = Document(path="e.yaml", text="", data={}, spans={}, key_spans={}, raw={})
    assert doc.span("/a/b") == Span("e.yaml", 1, 1)


def test_source_line_handles_crlf_and_out_of_range() -> None:
    doc = _document()
    assert doc.source_line(1) == "# c"
    assert doc.source_line(3) == "  name: abc"
    assert doc.source_line(4) == ""
    assert doc.source_line(0) == ""
    assert doc.source_line(99) == ""
