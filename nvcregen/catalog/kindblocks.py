"""The model catalog tests are read with: `TestEntry` and one block per registered kind.

`TestEntry` (`models.py`) holds what every test has and names no kind. Each registered
kind's block, its `params` model under its name, is an optional field of the model built
here from the registry (`kindapi/registry.py`), with `kind` narrowed to the kinds' names
in registration order. It is built on first use, not at import (the registry imports
each kind's module then), and once for the kinds registered (a registry whose modules a
test swaps and resets gets a model of its own). `catalog/load.py` reads
`catalog/tests/` with it and `catalog/schema.py` publishes it, so adding a kind touches
neither; a kind's package reads its block typed (`KIND.block(test)`).
"""

from __future__ import annotations

import functools
import re
from typing import Any, Literal

from pydantic import create_model

from nvcregen.catalog.models import TestEntry
from nvcregen.kindapi.registry import KINDS
from nvcregen.spec.v1alpha1 import StrictModel

# a kind's name is its block's key in a catalog file (and its `kind`): lowercase letters and
# digits, which the camelCase of catalog keys keeps as they are
BLOCK_NAME = re.compile(r"^[a-z][a-z0-9]*$")
Blocks = tuple[tuple[str, type[StrictModel]], ...]


def entry_model() -> type[TestEntry]:
    """`TestEntry` with the block of every registered kind, built once for those kinds.

    Raises:
        TypeError: A registered kind's name cannot be a block's (a bug of the kind).

    """
    return _built(tuple((name, kind.params) for name, kind in KINDS.items()))


@functools.cache
def _built(blocks: Blocks) -> type[TestEntry]:
    for name, _ in blocks:
        # an attribute of every model (`copy`, `json`, `schema`): a field of that name
        # would shadow it, and pydantic only warns
        taken = name in TestEntry.model_fields or hasattr(TestEntry, name)
        if taken or not BLOCK_NAME.match(name):
            raise TypeError(
                f"kind {name!r} cannot name a catalog block: a block's name is lowercase"
                " letters and digits, none of the fields every test has"
                f" ({', '.join(TestEntry.model_fields)}) and no attribute of a model"
            )
    names = tuple(name for name, _ in blocks)
    # pydantic takes each field as (type, default); types read at run time, as these are,
    # are not type expressions mypy can check (`create_model` types them `Any`)
    fields: dict[str, Any] = {"kind": (Literal[names], ...)}
    fields |= {name: (params | None, None) for name, params in blocks}  # each optional
    return create_model(
        TestEntry.__name__,
        __base__=TestEntry,
        __doc__=TestEntry.__doc__,
        __module__=__name__,
        **fields,
    )
