"""Pausing Python's cyclic garbage collector for a batch command.

nvcregen's compiling commands (render, check, plan and the like) build large, mostly
acyclic graphs (a site's models, tens of thousands of manifests, a replay's clock) that
live until the command ends. Each
automatic collection walks every tracked object, and once a graph has grown, the
collector walks it again and again to free almost nothing: at 1,024 nodes, 40% of
`plan` and a tenth of `render`, with the same peak memory either way (measured in
docs/design/0017-fleet-scale.md). Reference counting still frees everything that is not a cycle.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collection_paused() -> Iterator[None]:
    """Pause automatic cyclic collection meanwhile; restore what was set before.

    Forked workers inherit the pause, which also spares them copying every page a
    collection would touch.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
