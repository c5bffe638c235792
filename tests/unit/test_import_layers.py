"""The results side imports one way (#10): collect -> results -> report, ingest below.

The import graph is read from the source (every `import` and `from ... import`,
including those inside functions and `TYPE_CHECKING` blocks), so a lazy import cannot
hide a loop.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "nvcregen"

# package -> the only nvcregen packages it may import
ALLOWED = {
    "ingest": {"core"},
    "report": {"core", "results"},
    "cluster": set(),
    "gitrev": {"spec"},
}
# package -> nvcregen packages it must never import
FORBIDDEN = {
    "results": {"collect", "report", "commands"},
    "ingest": {"results", "collect"},
}


def _modules() -> dict[str, Path]:
    found = {}
    for file in PACKAGE.rglob("*.py"):
        parts = list(file.relative_to(PACKAGE.parent).with_suffix("").parts)
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = file
    return found


def _imported(module: str, file: Path, modules: dict[str, Path]) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(file.read_text())):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                here = module.split(".")[: None if file.name == "__init__.py" else -1]
                base = ".".join(here[: len(here) - node.level + 1] + [base] * bool(base))
            names |= {base} | {f"{base}.{alias.name}" for alias in node.names}
    return {name for name in names if name in modules and name != module}


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    return {module: _imported(module, file, modules) for module, file in modules.items()}


def _package(module: str) -> str:
    return module.split(".")[1] if "." in module else ""


def _cycle(graph: dict[str, set[str]]) -> list[str]:
    """One import cycle among the modules, or [] when there is none."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(module: str) -> list[str]:
        state[module] = 1
        path.append(module)
        for target in sorted(graph[module]):
            if state.get(target) == 1:
                return [*path[path.index(target) :], target]
            if target not in state and (found := visit(target)):
                return found
        state[module] = 2
        path.pop()
        return []

    return next((c for m in sorted(graph) if m not in state and (c := visit(m))), [])


def test_no_module_imports_itself_through_others() -> None:
    assert _cycle(_graph()) == []


@pytest.mark.parametrize("package", sorted(ALLOWED.keys() | FORBIDDEN.keys()))
def test_packages_import_only_below_themselves(package: str) -> None:
    used = {
        _package(target)
        for module, targets in _graph().items()
        if _package(module) == package
        for target in targets
    } - {package, ""}
    if package in ALLOWED:
        assert used <= ALLOWED[package]
    assert not used & FORBIDDEN.get(package, set())
