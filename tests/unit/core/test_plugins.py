"""The one loader of plug-ins by module name (`core/plugins.py`), which the test kinds and
both engine families are: what every family does alike is tested here once, on a family of
its own; what a family adds (its registration lines, the type it checks, its registry's
helpers) in its own loader test (`tests/unit/kinds/test_kind_loader.py`,
`tests/unit/engines/test_engine_loader.py`)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import TypeGuard

import pytest
from pluginparts import greets

from nvcregen.core import plugins
from nvcregen.core.plugins import Named, Plugins

PLUGIN_SOURCE = """
class Plain:
    def __init__(self, name):
        self.name = name


THING = {made}
"""


def is_plain(found: object) -> TypeGuard[Named]:
    return type(found).__name__ == "Plain"


def _package(root: Path, package: str, name: str, made: str = "") -> str:
    """A plug-in package `fakeplugins.<package>` whose `thing` module names `name`."""
    folder = root / "fakeplugins" / package
    folder.mkdir(parents=True)
    (root / "fakeplugins" / "__init__.py").touch()
    (folder / "__init__.py").write_text("")
    (folder / "thing.py").write_text(PLUGIN_SOURCE.format(made=made or f"Plain({name!r})"))
    return f"fakeplugins.{package}.thing"


class Family:
    """A family of plug-ins over registration lines a test sets."""

    def __init__(self) -> None:
        self.modules: tuple[str, ...] = ()
        self.plugins: Plugins[Named] = Plugins(
            lambda: self.modules, "THING", is_plain, "Plain", "plug-in"
        )


@pytest.fixture
def fake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """An empty root for plug-in packages on sys.path; its modules forgotten after."""
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    for name in [m for m in sys.modules if m == "fakeplugins" or m.startswith("fakeplugins.")]:
        del sys.modules[name]


def test_a_plugin_is_loaded_by_its_module_name_on_first_use(fake: Path) -> None:
    family = Family()
    family.modules = (_package(fake, "alpha", "alpha"), _package(fake, "beta", "beta"))
    assert family.plugins.packages() == ("fakeplugins.alpha", "fakeplugins.beta")
    assert "fakeplugins.alpha.thing" not in sys.modules  # naming the packages imports none
    assert list(family.plugins) == ["alpha", "beta"]  # in registration order
    assert "fakeplugins.alpha.thing" in sys.modules
    assert family.plugins["alpha"].name == "alpha" and len(family.plugins) == 2
    assert family.plugins.package_of("beta") == "fakeplugins.beta"
    with pytest.raises(KeyError):
        family.plugins.package_of("gamma")
    assert family.plugins.get("gamma") is None


def test_a_module_without_a_plugin_or_a_name_twice_is_a_bug_named(fake: Path) -> None:
    family = Family()
    family.modules = (_package(fake, "alpha", "alpha"), _package(fake, "beta", "alpha"))
    with pytest.raises(ValueError, match=r"^plug-in 'alpha' is registered twice \(fakeplugins\."):
        list(family.plugins)
    family.plugins.reset()  # the next read imports the registration lines again
    family.modules = (_package(fake, "gamma", "gamma", made="object()"),)
    with pytest.raises(TypeError, match=r"^fakeplugins\.gamma\.thing defines no Plain as THING$"):
        list(family.plugins)
    family.plugins.reset()
    family.modules = (_package(fake, "delta", "delta", made="None"),)
    with pytest.raises(TypeError, match=r"fakeplugins\.delta\.thing defines no Plain"):
        len(family.plugins)


def test_a_part_is_the_named_object_of_the_plugins_own_module(
    fake: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    family = Family()
    family.modules = (_package(fake, "alpha", "alpha"), _package(fake, "beta", "beta"))
    part = "class _G:\n    def greet(self):\n        return 'hi'\n\nGREETER = _G()\nOTHER = 1\n"
    (fake / "fakeplugins" / "alpha" / "greeting.py").write_text(part)
    found = family.plugins.part_of("alpha", "greeting", "GREETER", greets)
    assert found is not None and found.greet() == "hi"
    assert family.plugins.part_of("beta", "greeting", "GREETER", greets) is None  # no module
    assert family.plugins.part_of("alpha", "greeting", "NONE", greets) is None  # nothing so named
    with pytest.raises(TypeError, match=r"fakeplugins\.alpha\.greeting\.OTHER does not fit greets"):
        family.plugins.part_of("alpha", "greeting", "OTHER", greets)
    with pytest.raises(KeyError):
        family.plugins.part_of("gamma", "greeting", "GREETER", greets)
    # each part is looked up once (a layer asks per log), again only after a reset
    looked: list[str] = []
    real = plugins.part_module

    def counted(package: str, part: str) -> ModuleType | None:
        looked.append(part)
        return real(package, part)

    monkeypatch.setattr(plugins, "part_module", counted)
    for _ in range(3):
        assert family.plugins.part_of("alpha", "greeting", "GREETER", greets) is found
        assert family.plugins.part_of("beta", "greeting", "GREETER", greets) is None
    assert looked == []  # both answered above, before the count began
    family.plugins.reset()
    family.plugins.part_of("alpha", "greeting", "GREETER", greets)
    family.plugins.part_of("alpha", "greeting", "GREETER", greets)
    assert looked == ["greeting"]
