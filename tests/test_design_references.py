"""Every design note the package cites is named in full and exists.

A bare number (`docs/design/0010`) let two evidence modules cite the signed-archives note
for the evidence note (0012) unnoticed; a full file name is checked here.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CITED = re.compile(r"docs/design/([0-9]{4}[-A-Za-z0-9]*(?:\.md)?)")


def citations(text: str) -> list[str]:
    """The design notes `text` cites, as written (`0012-evidence.md`, or a bare `0010`)."""
    return CITED.findall(text)


def test_the_pattern_finds_bare_and_full_citations() -> None:
    text = "(pure; docs/design/0010). See docs/design/0012-evidence.md, docs/design/0007-admission."
    assert citations(text) == ["0010", "0012-evidence.md", "0007-admission"]


def test_every_cited_design_note_is_named_in_full_and_exists() -> None:
    notes = {p.name for p in (ROOT / "docs" / "design").glob("*.md")}
    wrong = [
        f"{path.relative_to(ROOT)}: docs/design/{cited}"
        for path in sorted((ROOT / "nvcregen").rglob("*.py"))
        for cited in citations(path.read_text(encoding="utf-8"))
        if cited not in notes
    ]
    assert wrong == []


def test_the_evidence_modules_cite_the_evidence_note() -> None:
    for module in ("binding.py", "shapes.py"):
        text = (ROOT / "nvcregen" / "results" / module).read_text(encoding="utf-8")
        assert citations(text) == ["0012-evidence.md"]
