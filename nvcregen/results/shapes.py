"""The shape of an NCCL sweep, read as a person reads its plot (pure; docs/design/0012-evidence.md).

Every round's out-of-place bus bandwidth by message size is checked, whether or not a
threshold names the test; sizes under FLOOR_BYTES are latency-bound and not read:

- collapse (NVC736): once the sweep has reached its plateau (a size at least PLATEAU of
  the round's best), a larger size falls under COLLAPSE of the best seen so far. The
  sizes where it stays down are named, and so is a recovery after them.
- decline (NVC737): the largest sizes lose bandwidth as they grow: the last DECLINE_RUN
  sizes or more each fall by more than NOISE from the one before, and the largest
  ends under 1 - DECLINE_DROP of the round's best. A plateau that wobbles within NOISE
  is not a decline.
- disagreement (NVC738): the final rounds of one group, size by size, differ by more
  than DISAGREE of their median ((max - min) / median, the `spread` of `ingest`),
  at sizes whose median is at least PLATEAU of the largest median.

A collapse or a decline fails the run's verdicts (a link that loses 95 % at 16 MiB is
not ready, whatever 1 GiB shows); rounds that disagree make them incomplete (run it
again: no one round can be trusted). The limits were checked against every real log
under tests/fixtures/real-logs: only the two whose plots show a fault are flagged.
"""

from __future__ import annotations

from collections.abc import Sequence
from statistics import median

from nvcregen.core import codes, units
from nvcregen.results.findings import Finding
from nvcregen.results.models import BandwidthMeasurement, Finality
from nvcregen.results.runs import RunResult
from nvcregen.results.words import Word

FLOOR_BYTES = 1 << 20  # smaller messages measure latency, not bandwidth
PLATEAU = 0.5  # a size at half the best or more is on the plateau
COLLAPSE = 0.6  # falling under 60 % of the best seen so far is a collapse
NOISE = 0.05  # steps within 5 % are noise
DECLINE_RUN = 3  # at least three falling steps at the largest sizes
DECLINE_DROP = 0.2  # ending more than 20 % under the best
DISAGREE = 0.25  # rounds further apart than 25 % of their median
MIN_GBS = 0.01  # a round that never moves data (one rank: busbw 0) has no shape

Point = tuple[int, float]


def collapse(points: Sequence[Point]) -> tuple[list[int], float, float] | None:
    """The sizes where a sweep collapsed after its plateau, the best before, the lowest."""
    kept = [(s, b) for s, b in sorted(points) if s >= FLOOR_BYTES]
    best = max((b for _, b in kept), default=0.0)
    if best < MIN_GBS:
        return None
    peak, low, down = 0.0, best, []
    for size, busbw in kept:
        if peak >= PLATEAU * best and busbw < COLLAPSE * peak:
            down.append(size)
            low = min(low, busbw)
        peak = max(peak, busbw)
    return (down, max(b for s, b in kept if s < down[0]), low) if down else None


def decline(points: Sequence[Point]) -> list[int]:
    """The largest sizes, each lower than the one before beyond noise, when they end low."""
    kept = [(s, b) for s, b in sorted(points) if s >= FLOOR_BYTES]
    best = max((b for _, b in kept), default=0.0)
    if best < MIN_GBS or len(kept) <= DECLINE_RUN:
        return []
    falling = 0
    for (_, before), (_, after) in zip(kept[-2::-1], kept[::-1], strict=False):
        if after < before * (1 - NOISE):
            falling += 1
        else:
            break
    if falling < DECLINE_RUN or kept[-1][1] >= best * (1 - DECLINE_DROP):
        return []
    return [s for s, _ in kept[-falling:]]


def disagreement(rounds: Sequence[Sequence[Point]]) -> list[tuple[int, float]]:
    """Sizes where rounds differ beyond DISAGREE of their median, with that spread."""
    by_size: dict[int, list[float]] = {}
    for points in rounds:
        for size, busbw in points:
            if size >= FLOOR_BYTES:
                by_size.setdefault(size, []).append(busbw)
    medians = {s: median(v) for s, v in by_size.items() if len(v) >= 2}
    top = max(medians.values(), default=0.0)
    if top < MIN_GBS:
        return []
    found = []
    for size, mid in sorted(medians.items()):
        spread = (max(by_size[size]) - min(by_size[size])) / mid if mid else 0.0
        if mid >= PLATEAU * top and spread > DISAGREE:
            found.append((size, spread))
    return found


def _points(m: BandwidthMeasurement) -> list[Point]:
    return [(r.size_bytes, float(r.bus_bw)) for r in m.rows]


def _sizes(sizes: Sequence[int]) -> str:
    shown = [units.format_size(s) for s in sizes]
    return shown[0] if len(shown) == 1 else f"{shown[0]} to {shown[-1]} ({len(shown)} sizes)"


def shapes(run: RunResult) -> list[Finding]:
    """Anomalies of every round of a run, and of its rounds together, per group."""
    found: list[Finding] = []
    for m in run.bandwidth:
        points = _points(m)
        if (fell := collapse(points)) is not None:
            down, before, low = fell
            after = [s for s, _ in sorted(points) if s > down[-1]]
            back = f", back after {units.format_size(down[-1])}" if after else ""
            text = (
                f"busbw collapses from {before:g} to {low:g} GB/s at"
                f" {_sizes(down)}{back} (under {COLLAPSE:.0%} of its plateau)"
            )
            found.append(_finding(codes.NVC736.code, Word.FAIL, run, m, text, down))
        elif sizes := decline(points):
            last = dict(points)[sizes[-1]]
            text = (
                f"busbw falls as messages grow, {_sizes(sizes)}, to {last:g} GB/s"
                f" (under {1 - DECLINE_DROP:.0%} of its best {max(b for _, b in points):g})"
            )
            found.append(_finding(codes.NVC737.code, Word.FAIL, run, m, text, sizes))
    groups: dict[str, list[BandwidthMeasurement]] = {}
    for m in run.bandwidth:
        if m.finality is Finality.FINAL:
            groups.setdefault(m.group, []).append(m)
    for group, members in sorted(groups.items()):
        if len(members) < 2 or not (apart := disagreement([_points(m) for m in members])):
            continue
        worst_size, worst = max(apart, key=lambda pair: pair[1])
        name = f"group {group}" if group else "the rounds"
        text = (
            f"{name}: {len(members)} rounds disagree by {worst:.0%} of their median at"
            f" {units.format_size(worst_size)} (over {DISAGREE:.0%} at"
            f" {_sizes([s for s, _ in apart])}): run it again"
        )
        first = members[0]
        found.append(
            _finding(
                codes.NVC738.code, Word.INCOMPLETE, run, first, text, [s for s, _ in apart], True
            )
        )
    return found


def _finding(
    code: str,
    word: Word,
    run: RunResult,
    m: BandwidthMeasurement,
    message: str,
    sizes: Sequence[int],
    whole_group: bool = False,
) -> Finding:
    return Finding.model_validate(
        {
            "code": code,
            "kind": "anomaly",
            "word": word,
            "stage": run.stage,
            "test": run.test,
            "group": m.group,
            "round": None if whole_group else m.iteration,
            "source": "" if whole_group else m.ref.name,
            "sizes": tuple(sizes),
            "message": message,
        }
    )
