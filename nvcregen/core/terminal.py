r"""Text from untrusted files made safe to print on a terminal.

Archives, exports and logs may hold terminal escape sequences (`ESC [ ... m`, an OSC
title, a C1 CSI) that a terminal would obey if printed raw: change colours, rewrite
lines, set the window title. Before such a string reaches standard output or error it
passes through `printable`, which writes every control character but the line feed and
the tab as a visible escape (`\x1b`, `\x9b`, `\u2028`).
"""

from __future__ import annotations

import re

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]")


def _escaped(match: re.Match[str]) -> str:
    code = ord(match[0])
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str) -> str:
    """`text` with every control character but LF and tab written as a visible escape."""
    return _CONTROL.sub(_escaped, text)


def one_line(text: str) -> str:
    """`printable`, the line feed and the tab escaped too: for a value inside one line."""
    return printable(text).replace("\n", "\\n").replace("\t", "\\t")
