"""`nvcregen ingest link-counters`: snapshot logs read, each port's growth printed.

As `ingest perftest`: a file that parses gives its run; one that holds no snapshot, or
breaks a bound, is a diagnostic (NVC700, NVC713, NVC763) and the command exits 2 after
printing the others. With no limits to hold them to (they are the catalog's, applied by
`collect`), a run is failed (exit 1) only where its counters are no evidence: reset or
wrapped (NVC760), or no after-snapshot (NVC761).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nvcregen.core.errors import Diagnostic
from nvcregen.ingest.readlog import Hints, read_logs
from nvcregen.kinds.linkcounters.reader import LinkCounterRun, parse_link_counters

_HINT = (
    "give the log of nvcregen's link-counters script (its `@@linkctr snapshot before` and"
    " `after` sections)"
)
_LIMIT = "no link counter log holds this: the file is damaged or was not made by the script"


@dataclass(frozen=True)
class LinkCounterResult:
    """What `nvcregen ingest link-counters` found in its files."""

    runs: tuple[LinkCounterRun, ...] = ()
    diagnostics: tuple[Diagnostic, ...] = ()

    @property
    def failed(self) -> bool:
        """Whether a run holds a port or counter that is no evidence (`ingest` exits 1)."""
        return any(_problems(run) for run in self.runs)

    def to_json(self) -> dict[str, Any]:
        """`{"runs": [...]}`."""
        return {"runs": [run.to_json() for run in self.runs]}


def ingest_link_counters(paths: Sequence[Path]) -> LinkCounterResult:
    """Read link counter logs, each up to `limits.MAX_LOG_BYTES`."""
    found, diagnostics = read_logs(paths, parse_link_counters, Hints(_HINT, limit=_LIMIT))
    return LinkCounterResult(tuple(run for runs in found for run in runs), tuple(diagnostics))


def _problems(run: LinkCounterRun) -> list[str]:
    found = list(run.problems)
    if run.after is None or not run.after.ended:
        found.append("no after-snapshot")
    for port in run.deltas():
        found += list(port.problems) + [c.problem for c in port.counters if c.problem]
    return found


def render_link_counters(result: LinkCounterResult) -> str:
    """Per run its interval; per port each counter that grew, with its rate; problems."""
    lines: list[str] = []
    for run in result.runs:
        seconds = "?" if run.seconds is None else f"{run.seconds} s"
        lines.append(f"{run.file}: {len(run.deltas())} port(s) over {seconds}\n")
        for port in run.deltas():
            grew = [
                f"{c.group}/{c.name} +{c.delta}"
                + (f" ({c.per_hour:.1f}/h)" if c.per_hour is not None else "")
                for c in port.counters
                if c.delta
            ]
            shown = ", ".join(grew) or "no counter grew"
            lines.append(f"  {port.hca} port {port.port} ({port.layer or '?'}): {shown}\n")
            problems = (*port.problems, *(c.problem for c in port.counters if c.problem))
            lines += [f"    {problem}\n" for problem in problems]
        lines += [f"  {problem}\n" for problem in run.problems]
    return "".join(lines)
