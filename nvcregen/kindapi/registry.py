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
import importlib
import importlib.util
from collections.abc import Callable, Iterator, Mapping
from types import ModuleType
from typing import TYPE_CHECKING, Final, TypeGuard, TypeVar

if TYPE_CHECKING:  # the protocol (and pydantic under it) is imported when a kind is loaded
    from nvcregen.kindapi.protocol import KindTest, TestKind

# The one registration line: a kind's module (`KIND` in it), in the catalog's order.
KIND_MODULES: Final = (
    "nvcregen.kinds.nccl.kind", "nvcregen.kinds.dcgm.kind", "nvcregen.kinds.training.kind",
    "nvcregen.kinds.node.kind", "nvcregen.kinds.nvbandwidth.kind", "nvcregen.kinds.rdma.kind",
    "nvcregen.kinds.linkcounters.kind", "nvcregen.kinds.rdmapair.kind",
    "nvcregen.kinds.burnin.kind",
)  # fmt: skip

T = TypeVar("T")


@functools.cache
def _loaded() -> dict[str, tuple[TestKind, str]]:
    """Each kind by name, with its package; imported once, on first use.

    Raises:
        TypeError: A registered module defines no `TestKind` as `KIND` (a bug of the kind).
        ValueError: Two modules register one name.

    """
    from nvcregen.kindapi.protocol import TestKind

    found: dict[str, tuple[TestKind, str]] = {}
    for path in KIND_MODULES:
        kind = getattr(importlib.import_module(path), "KIND", None)
        if not isinstance(kind, TestKind):
            raise TypeError(f"{path} defines no TestKind as KIND")
        if kind.name in found:
            raise ValueError(f"test kind {kind.name!r} is registered twice ({path})")
        found[kind.name] = (kind, path.rpartition(".")[0])
    return found


class _Kinds(Mapping[str, "TestKind"]):
    """Every registered kind by its name, loaded the first time it is read."""

    def __getitem__(self, name: str) -> TestKind:
        return _loaded()[name][0]

    def __iter__(self) -> Iterator[str]:
        return iter(_loaded())

    def __len__(self) -> int:
        return len(_loaded())


KINDS: Final[Mapping[str, TestKind]] = _Kinds()


def kind_of(test: KindTest) -> TestKind:
    """The kind of a catalog test (its `kind` field).

    Raises:
        ValueError: No kind of that name is registered (the catalog schema refuses it first).

    """
    found = KINDS.get(test.kind)
    if found is None:
        raise ValueError(f"test {test.name} has kind {test.kind!r}, which nvcregen does not know")
    return found


def _part_module(package: str, part: str) -> ModuleType | None:
    """The module `part` of a kind's package, imported; None when the package has none."""
    name = f"{package}.{part}"
    if importlib.util.find_spec(name) is None:
        return None
    return importlib.import_module(name)


def part_of(
    kind: str, part: str, attribute: str, fits: Callable[[object], TypeGuard[T]]
) -> T | None:
    """What kind `kind` implements of a layer's protocol: `attribute` of its module `part`.

    `fits` is the layer's check that the object implements its protocol (an `isinstance`
    of a runtime-checkable `Protocol`). None when the kind's package has no such module,
    or the module nothing under `attribute` (the layer then says what the kind lacks).

    Raises:
        KeyError: No kind of that name is registered.
        TypeError: The module holds nothing that fits under `attribute` (a bug of the kind).

    """
    module = _part_module(_loaded()[kind][1], part)
    if module is None:
        return None
    if not hasattr(module, attribute):
        return None
    found = getattr(module, attribute)
    if not fits(found):
        raise TypeError(f"{module.__name__}.{attribute} does not fit {fits.__name__}")
    return found


def package_of(kind: str) -> str:
    """The package a kind's code lives in (`nvcregen.kinds.<kind>`).

    Raises:
        KeyError: No kind of that name is registered.

    """
    return _loaded()[kind][1]


@functools.cache
def load_codes() -> tuple[ModuleType, ...]:
    """Register every kind's NVC codes (its package's `codes` module); the modules, once."""
    packages = dict.fromkeys(path.rpartition(".")[0] for path in KIND_MODULES)
    found = (_part_module(package, "codes") for package in packages)
    return tuple(module for module in found if module is not None)
