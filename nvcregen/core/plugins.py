"""Plug-ins registered by module name and imported on first use: test kinds and engines.

A family of plug-ins (`kindapi.registry.KINDS`, `engineapi.registry.GITOPS`, `READINESS`)
is a tuple of module paths, its registration lines, each module defining one object under
an attribute the family names (`KIND`, `ENGINE`). Nothing is imported until a layer first
reads the family, so the layers below a plug-in's package never import it (the import
contract in pyproject.toml holds them to that). A layer that needs more of a plug-in than
its object (a log reader, a replay model, a collector) defines the small protocol it needs
and finds the plug-in's implementation with `part_of`: the module of that name in the
plug-in's package, holding one object under a name the layer gives.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable, Iterator, Mapping, Sequence
from types import ModuleType
from typing import Generic, Protocol, TypeGuard, TypeVar, cast


class Named(Protocol):
    """What every plug-in object has: the name the site or catalog calls it by."""

    @property
    def name(self) -> str: ...  # noqa: D102


P = TypeVar("P", bound=Named)
T = TypeVar("T")


class Plugins(Mapping[str, P], Generic[P]):
    """One family of plug-ins by name, each loaded the first time the family is read.

    `modules` gives the registration lines when asked (so a test can swap them, then
    `reset()`); `attribute` is what each module defines; `is_one` checks that what it
    defines is of the family (imported lazily itself where its type is heavy), `what`
    names that type and `noun` a plug-in in messages.
    """

    def __init__(
        self,
        modules: Callable[[], Sequence[str]],
        attribute: str,
        is_one: Callable[[object], TypeGuard[P]],
        what: str,
        noun: str,
    ) -> None:
        self._modules = modules
        self._attribute = attribute
        self._is_one = is_one
        self._what = what
        self._noun = noun
        self._found: dict[str, tuple[P, str]] | None = None
        # each part asked for, once: a layer asks per log or per object (thousands of
        # times at 1,024 nodes), and the answer cannot change until `reset`
        self._parts: dict[tuple[str, str, str, object], object] = {}

    def _loaded(self) -> dict[str, tuple[P, str]]:
        """Each plug-in by name, with its package; imported once.

        Raises:
            TypeError: A registered module defines nothing of the family (its bug).
            ValueError: Two modules register one name.

        """
        if self._found is None:
            found: dict[str, tuple[P, str]] = {}
            for path in self._modules():
                item = getattr(importlib.import_module(path), self._attribute, None)
                if not self._is_one(item):
                    raise TypeError(f"{path} defines no {self._what} as {self._attribute}")
                if item.name in found:
                    raise ValueError(f"{self._noun} {item.name!r} is registered twice ({path})")
                found[item.name] = (item, path.rpartition(".")[0])
            self._found = found
        return self._found

    def reset(self) -> None:
        """Forget what was loaded: the next read imports the registration lines again."""
        self._found = None
        self._parts.clear()

    def __getitem__(self, name: str) -> P:
        return self._loaded()[name][0]

    def __iter__(self) -> Iterator[str]:
        return iter(self._loaded())

    def __len__(self) -> int:
        return len(self._loaded())

    def package_of(self, name: str) -> str:
        """The package a plug-in's code lives in.

        Raises:
            KeyError: None of that name is registered.

        """
        return self._loaded()[name][1]

    def packages(self) -> tuple[str, ...]:
        """Every registered module's package, in registration order, without importing any."""
        return tuple(dict.fromkeys(path.rpartition(".")[0] for path in self._modules()))

    def part_of(
        self, name: str, part: str, attribute: str, fits: Callable[[object], TypeGuard[T]]
    ) -> T | None:
        """What plug-in `name` implements of a layer's protocol: `attribute` of its `part`.

        `fits` is the layer's check that the object implements its protocol (an
        `isinstance` of a runtime-checkable `Protocol`). None when the package has no such
        module, or the module nothing under `attribute` (the layer says what it lacks).

        Raises:
            KeyError: None of that name is registered.
            TypeError: The module holds something under `attribute` that does not fit (a
                bug of the plug-in).

        """
        key = (name, part, attribute, fits)
        if key not in self._parts:
            module = part_module(self.package_of(name), part)
            found = getattr(module, attribute, None) if module is not None else None
            if found is not None and not fits(found):
                where = f"{self.package_of(name)}.{part}.{attribute}"
                raise TypeError(f"{where} does not fit {fits.__name__}")
            self._parts[key] = found
        return cast("T | None", self._parts[key])


def part_module(package: str, part: str) -> ModuleType | None:
    """The module `part` of a plug-in's package, imported; None when the package has none."""
    name = f"{package}.{part}"
    if importlib.util.find_spec(name) is None:
        return None
    return importlib.import_module(name)
