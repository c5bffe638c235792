"""The transport gate: the network a round used against the one the plan expects (pure).

NCCL names the network it used (`ingest/transport.py`); a WorkloadRun or TrainJob may
pin it with NCCL_NET. Where RDMA (IB) is expected, a round over Socket fails however
fast it was (and the reverse): NVCRE records the transport but does not judge it.
"""

from __future__ import annotations

from collections.abc import Sequence

from nvcregen.results.models import BandwidthMeasurement, Measurement, StatusModel
from nvcregen.results.runs import RunResult
from nvcregen.results.words import Reason, Word
from nvcregen.spec.v1alpha1 import Threshold


class Transport(StatusModel):
    """What a threshold expects and what its rounds used (NCCL network names)."""

    expected: str | None = None
    seen: tuple[str, ...] = ()
    pinned: str | None = None
    checked: bool = False


def threshold_transport(
    threshold: Threshold, run: RunResult, members: Sequence[Measurement]
) -> tuple[Transport, list[Reason]]:
    """The transport gate: expected network vs the networks the rounds recorded."""
    expected = threshold.transport or run.expected_transport
    bandwidth = [m for m in members if isinstance(m, BandwidthMeasurement)]
    seen = tuple(sorted({t for m in bandwidth for t in m.transports}))
    used = set(seen) or ({run.pinned_transport} if run.pinned_transport else set())
    check = Transport(expected=expected, seen=seen, pinned=run.pinned_transport)
    if expected is None or not bandwidth:
        return check, []  # goodput records no network
    if not used:
        note = f"transport not recorded by the measurements; {expected} not verified"
        return check, [_reason("transport-unverified", Word.PASS, note)]
    wrong = sorted(used - {expected})
    checked = check.model_copy(update={"checked": True})
    if wrong:
        want = "IB (RDMA)" if expected == "IB" else expected
        why = f"expected {want}, but the rounds ran over {', '.join(wrong)}"
        return checked, [_reason("transport", Word.FAIL, why)]
    how = "recorded by the measurements" if seen else "pinned with NCCL_NET"
    return checked, [_reason("transport-checked", Word.PASS, f"ran over {expected} ({how})")]


def on_transport(final: Sequence[Measurement], expected: str | None) -> list[Measurement]:
    """The rounds a median may pool: those not recorded over another transport."""
    if expected is None:
        return list(final)
    return [
        m
        for m in final
        if not isinstance(m, BandwidthMeasurement) or set(m.transports) <= {expected}
    ]


def run_transport(run: RunResult) -> list[Reason]:
    """The transport gate without a threshold: each round against the plan's network."""
    expected = run.expected_transport
    if expected is None:
        return []
    reasons = []
    for m in run.bandwidth:
        other = sorted(set(m.transports) - {expected})
        if other:
            want = "IB (RDMA)" if expected == "IB" else expected
            where = f"{m.group + ' ' if m.group else ''}round {m.iteration} ({m.ref.name})"
            text = f"{where} ran over {', '.join(other)}, expected {want}"
            reasons.append(_reason("transport", Word.FAIL, text))
    return reasons


def _reason(code: str, word: Word, message: str) -> Reason:
    return Reason(code=code, word=word, message=message)
