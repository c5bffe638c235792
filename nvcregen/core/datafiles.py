"""Locate the data nvcregen ships: the catalog and the schemas."""

from __future__ import annotations

from functools import cache
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent.parent  # nvcregen/, above core/


@cache
def data_dir(name: str) -> Path:
    """Return the folder `catalog` or `schemas`, wherever this install keeps it.

    A wheel carries them inside the package (`nvcregen/_data/`); a source checkout
    or an editable install reads them from the repository root beside the package.
    """
    packaged = _PACKAGE / "_data" / name
    if packaged.is_dir():
        return packaged
    return _PACKAGE.parent / name
