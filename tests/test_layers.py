"""The layering contract: packages import only downwards, modules never in a loop.

The layers are written once, in `pyproject.toml` (`[tool.importlinter]`), and checked by
the real import-linter, as `make lint` does; a copy of the package with one backward
import added must break it. Module cycles (which a layers contract does not see inside a
package) are found here from the source: every `import` and `from ... import`, including
those inside functions and `TYPE_CHECKING` blocks, so a lazy import cannot hide a loop.
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "nvcregen"
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"


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


@pytest.mark.slow
def test_no_module_imports_itself_through_others() -> None:
    assert _cycle(_graph()) == []


def test_a_loop_of_three_modules_is_found() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycle(graph) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) == []


def _lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(root)}
    command = [str(LINT_IMPORTS), "--no-cache"]
    return subprocess.run(command, check=False, cwd=root, env=env, capture_output=True, text=True)


@pytest.mark.slow
def test_the_layers_in_pyproject_hold() -> None:
    done = _lint_imports(ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "3 kept, 0 broken" in done.stdout


@pytest.mark.slow
@pytest.mark.parametrize(
    ("module", "backward"),
    [
        ("core/units.py", "nvcregen.chain.pipeline"),  # the bottom reaching the top
        ("compile/layers.py", "nvcregen.check.gate"),  # one sibling into another
        ("results/verdicts.py", "nvcregen.collect.collector"),  # results back into collect
        ("results/logruns.py", "nvcregen.kinds.burnin.logs"),  # a layer naming a moved kind
        ("catalog/models.py", "nvcregen.kinds.burnin.kind"),  # the catalog naming a kind
        ("kinds/burnin/params.py", "nvcregen.plan.model"),  # a params model above spec
        ("plan/sweep.py", "nvcregen.kinds.nccl.params"),  # a layer past the catalog to nccl's
        ("kinds/burnin/logs.py", "nvcregen.kinds.dcgm.logs"),  # one kind into another
        ("kinds/rdma/logs.py", "nvcregen.kinds.rdmapair.logs"),  # the rails into the pair form
    ],
)
def test_a_backward_import_breaks_the_contract(tmp_path: Path, module: str, backward: str) -> None:
    shutil.copytree(PACKAGE, tmp_path / "nvcregen", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    target = tmp_path / "nvcregen" / module
    target.write_text(target.read_text() + f"\nimport {backward}  # noqa: E402\n")
    done = _lint_imports(tmp_path)
    assert done.returncode == 1, done.stdout
    importer = "nvcregen." + module.removesuffix(".py").replace("/", ".")
    assert f"{importer} -> {backward}" in done.stdout  # the offending import is named
