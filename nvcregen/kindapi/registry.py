"""Every test kind, registered once by module name and loaded on first use (a plug-in loader).

`KIND_MODULES` is the one registration line: each module defines `KIND`, its `TestKind`,
and is imported with `importlib` the first time a layer asks (`kind_of(test)`, `KINDS`),
so the layers below `nvcregen.kinds` never import a kind. A layer that needs more of a
kind than the protocol (a log reader, a run judge, a log maker) defines the small protocol
it needs and finds the kind's implementation with `part_of`: the module of that name in
the kind's package, holding one object under a name the layer gives. A kind's NVC codes
are declared in its package's `codes` module, registered by `load_codes()`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Final, TypeGuard, TypeVar

from nvcregen.core.plugins import Plugins, part_module

if TYPE_CHECKING:  # the protocol (and pydantic under it) is imported when a kind is loaded
    from types import ModuleType

    from nvcregen.kindapi.protocol import KindTest, TestKind
    from nvcregen.spec.v1alpha1 import StrictModel

# The one registration line: a kind's module (`KIND` in it), in the catalog's order.
KIND_MODULES: Final = (
    "nvcregen.kinds.nccl.kind", "nvcregen.kinds.dcgm.kind", "nvcregen.kinds.training.kind",
    "nvcregen.kinds.node.kind", "nvcregen.kinds.nvbandwidth.kind", "nvcregen.kinds.rdma.kind",
    "nvcregen.kinds.linkcounters.kind", "nvcregen.kinds.rdmapair.kind",
    "nvcregen.kinds.burnin.kind",
)  # fmt: skip

T = TypeVar("T")


def _is_kind(found: object) -> TypeGuard[TestKind[StrictModel]]:
    from nvcregen.kindapi.protocol import TestKind

    return isinstance(found, TestKind)


# Every registered kind by its name, loaded the first time it is read.
KINDS: Final[Plugins[TestKind[StrictModel]]] = Plugins(
    lambda: KIND_MODULES, "KIND", _is_kind, "TestKind", "test kind"
)


def kind_of(test: KindTest) -> TestKind[StrictModel]:
    """The kind of a catalog test (its `kind` field).

    Raises:
        ValueError: No kind of that name is registered (the catalog schema refuses it first).

    """
    found = KINDS.get(test.kind)
    if found is None:
        raise ValueError(f"test {test.name} has kind {test.kind!r}, which nvcregen does not know")
    return found


def part_of(
    kind: str, part: str, attribute: str, fits: Callable[[object], TypeGuard[T]]
) -> T | None:
    """What kind `kind` implements of a layer's protocol (`Plugins.part_of`).

    Raises:
        KeyError: No kind of that name is registered.
        TypeError: The module holds nothing that fits under `attribute` (a bug of the kind).

    """
    return KINDS.part_of(kind, part, attribute, fits)


def package_of(kind: str) -> str:
    """The package a kind's code lives in (`nvcregen.kinds.<kind>`).

    Raises:
        KeyError: No kind of that name is registered.

    """
    return KINDS.package_of(kind)


@functools.cache
def load_codes() -> tuple[ModuleType, ...]:
    """Register every kind's NVC codes (its package's `codes` module); the modules, once."""
    found = (part_module(package, "codes") for package in KINDS.packages())
    return tuple(module for module in found if module is not None)
