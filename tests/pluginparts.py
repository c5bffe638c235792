"""A layer's small protocol, as a layer below the plug-ins would define it, for the loader
tests of `core/plugins.py` and of each family (kinds, engines)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol, TypeGuard, runtime_checkable

import pytest

from nvcregen.core.plugins import Plugins


@runtime_checkable
class Greeter(Protocol):
    """What the layer asks of a plug-in's part: a greeting."""

    def greet(self) -> str: ...


def greets(found: object) -> TypeGuard[Greeter]:
    """Whether a part implements the layer's protocol (`Plugins.part_of`'s `fits`)."""
    return isinstance(found, Greeter)


def only_plugin(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    module: str,
    source: str,
    lines: tuple[object, str],
    family: Plugins[Any],
) -> Iterator[None]:
    """A plug-in written under `tmp_path` as `module` (`pkg.plain.engine`) holding `source`,
    registered alone (`lines`: the registry module and its registration-lines name), the
    family reset before and after, and its package forgotten after: a fixture's body."""
    *packages, name = module.split(".")
    folder = tmp_path.joinpath(*packages)
    folder.mkdir(parents=True)
    for depth in range(1, len(packages) + 1):
        tmp_path.joinpath(*packages[:depth], "__init__.py").touch()
    (folder / f"{name}.py").write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(*lines, (module,))
    family.reset()
    yield
    family.reset()
    top = packages[0]
    for loaded in [m for m in sys.modules if m == top or m.startswith(f"{top}.")]:
        del sys.modules[loaded]
