"""The engine registry as a plug-in loader (issue 35 item 3): engines known by module name
only, imported on first use, their parts found in their own package.

What every family of `core/plugins.py` does alike is tested once, in
tests/unit/core/test_plugins.py; here, what the engine families add: their registration
lines, the type each checks, their registry's helpers (`package_of` of an engine, `parts`)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from pluginparts import greets

from nvcregen.engineapi import registry
from nvcregen.engineapi.protocol import GitOpsEngine, ReadinessEngine

ROOT = Path(__file__).resolve().parents[3]
ENGINE_SOURCE = """
from nvcregen.engineapi.protocol import GitOpsEngine


class Plain(GitOpsEngine):
    name = "{name}"
    title = "Plain"
    unit_kind = "Plain"
    unit_path = "/spec/path"
    kustomizations = final_gate = suspended_job_current = False
    repo_url = None

    def status_bytes(self, objects, inventory_bytes, facts):
        return 0


ENGINE = {made}
"""


def _package(root: Path, package: str, name: str, made: str = "Plain()") -> None:
    folder = root / "fakeengines" / package
    folder.mkdir(parents=True)
    (root / "fakeengines" / "__init__.py").touch()
    (folder / "__init__.py").write_text("")
    (folder / "engine.py").write_text(ENGINE_SOURCE.format(name=name, made=made))


@pytest.fixture
def fake_engines(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """An empty root for engine packages on sys.path; the registry's caches emptied around it."""
    monkeypatch.syspath_prepend(str(tmp_path))
    registry.GITOPS.reset()
    registry.READINESS.reset()
    yield tmp_path
    registry.GITOPS.reset()
    registry.READINESS.reset()
    for name in [m for m in sys.modules if m == "fakeengines" or m.startswith("fakeengines.")]:
        del sys.modules[name]


def test_an_engine_is_loaded_by_its_module_name_on_first_use(
    fake_engines: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _package(fake_engines, "alpha", "alpha")
    monkeypatch.setattr(registry, "GITOPS_MODULES", ("fakeengines.alpha.engine",))
    assert "fakeengines.alpha.engine" not in sys.modules
    assert list(registry.GITOPS) == ["alpha"]
    assert "fakeengines.alpha.engine" in sys.modules
    engine = registry.GITOPS["alpha"]
    assert isinstance(engine, GitOpsEngine) and len(registry.GITOPS) == 1
    assert registry.package_of(engine) == "fakeengines.alpha"


def test_a_module_without_an_engine_or_a_name_twice_is_a_bug_named(
    fake_engines: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The family's own words: its type, and an engine named as one."""
    _package(fake_engines, "alpha", "alpha", made="None")
    monkeypatch.setattr(registry, "GITOPS_MODULES", ("fakeengines.alpha.engine",))
    with pytest.raises(TypeError, match=r"fakeengines\.alpha\.engine defines no GitOpsEngine"):
        list(registry.GITOPS)
    registry.GITOPS.reset()
    _package(fake_engines, "beta", "same")
    _package(fake_engines, "gamma", "same")
    both = ("fakeengines.beta.engine", "fakeengines.gamma.engine")
    monkeypatch.setattr(registry, "GITOPS_MODULES", both)
    with pytest.raises(ValueError, match=r"^engine 'same' is registered twice \(fakeengines.gamma"):
        list(registry.GITOPS)


def test_a_gitops_engine_registered_as_a_readiness_engine_is_named(
    fake_engines: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _package(fake_engines, "alpha", "alpha")
    monkeypatch.setattr(registry, "READINESS_MODULES", ("fakeengines.alpha.engine",))
    with pytest.raises(TypeError, match=r"fakeengines\.alpha\.engine defines no ReadinessEngine"):
        list(registry.READINESS)


def test_a_part_is_the_engines_own_module_checked_by_the_layers_protocol(
    fake_engines: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _package(fake_engines, "alpha", "alpha")
    _package(fake_engines, "beta", "beta")
    folder = fake_engines / "fakeengines"
    (folder / "alpha" / "greeting.py").write_text(
        "class Hi:\n    def greet(self):\n        return 'hi'\n\nGREETER = Hi()\nOTHER = 1\n"
    )
    both = ("fakeengines.alpha.engine", "fakeengines.beta.engine")
    monkeypatch.setattr(registry, "GITOPS_MODULES", both)
    alpha, beta = registry.GITOPS["alpha"], registry.GITOPS["beta"]
    found = registry.part_of(alpha, "greeting", "GREETER", greets)
    assert found is not None and found.greet() == "hi"
    assert registry.part_of(beta, "greeting", "GREETER", greets) is None  # no such module
    # a name under which nothing, or nothing that fits: tests/unit/core/test_plugins.py
    # every engine's part, in registration order, skipping those without one
    assert [g.greet() for g in registry.parts(registry.GITOPS, "greeting", "GREETER", greets)] == [
        "hi"
    ]


def test_an_engine_that_is_not_the_registered_one_has_no_package(
    fake_engines: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _package(fake_engines, "alpha", "alpha")
    monkeypatch.setattr(registry, "GITOPS_MODULES", ("fakeengines.alpha.engine",))
    impostor = type(registry.GITOPS["alpha"])()
    with pytest.raises(KeyError, match="'alpha' is not the registered one"):
        registry.package_of(impostor)


def test_the_registered_engines_are_each_familys_own() -> None:
    assert all(isinstance(e, GitOpsEngine) for e in registry.GITOPS.values())
    assert all(isinstance(e, ReadinessEngine) for e in registry.READINESS.values())
    assert registry.package_of(registry.gitops_engine("flux")) == "nvcregen.engines.gitops.flux"
    nvcre = registry.readiness_engine("nvcre")
    assert registry.package_of(nvcre) == "nvcregen.engines.readiness.nvcre"


def test_no_layer_below_the_engines_imports_one_until_asked() -> None:
    """Loading the layers that ask (compile, replay, collect) imports no engine package."""
    code = (
        "import sys, nvcregen.compile.layers, nvcregen.replay.site, nvcregen.collect.collector\n"
        "print(sorted(m for m in sys.modules if m.startswith('nvcregen.engines.')))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": str(ROOT)},
    )
    assert done.stdout.strip() == "[]"
