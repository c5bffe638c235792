"""Whether an NCCL run has a final measurement to judge (pure; issue #31, NVC742).

A final round is evidence only through its figures. A final round with no figure (no
row of its table read, or every row's bandwidth missing) is incomplete, and so is a run
that finished with no final round that has one: nothing shows what it measured, so it
clears none of the nodes it would have cleared (a finding about the whole run holds
every one of them, `results/nodes.py`). A run that failed fails already.
"""

from __future__ import annotations

from nvcregen.core import codes
from nvcregen.results.findings import Finding
from nvcregen.results.models import BandwidthMeasurement, Finality, RunState
from nvcregen.results.runs import RunResult
from nvcregen.results.words import Word


def unmeasured(run: RunResult) -> list[Finding]:
    """NVC742 for each final round without a figure, and for a run that has none at all."""
    final = [m for m in run.bandwidth if m.finality is Finality.FINAL]
    found = [
        _finding(run, m, "final, but no bandwidth of its table could be read")
        for m in final
        if not m.rows
    ]
    if run.state is RunState.SUCCEEDED and not any(m.rows for m in final):
        text = (
            f"the run {run.state}, but no round has a readable final measurement:"
            " nothing shows what it measured"
        )
        found.append(_finding(run, None, text))
    return found


def _finding(run: RunResult, m: BandwidthMeasurement | None, message: str) -> Finding:
    return Finding.model_validate(
        {
            "code": codes.NVC742.code,
            "kind": "unmeasured",
            "word": Word.INCOMPLETE,
            "stage": run.stage,
            "test": run.test,
            "group": m.group if m else "",
            "round": m.iteration if m else None,
            "source": m.ref.name if m else "",
            "message": message,
        }
    )
