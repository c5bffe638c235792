"""Why `nvcregen rehearse` makes no log of the training kind (`rehearse/makers/registry.py`)."""

from __future__ import annotations

REFUSED = (
    "checkpointed training has no trainer-mode form (NVC322) and its goodput is read"
    " from NVCRE's GoodputMeasurement, not from a log the twin's pods could serve"
)
