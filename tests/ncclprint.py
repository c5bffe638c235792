"""nccl-tests' printing, now the product's (`nvcregen/rehearse/ncclprint.py`): the twin's
pods print their logs with it. The test factories import it from here as before."""

from __future__ import annotations

from nvcregen.rehearse.ncclprint import (
    FACTORS,
    HEADER,
    WORD,
    Half,
    Row,
    banner,
    gpus,
    line,
    run,
    table,
    time_for,
    time_text,
)

__all__ = [
    "FACTORS",
    "HEADER",
    "WORD",
    "Half",
    "Row",
    "banner",
    "gpus",
    "line",
    "run",
    "table",
    "time_for",
    "time_text",
]
