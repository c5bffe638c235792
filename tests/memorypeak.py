"""What a call allocates at its peak (tracemalloc), for tests that bound a reader's memory."""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def peak_of(call: Callable[[], T]) -> tuple[T, int]:
    """The call's result, and the most bytes it held allocated at once while it ran."""
    tracemalloc.start()
    try:
        found = call()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return found, peak
