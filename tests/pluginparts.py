"""A layer's small protocol, as a layer below the plug-ins would define it, for the loader
tests of `core/plugins.py` and of each family (kinds, engines)."""

from __future__ import annotations

from typing import Protocol, TypeGuard, runtime_checkable


@runtime_checkable
class Greeter(Protocol):
    """What the layer asks of a plug-in's part: a greeting."""

    def greet(self) -> str: ...


def greets(found: object) -> TypeGuard[Greeter]:
    """Whether a part implements the layer's protocol (`Plugins.part_of`'s `fits`)."""
    return isinstance(found, Greeter)
