"""The kind registry as a plug-in loader (issue 35 item 2): kinds known by module name only,
imported on first use, their parts found in their own package.

What every family of `core/plugins.py` does alike is tested once, in
tests/unit/core/test_plugins.py; here, what the kinds' family adds: its registration lines
(`KIND_MODULES`), the type it checks (`TestKind` as `KIND`), its registry's helpers."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from pluginparts import greets

from nvcregen.kindapi import registry
from nvcregen.kindapi.protocol import TestKind

ROOT = Path(__file__).resolve().parents[3]
KIND_SOURCE = """
from nvcregen.kindapi.protocol import FixedTime, TestKind
from nvcregen.spec.v1alpha1 import StrictModel


class Plain(TestKind):
    name = "{name}"
    params = StrictModel
    per_node = one_node = collective = node_health = False

    def duration_basis(self, test):
        return "none"

    def fixed_time(self, test, pod_start):
        return FixedTime(1.0, "one second")


KIND = {made}
"""


def _package(root: Path, package: str, name: str, made: str = "Plain()") -> None:
    folder = root / "fakekinds" / package
    folder.mkdir(parents=True)
    (root / "fakekinds" / "__init__.py").touch()
    (folder / "__init__.py").write_text("")
    (folder / "kind.py").write_text(KIND_SOURCE.format(name=name, made=made))


@pytest.fixture
def fake_kinds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """An empty root for kind packages on sys.path; the registry's caches emptied around it."""
    monkeypatch.syspath_prepend(str(tmp_path))
    registry.KINDS.reset()
    yield tmp_path
    registry.KINDS.reset()
    for name in [m for m in sys.modules if m == "fakekinds" or m.startswith("fakekinds.")]:
        del sys.modules[name]


def test_a_kind_is_loaded_by_its_module_name_on_first_use(
    fake_kinds: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _package(fake_kinds, "alpha", "alpha")
    monkeypatch.setattr(registry, "KIND_MODULES", ("fakekinds.alpha.kind",))
    assert "fakekinds.alpha.kind" not in sys.modules
    assert list(registry.KINDS) == ["alpha"]
    assert "fakekinds.alpha.kind" in sys.modules
    assert isinstance(registry.KINDS["alpha"], TestKind) and len(registry.KINDS) == 1
    assert registry.package_of("alpha") == "fakekinds.alpha"


def test_a_module_without_a_kind_or_a_name_twice_is_a_bug_named(
    fake_kinds: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The family's own words (its type and attribute); `kind_of` reads the family."""
    _package(fake_kinds, "alpha", "alpha")
    _package(fake_kinds, "beta", "alpha")
    _package(fake_kinds, "gamma", "gamma", made="object()")
    monkeypatch.setattr(registry, "KIND_MODULES", ("fakekinds.alpha.kind", "fakekinds.beta.kind"))
    with pytest.raises(ValueError, match=r"'alpha' is registered twice \(fakekinds.beta.kind\)"):
        registry.kind_of(type("T", (), {"name": "t", "kind": "alpha"})())
    registry.KINDS.reset()
    monkeypatch.setattr(registry, "KIND_MODULES", ("fakekinds.gamma.kind",))
    with pytest.raises(TypeError, match=r"fakekinds\.gamma\.kind defines no TestKind as KIND"):
        list(registry.KINDS)


def test_a_part_is_the_named_object_of_the_kinds_own_module(
    fake_kinds: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`registry.part_of` asks the family by kind name (`Plugins.part_of`, its misses, its
    bugs and its memo: tests/unit/core/test_plugins.py)."""
    _package(fake_kinds, "alpha", "alpha")
    _package(fake_kinds, "beta", "beta")
    part = "class _G:\n    def greet(self):\n        return 'hi'\n\nGREETER = _G()\n"
    (fake_kinds / "fakekinds" / "alpha" / "greeting.py").write_text(part)
    monkeypatch.setattr(registry, "KIND_MODULES", ("fakekinds.alpha.kind", "fakekinds.beta.kind"))
    found = registry.part_of("alpha", "greeting", "GREETER", greets)
    assert found is not None and found.greet() == "hi"
    assert registry.part_of("alpha", "greeting", "GREETER", greets) is found  # kept
    assert registry.part_of("beta", "greeting", "GREETER", greets) is None  # no such module
    with pytest.raises(KeyError):
        registry.part_of("gamma", "greeting", "GREETER", greets)


def test_every_registered_module_is_a_kind_named_as_its_catalog_block() -> None:
    assert len(registry.KINDS) == len(registry.KIND_MODULES)
    for path in registry.KIND_MODULES:
        kind = sys.modules[path].KIND
        assert registry.KINDS[kind.name] is kind
        assert registry.package_of(kind.name) == path.rpartition(".")[0]


@pytest.mark.slow
def test_the_command_line_starts_without_loading_a_kind() -> None:
    """`ingest`'s kinds are asked when it runs (`commands/results.py`), not as the CLI starts."""
    import subprocess

    code = "import sys, nvcregen.cli; print(sorted(m for m in sys.modules if '.kind' in m))"
    done = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True, cwd=ROOT
    )
    assert done.stdout.strip() == "[]"
