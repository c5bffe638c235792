"""Long node lists, summarised: `gpu-[0000-1023]` for names with numeric suffixes (pure)."""

from __future__ import annotations

import re
from collections.abc import Iterable

_SUFFIX = re.compile(r"^(.*?)([0-9]+)$")
SHOW_MAX = 8  # lists up to this long are printed name by name


def compress(names: Iterable[str]) -> str:
    """A comma-separated summary: runs of numbered names with one prefix as `p[a-b]`.

    Names are sorted; a run is consecutive numbers written with the same width, so
    `gpu-0007,gpu-0008` becomes `gpu-[0007-0008]` and `n9,n10` stays two entries (their
    widths differ). Linear in the names after sorting.
    """
    keyed = sorted({_key(n) for n in names})
    parts: list[str] = []
    index = 0
    while index < len(keyed):
        prefix, width, number, name = keyed[index]
        end = index
        while (
            number is not None
            and end + 1 < len(keyed)
            and keyed[end + 1][:2] == (prefix, width)
            and keyed[end + 1][2] == (keyed[end][2] or 0) + 1
        ):
            end += 1
        if end == index or number is None:
            parts.append(name)
        else:
            last = keyed[end][2]
            parts.append(f"{prefix}[{number:0{width}d}-{last:0{width}d}]")
        index = end + 1
    return ",".join(parts)


def _key(name: str) -> tuple[str, int, int | None, str]:
    found = _SUFFIX.match(name)
    if found is None:
        return (name, 0, None, name)
    digits = found.group(2)
    return (found.group(1), len(digits), int(digits), name)


def shown(names: Iterable[str]) -> str:
    """A node list as `plan` prints it: whole when short, else compressed ("-" when empty)."""
    listed = list(names)
    if not listed:
        return "-"
    return ",".join(listed) if len(listed) <= SHOW_MAX else compress(listed)
