"""The line a kind's script prints before its tool runs: whose run the log is.

```
@@nvcregen-<name> begin node=gpu-node-07 pod=lab-node-l1-r1-n0-x7k2p start=2026-12-06T07:00:00Z
```

A tool's output often names no host and no time (DCGM's JSON), so two healthy nodes'
logs can be the same bytes; the line makes each log its own run's (`node` from
`spec.nodeName`, `pod` from `metadata.name`, both through the downward API). A log from
an older render has none. The node and the pod are checked as Kubernetes names before
they name anything. Every kind whose script prints it (`TestKind.begin_line`) has its
own mark (`@@nvcregen-<name>`), which its reader names (`begin_line(text, mark)`);
`results/nodebind.py` binds a log to its node by it.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from nvcregen.ingest.limits import MAX_LINE
from nvcregen.ingest.lines import strip_prefix

_NAME = r"[a-z0-9](?:[-a-z0-9.]{0,251}[a-z0-9])?"
_MARK_FORM = re.compile(r"@@nvcregen-[a-z]+(?:-[a-z]+)*")


@functools.cache
def _begin(mark: str) -> re.Pattern[str]:
    """The begin line of `mark` (any `@@nvcregen-<name>` a kind's script prints)."""
    if not _MARK_FORM.fullmatch(mark):
        raise ValueError(f"{mark!r} is not a begin mark")
    return re.compile(
        rf"^{re.escape(mark)} begin node=(?P<node>{_NAME}) pod=(?P<pod>{_NAME})"
        r" start=(?P<start>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)$"
    )


@dataclass(frozen=True)
class BeginLine:
    """The node, the pod and the start time a log names, and the line it is on."""

    node: str
    pod: str
    start: str
    line: int


def begin_line(text: str, mark: str) -> BeginLine | str | None:
    """The log's begin line under `mark` (its kind's); None, or why it does not read.

    A marker line that does not read (a name that is no Kubernetes name, no time) and a
    second begin line (two runs in one log) are errors: such a log names no one run.
    """
    found: BeginLine | None = None
    for number, raw in enumerate(text.splitlines(), start=1):
        if mark not in raw[:MAX_LINE]:
            continue
        line = strip_prefix(raw[:MAX_LINE])
        if not line.startswith(mark) or line.startswith((f"{mark} rail ", f"{mark} end ")):
            continue  # the rails script's own section and end lines
        match = _begin(mark).match(line)
        if match is None:
            return f"line {number}: an unreadable {mark} line (no valid node, pod or start time)"
        if found is not None:
            return f"line {number}: a second {mark} begin line; one log holds one run"
        found = BeginLine(match["node"], match["pod"], match["start"], number)
    return found
