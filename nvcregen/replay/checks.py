"""Every check of the replay, in one list (pure); codes in `context.py`."""

from __future__ import annotations

from nvcregen.replay.capacity import concurrency, never_admitted, partial_placement
from nvcregen.replay.context import Context
from nvcregen.replay.model import Problem
from nvcregen.replay.ordering import deadline, overlapping_stages, unreported


def judge(ctx: Context) -> tuple[Problem, ...]:
    """What the replay finds, by file, then code, then message."""
    found = [
        *never_admitted(ctx),
        *partial_placement(ctx),
        *overlapping_stages(ctx),
        *unreported(ctx),
        *concurrency(ctx),
    ]
    found += deadline(ctx, found)
    return tuple(sorted(found, key=lambda p: (p.file, p.code, p.message)))
