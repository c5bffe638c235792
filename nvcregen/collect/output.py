"""What `nvcregen collect` prints: verdicts as text or JSON, and progress on a terminal."""

from __future__ import annotations

import json
import sys
from typing import Any, TextIO

from nvcregen.collect.model import CollectOutcome
from nvcregen.collect.requests import ListRequest
from nvcregen.core.secrets import redact, redact_data
from nvcregen.core.terminal import one_line
from nvcregen.results.findings import first_lines
from nvcregen.results.verdicts import Reason, ThresholdVerdict, Word


def render_text(outcome: CollectOutcome) -> str:
    """One line per verdict that is not a plain pass, the archive, and what was deleted.

    Each line is one line: a line feed or any other control character in what the
    cluster or an export said (a group name, a reason) is written as a visible escape, so
    it cannot forge a line of its own; and a secret it quoted (a condition's message
    holding a token or `user:password@`) is masked, as in the archive's JSON files.
    """
    archive = outcome.archive
    state = "verified" if archive.verified else "NOT verified"
    lines = [f"{archive.path.as_posix()}/: {archive.state}, {state}"]
    lines += [f"  problem: {p}" for p in archive.problems]
    lines += [f"evidence   {line}" for line in first_lines(outcome.verdicts.findings)]
    lines += [f"  {outcome.signature}"] if outcome.signature else []
    lines += [_threshold_line(v) for v in outcome.verdicts.thresholds]
    lines += [f"{Word.INCOMPLETE:<10} unreadable: {p}" for p in outcome.verdicts.problems]
    for run in outcome.verdicts.runs:
        if run.word is not Word.PASS:
            lines.append(f"{run.word:<10} run {run.stage}/{run.test}: {_reasons(run.reasons)}")
    for export in outcome.verdicts.exports:
        detail = f": {export.detail}" if export.detail else ""
        what = f"report export {export.name}: {export.verification}"
        lines.append(f"{export.word:<10} {what}{detail}")
    lines += [f"deleted    {o.request}" for o in outcome.deleted if o.status == "deleted"]
    lines += [f"reclaim: {p}" for p in outcome.reclaim_problems]
    lines += [f"note: {n}" for n in outcome.notes]
    return "\n".join(redact(one_line(line)) for line in lines) + "\n"


def _threshold_line(verdict: ThresholdVerdict) -> str:
    what = f"{verdict.field} {verdict.comparison}".strip()
    where = f"{verdict.test} {verdict.scope} ({verdict.stage or 'no stage'})"
    if verdict.field in {"busbw", "algbw"}:
        where += f" at {verdict.at or 'its best size'}"
    return f"{verdict.word:<10} {where}, {what}: {_reasons(verdict.reasons)}"


def _reasons(reasons: tuple[Reason, ...]) -> str:
    shown = [r.message for r in reasons[:3]]
    more = f" (+{len(reasons) - 3} more)" if len(reasons) > 3 else ""
    return "; ".join(shown) + more if shown else "ok"


def summary_line(outcome: CollectOutcome) -> str:
    """The last line: the overall verdict and the count of each word."""
    counts = outcome.verdicts.counts()
    shown = ", ".join(f"{counts[str(w)]} {w}" for w in Word)
    return one_line(f"nvcregen: collect {outcome.site}: {outcome.verdicts.word} ({shown})") + "\n"


def render_json(outcome: CollectOutcome) -> str:
    """The outcome as one JSON object (verdicts in full)."""
    data: dict[str, Any] = {
        "site": outcome.site,
        "archive": outcome.archive.path.as_posix(),
        "run_id": outcome.archive.path.name,
        "state": outcome.archive.state,
        "verified": outcome.archive.verified,
        "problems": outcome.archive.problems,
        "verdict": str(outcome.verdicts.word),
        "counts": outcome.verdicts.counts(),
        "verdicts": outcome.verdicts.model_dump(mode="json"),
        "deleted": [str(o.request) for o in outcome.deleted if o.status == "deleted"],
        "reclaim_problems": list(outcome.reclaim_problems),
        "notes": list(outcome.notes),
        "signature": outcome.signature,
    }
    # what the cluster quoted, masked as in the archive's summary and verdicts (review)
    return json.dumps(redact_data(data), indent=2, sort_keys=True) + "\n"


class TerminalProgress:
    """Shows the listing being read on one rewritten line; only used on a terminal."""

    def __init__(self, stream: TextIO = sys.stderr) -> None:
        self._stream = stream
        self._width = 0

    def __call__(self, request: ListRequest, count: int) -> None:
        """Show how many objects of one listing have been read."""
        text = f"reading {request}: {count}"
        self._stream.write("\r" + text.ljust(self._width))
        self._stream.flush()
        self._width = len(text)

    def close(self) -> None:
        """Clear the progress line."""
        if self._width:
            self._stream.write("\r" + " " * self._width + "\r")
            self._stream.flush()
