"""How `render --check` shows drift: one line per file, the full diff only when asked.

A one-line change to a site can touch many files (index.json's digests, names carrying a
hash), so the default is a summary per file: how it changed, how many lines, and the
first keys on those lines. `--verbose` adds the unified diff of every changed file.
"""

from __future__ import annotations

from nvcregen.emit.writer import Drift

KEYS_SHOWN = 3


def drift_report(drifts: list[Drift], *, verbose: bool) -> str:
    """The text `render --check` prints about the files that differ."""
    text = ""
    for drift in drifts:
        text += f"{drift.path}: {drift.change}{summary(drift.diff)}\n"
        if verbose and drift.diff:
            text += drift.diff if drift.diff.endswith("\n") else f"{drift.diff}\n"
    if not verbose and any(d.diff for d in drifts):
        text += "nvcregen: `render --check --verbose` shows every line that differs\n"
    return text


def summary(diff: str) -> str:
    """` (+2 -1 lines: gpusPerNode, name)` for a unified diff; "" for none."""
    changed = [
        line
        for line in diff.splitlines()
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    ]
    if not changed:
        return ""
    added = sum(line.startswith("+") for line in changed)
    keys: list[str] = []
    for line in changed:
        key = line[1:].strip().removeprefix("- ").split(":", 1)[0].strip('"')
        if key and key not in keys:
            keys.append(key)
    shown = ", ".join(keys[:KEYS_SHOWN]) + (", ..." if len(keys) > KEYS_SHOWN else "")
    return f" (+{added} -{len(changed) - added} lines: {shown})"
