"""Undo what launchers add to each output line, so parsers see what nccl-tests printed.

Handled prefixes, possibly stacked:

- `mpirun --tag-output` (`[1,0]<stdout>:`), with anything a launcher put in front of the
  tag (Ray or SkyPilot's `(head, rank=0, pid=3808) `, `kubectl logs --prefix`'s
  `[pod/launcher/main] `): everything up to the tag is dropped;
- `kubectl logs --timestamps` (`2026-10-14T13:01:00.123456789Z `);
- `srun -l` (`0: `, ` 12: `), pdsh (`host: `) and a bracketed timestamp
  (`[2025-06-12 16:57:52] `).

An NCCL_DEBUG line (`host:pid:tid [0] NCCL INFO ...`) has no space after its first colon,
so it is never mistaken for a pdsh prefix. Only the first `_TAG_WINDOW` characters are
searched for a tag, so a long line costs no more than a short one.
"""

from __future__ import annotations

import re

_MPI_TAG = re.compile(r"\[\d+,\d+\]<std(?:out|err)>:")
_PREFIX = re.compile(
    r"""
    \[\d+,\d+\]<std(?:out|err)>:        # mpirun --tag-output
    | \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)\x20  # kubectl --timestamps
    | \[(?:pod|job)/[^\]\s]+\]\x20      # kubectl logs --prefix
    | \s*\d+:\x20                       # srun -l rank label
    | [A-Za-z0-9][\w.-]*:\x20           # pdsh host label
    | \[\d{4}-\d\d-\d\d[\sT][\d:.,]+\]\x20?  # timestamp
    """,
    re.VERBOSE,
)
_MAX_PREFIXES = 4
_TAG_WINDOW = 256
KUBECTL_TIME = re.compile(r"^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.\d+)?Z\x20")


def strip_prefix(line: str) -> str:
    """Return `line` without launcher prefixes and without its line ending.

    Args:
        line: One line of a captured log.

    Returns:
        The line as the program printed it (trailing blanks removed).

    """
    text = line.rstrip("\r\n").rstrip()
    tag = _MPI_TAG.search(text, 0, _TAG_WINDOW)
    if tag is not None:
        return text[tag.end() :]
    for _ in range(_MAX_PREFIXES):
        match = _PREFIX.match(text)
        if match is None or match.end() == 0:
            break
        text = text[match.end() :]
        if (tag := _MPI_TAG.match(text)) is not None:
            return text[tag.end() :]
    return text


def logical_lines(text: str) -> list[str]:
    """Split a log into lines with launcher prefixes removed."""
    return [strip_prefix(line) for line in text.splitlines()]


_LAST_LINES = 64
_TAIL = 4096  # characters split first; four times more each time they hold too few lines


def last_lines(text: str, count: int) -> list[str]:
    """The last `count` lines of `text`, as `text.splitlines()[-count:]` has them.

    Only the end of the text is split: a tail four times longer each time, until it holds
    a line more than `count` (its first may be cut) or it is the whole text. A log of a
    1,024-node run is split in no more lines than its last ones.
    """
    size = _TAIL
    while True:
        lines = text[-size:].splitlines()
        if size >= len(text) or len(lines) > count:
            return lines[-count:] if count else []
        size *= 4


def last_timestamp(text: str) -> str | None:
    """The last `kubectl logs --timestamps` time of a log, as `YYYYMMDDTHHMMSSZ`, if any.

    Only the last 64 lines are looked at: the end of a log is when its run finished.
    """
    for line in reversed(last_lines(text, _LAST_LINES)):
        match = KUBECTL_TIME.match(line)
        if match is not None:
            return "{}{}{}T{}{}{}Z".format(*match.groups())
    return None


_STAMP = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?Z\x20")


def timestamps_out_of_order(text: str) -> str | None:
    """Where `kubectl logs --timestamps` times go backwards in a log, or None when they don't.

    kubectl prints one container's lines in the order it wrote them, each after the one
    before: a time earlier than the line before means lines were moved, or logs of
    several runs spliced together. Lines without a time are skipped.
    """
    before: tuple[str, str] | None = None
    before_line = 0
    for number, line in enumerate(text.splitlines(), 1):
        match = _STAMP.match(line)
        if match is None:
            continue
        stamp = (match[1], (match[2] or "").ljust(9, "0"))
        if before is not None and stamp < before:
            return (
                f"line {number} ({_shown(stamp)}) is earlier than line {before_line}"
                f" ({_shown(before)})"
            )
        before, before_line = stamp, number
    return None


def _shown(stamp: tuple[str, str]) -> str:
    fraction = stamp[1].rstrip("0")
    return f"{stamp[0]}{'.' + fraction if fraction else ''}Z"


def without_timestamps(text: str) -> str:
    """The text without `kubectl logs --timestamps` prefixes, when its lines carry them.

    JSON spread over lines (`dcgmi diag -j`) only decodes once they are gone.
    """
    lines = text.splitlines(keepends=True)
    if not any(KUBECTL_TIME.match(line) for line in lines[:64]):
        return text
    return "".join(KUBECTL_TIME.sub("", line, count=1) for line in lines)
