"""Undo what launchers add to each output line, so parsers see what nccl-tests printed.

Handled prefixes, possibly stacked: `mpirun --tag-output` (`[1,0]<stdout>:`), `srun -l`
(`0: `, ` 12: `), pdsh (`host: `) and a bracketed timestamp (`[2025-06-12 16:57:52] `).
An NCCL_DEBUG line (`host:pid:tid [0] NCCL INFO ...`) has no space after its first colon,
so it is never mistaken for a pdsh prefix.
"""

from __future__ import annotations

import re

_PREFIX = re.compile(
    r"""
    \[\d+,\d+\]<std(?:out|err)>:        # mpirun --tag-output
    | \s*\d+:\x20                       # srun -l rank label
    | [A-Za-z0-9][\w.-]*:\x20           # pdsh host label
    | \[\d{4}-\d\d-\d\d[\sT][\d:.,]+\]\x20?  # timestamp
    """,
    re.VERBOSE,
)
_MAX_PREFIXES = 3


def strip_prefix(line: str) -> str:
    """Return `line` without launcher prefixes and without its line ending.

    Args:
        line: One line of a captured log.

    Returns:
        The line as the program printed it (trailing blanks removed).

    """
    text = line.rstrip("\r\n").rstrip()
    for _ in range(_MAX_PREFIXES):
        match = _PREFIX.match(text)
        if match is None or match.end() == 0:
            break
        text = text[match.end() :]
    return text


def logical_lines(text: str) -> list[str]:
    """Split a log into lines with launcher prefixes removed."""
    return [strip_prefix(line) for line in text.splitlines()]
