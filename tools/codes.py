"""Print `docs/codes.md`, the table of every NVC code, from `nvcregen/core/codes.py`.

Usage (from the repository root)::

    python -m tools.codes > docs/codes.md

A test fails when the committed file differs from what this prints.
"""

from __future__ import annotations

import sys
from itertools import groupby

from nvcregen.core.codes import FAMILIES, REGISTRY, Code
from nvcregen.kindapi.registry import load_codes

HEADER = """\
# NVC codes

Generated from `nvcregen/core/codes.py` by `python -m tools.codes > docs/codes.md`; do not
edit by hand. Severity is given where every place that reports the code fixes it; where it
is blank the caller decides (`--strict`, a finding's weight). "Documented in" names the
design note or README section that explains the code.
"""


def render() -> str:
    """The whole of `docs/codes.md`: the core's codes and every kind's (`load_codes`)."""
    load_codes()
    parts = [HEADER]
    entries = sorted(REGISTRY.values(), key=lambda c: c.number)
    for hundreds, family in groupby(entries, key=lambda c: c.number // 100):
        parts.append(f"\n## NVC{hundreds}xx: {FAMILIES[hundreds]}\n\n")
        parts.append("| Code | Severity | Title | Documented in |\n| --- | --- | --- | --- |\n")
        parts.extend(_row(code) for code in family)
    return "".join(parts)


def _row(code: Code) -> str:
    title = code.title if not code.reserved else f"{code.title} (reserved: {code.reserved})"
    return f"| {code.code} | {code.severity} | {_cell(title)} | {_link(code.doc)} |\n"


def _link(doc: str) -> str:
    """A link from `docs/` to the document, or nothing."""
    if not doc:
        return ""
    target = doc.removeprefix("docs/") if doc.startswith("docs/") else f"../{doc}"
    return f"[{doc}]({target})"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def main() -> int:
    """Print the table."""
    sys.stdout.write(render())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
