"""The message sizes and collective calls of one nccl-tests run (pure).

The sweep is read from a collective kind's catalog block (`Sweep`: the nccl kind's
params), which this layer takes by its fields and never imports: a kind's package
sits above every layer (`kindapi/registry.py`).
"""

from __future__ import annotations

from typing import Protocol

from nvcregen.catalog.physics_data import Collective, NcclTestsDefaults
from nvcregen.core import units

_RESERVED = 1 << 30  # nccl-tests keeps 1 GiB of each GPU for everything but its buffers


class Sweep(Protocol):
    """What the sweep model reads of a collective test's catalog block."""

    @property
    def min_bytes(self) -> str:
        """The smallest size (`minBytes`, `8B`)."""
        ...

    @property
    def max_bytes(self) -> str:
        """The largest size asked for (`maxBytes`), before it is fitted to GPU memory."""
        ...

    @property
    def step_factor(self) -> int:
        """Each size is the last times this (`stepFactor`)."""
        ...

    @property
    def iterations(self) -> int:
        """Timed calls per size and mode (`iterations`)."""
        ...


def max_bytes(nccl: Sweep, memory_gb: int, defaults: NcclTestsDefaults) -> int:
    """The largest size nccl-tests will run: maxBytes, lowered to fit the GPU's memory.

    nccl-tests allocates a send, a receive and (with -c) an expected buffer of maxBytes
    each, and lowers maxBytes to (memory - 1 GiB) / 3 (2 without checks) when they do not
    fit, printing "Reducing maxBytes"; memory is taken as memoryGB x 10^9 bytes.
    """
    buffers = 3 if defaults.check_iterations else 2
    fits = (memory_gb * 10**9 - _RESERVED) // buffers
    return min(units.parse_size(nccl.max_bytes), max(fits, 0))


def sizes(nccl: Sweep, high: int | None = None) -> tuple[int, ...]:
    """Every size the sweep runs: minBytes times powers of stepFactor, up to `high`.

    `high` is the largest size nccl-tests runs (`max_bytes`); maxBytes when not given.
    """
    low = units.parse_size(nccl.min_bytes)
    high = units.parse_size(nccl.max_bytes) if high is None else high
    found = []
    size = max(low, 1)
    while size <= high:
        found.append(size)
        size *= nccl.step_factor
    return tuple(found)


def printed_size(size: int, collective: Collective, ranks: int, element_bytes: int) -> int:
    """The size nccl-tests prints (and collect matches `at:` against) for a requested size.

    nccl-tests works in elements: all-reduce runs `size / element` of them; all-gather and
    all-to-all split them evenly over the ranks, so the size shrinks to a multiple of
    `ranks x element` (1 GiB over 24 ranks of floats prints 1073741760).
    """
    unit = element_bytes if collective == "all_reduce" else element_bytes * ranks
    return size // unit * unit


def calls_per_size(nccl: Sweep, defaults: NcclTestsDefaults) -> int:
    """Collective calls per size and cycle: each mode's sync, timed and checked calls."""
    per_mode = defaults.sync_iterations + nccl.iterations + defaults.check_iterations
    return defaults.modes * per_mode


def describe(nccl: Sweep, high: int) -> str:
    """The sweep in words: `32 sizes (8B..16GiB, x2)`."""
    found = sizes(nccl, high)
    last = units.format_size(found[-1]) if found else "-"
    return f"{len(found)} sizes ({nccl.min_bytes}..{last}, x{nccl.step_factor})"
