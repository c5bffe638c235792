"""The message sizes and collective calls of one nccl-tests run (pure).

The sweep is what a collective kind says it runs (`TestKind.sweep`, a `Sweep` of
`kindapi/protocol.py`): this layer asks the kind and never reads, nor imports, its
block; a kind's package sits above every layer (`kindapi/registry.py`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from nvcregen.catalog.physics_data import Collective, NcclTestsDefaults
from nvcregen.core import units

if TYPE_CHECKING:
    from nvcregen.kindapi.protocol import Sweep

_RESERVED = 1 << 30  # nccl-tests keeps 1 GiB of each GPU for everything but its buffers


def max_bytes(sweep: Sweep, memory_gb: int, defaults: NcclTestsDefaults) -> int:
    """The largest size nccl-tests will run: maxBytes, lowered to fit the GPU's memory.

    nccl-tests allocates a send, a receive and (with -c) an expected buffer of maxBytes
    each, and lowers maxBytes to (memory - 1 GiB) / 3 (2 without checks) when they do not
    fit, printing "Reducing maxBytes"; memory is taken as memoryGB x 10^9 bytes.
    """
    buffers = 3 if defaults.check_iterations else 2
    fits = (memory_gb * 10**9 - _RESERVED) // buffers
    return min(units.parse_size(sweep.max_bytes), max(fits, 0))


def sizes(sweep: Sweep, high: int | None = None) -> tuple[int, ...]:
    """Every size the sweep runs: minBytes times powers of stepFactor, up to `high`.

    `high` is the largest size nccl-tests runs (`max_bytes`); maxBytes when not given.
    """
    low = units.parse_size(sweep.min_bytes)
    high = units.parse_size(sweep.max_bytes) if high is None else high
    found = []
    size = max(low, 1)
    while size <= high:
        found.append(size)
        size *= sweep.step_factor
    return tuple(found)


def printed_size(size: int, collective: Collective, ranks: int, element_bytes: int) -> int:
    """The size nccl-tests prints (and collect matches `at:` against) for a requested size.

    nccl-tests works in elements: all-reduce runs `size / element` of them; all-gather and
    all-to-all split them evenly over the ranks, so the size shrinks to a multiple of
    `ranks x element` (1 GiB over 24 ranks of floats prints 1073741760).
    """
    unit = element_bytes if collective == "all_reduce" else element_bytes * ranks
    return size // unit * unit


def calls_per_size(sweep: Sweep, defaults: NcclTestsDefaults) -> int:
    """Collective calls per size and cycle: each mode's sync, timed and checked calls."""
    per_mode = defaults.sync_iterations + sweep.iterations + defaults.check_iterations
    return defaults.modes * per_mode


def describe(sweep: Sweep, high: int) -> str:
    """The sweep in words: `32 sizes (8B..16GiB, x2)`."""
    found = sizes(sweep, high)
    last = units.format_size(found[-1]) if found else "-"
    return f"{len(found)} sizes ({sweep.min_bytes}..{last}, x{sweep.step_factor})"
