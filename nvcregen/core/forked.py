"""Run one function over many indexes on every core: forked workers share the parent's memory.

Render's gate checks and writes tens of thousands of objects at fleet size, each on its
own; forked workers inherit the objects and every warm cache, receive only index ranges,
and send back plain data (`marshal`, several times faster than pickle). Small batches,
one core, or a platform without `fork` run in the caller's process, in order.
"""

from __future__ import annotations

import marshal
import os
from collections.abc import Callable, Iterator
from typing import Any

from nvcregen.core.heap import collection_paused

# Below this many items, starting workers costs more than it saves.
FORK_FROM = 400
# Pieces per worker: a worker slowed by another process hands its later pieces to the rest.
PIECES_PER_WORKER = 8
MAX_WORKERS = 8

_TASK: list[Callable[[int], Any]] = []


def forked_map(
    task: Callable[[int], Any],
    count: int,
    *,
    first: tuple[int, ...] = (),
    meanwhile: Callable[[], None] = lambda: None,
) -> list[Any]:
    """`[task(i) for i in range(count)]`, across forked workers when `count` is large."""
    return list(forked_iter(task, count, first=first, meanwhile=meanwhile))


def forked_iter(
    task: Callable[[int], Any],
    count: int,
    *,
    first: tuple[int, ...] = (),
    meanwhile: Callable[[], None] = lambda: None,
) -> Iterator[Any]:
    """`task(i)` for each i in `range(count)`, in order, each as soon as it is known.

    The caller works on the first results while the workers finish the last.

    Args:
        task: What to do with one index; its result must be plain data (marshal-able).
        count: How many indexes.
        first: Indexes done here before forking, so workers inherit what they warmed
            (compiled validators, caches).
        meanwhile: Runs once while the workers work (first, when there are none),
            before the first result is yielded.

    """
    workers = min(os.cpu_count() or 1, MAX_WORKERS)
    if count < FORK_FROM or workers < 2 or not hasattr(os, "fork"):
        meanwhile()
        yield from (task(i) for i in range(count))
        return
    done = {i: task(i) for i in first}
    rest = [i for i in range(count) if i not in done]
    size = max(1, -(-len(rest) // (workers * PIECES_PER_WORKER)))
    pieces = [rest[start : start + size] for start in range(0, len(rest), size)]
    following = 0
    _TASK[:] = [task]
    # A collection in the parent or a worker would copy every page it touches.
    try:
        with collection_paused(), _pool(workers) as pool:
            parts = pool.map(_piece, pieces)  # workers are forked here
            meanwhile()
            for part in parts:
                done.update(marshal.loads(part))
                while following in done:
                    yield done.pop(following)
                    following += 1
    finally:
        _TASK.clear()
    yield from (done.pop(i) for i in range(following, count))


def _piece(indexes: list[int]) -> bytes:
    (task,) = _TASK
    return marshal.dumps({i: task(i) for i in indexes})


def _pool(workers: int) -> Any:
    """A process pool forking its workers (imported here: most runs never fork)."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    return ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork"))
