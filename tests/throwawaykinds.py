"""A throwaway test kind, written outside `nvcregen/` and registered by swapping the registry.

For the tests that show a new kind is its package alone: its catalog block read
(`tests/unit/catalog/test_kind_blocks.py`) and a collective kind timed and thresholded
through the same seam as nccl (`tests/unit/kinds/test_collective_seam.py`). The kind's
package is written under a test's tmp_path (on sys.path), the registry's module list is
swapped and reset, and the real catalog is copied beside its catalog file.
"""

from __future__ import annotations

import hashlib
import shutil
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from nvcregen.core.datafiles import data_dir
from nvcregen.kindapi import registry

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Throwaway:
    """A kind's sources: its params and kind modules, and its catalog test's file."""

    params: str  # params.py
    kind: str  # kind.py, formatted with its `{package}` and `{name}`
    test_file: str  # its file's name under catalog/tests/
    test: str  # that file's text


@dataclass(frozen=True)
class Extra:
    """A catalog folder holding the real catalog and the throwaway kind's test."""

    catalog: Path
    test_file: Path
    package: str  # the throwaway kind's package, on sys.path
    before: str  # the digest of nvcregen/ before the kind was written and registered


def package_digest() -> str:
    """Every file under nvcregen/ (but bytecode), its path and bytes, as one digest."""
    digest = hashlib.sha256()
    for path in sorted((ROOT / "nvcregen").rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            digest.update(path.relative_to(ROOT).as_posix().encode() + b"\0")
            digest.update(path.read_bytes())
    return digest.hexdigest()


def _write_kind(root: Path, kind: Throwaway, package: str, name: str) -> None:
    folder = root / "extrakinds" / package
    folder.mkdir(parents=True)
    (root / "extrakinds" / "__init__.py").touch()
    (folder / "__init__.py").touch()
    (folder / "params.py").write_text(kind.params)
    (folder / "kind.py").write_text(kind.kind.format(package=package, name=name))


def registering(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: Throwaway
) -> Iterator[Callable[[str], Extra]]:
    """A fixture's body: registers `kind` under a given name after the real kinds.

    Once the test is done, the real module list is back, the registry reset and nothing
    of the throwaway kind left in `sys.modules`.
    """
    before = package_digest()
    monkeypatch.syspath_prepend(str(tmp_path / "kinds"))

    def registered(name: str) -> Extra:
        package = "kind" + name.encode().hex()  # a package name whatever the kind's
        _write_kind(tmp_path / "kinds", kind, package, name)
        modules = (*registry.KIND_MODULES, f"extrakinds.{package}.kind")
        monkeypatch.setattr(registry, "KIND_MODULES", modules)
        registry.KINDS.reset()
        folder = tmp_path / "catalog"
        shutil.copytree(data_dir("catalog"), folder)
        test_file = folder / "tests" / kind.test_file
        test_file.write_text(kind.test, encoding="utf-8")
        return Extra(folder, test_file, f"extrakinds.{package}", before)

    yield registered
    monkeypatch.undo()  # the real module list back, then nothing of the throwaway kept
    registry.KINDS.reset()
    for name in [m for m in sys.modules if m == "extrakinds" or m.startswith("extrakinds.")]:
        del sys.modules[name]
