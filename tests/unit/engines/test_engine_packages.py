"""Each engine's replay model and collector live in its own package (issue 35, item 3).

No module outside `nvcregen/engines/` imports an engine's package (the layers find an
engine through `engineapi.registry` and ask for its parts through their own protocols),
and the layers that held the engines' models name none of an engine's objects in their
logic: the replay (`nvcregen/replay/`) neither a GitOps engine's units (an Application,
a Kustomization, their API groups) nor the objects NVCRE expands into runs,
`nvcregen/collect/` no GitOps unit, and `nvcregen/compile/platform/` neither a unit nor
the objects a GitOps engine installs a chart with (a HelmRelease and its OCIRepository).
Messages and docstrings may still name them.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

from nvcregen.engineapi.registry import GITOPS, READINESS

ROOT = Path(__file__).resolve().parents[3]
PACKAGE = ROOT / "nvcregen"
ENGINES = PACKAGE / "engines"
# the API groups of the GitOps engines' own objects (their units and sources)
GITOPS_GROUPS = frozenset(
    {"argoproj.io", "kustomize.toolkit.fluxcd.io", "source.extensions.fluxcd.io"}
)
# what Flux installs a chart by reference with (`engines/gitops/flux/chartref.py`)
CHART_NAMES = frozenset(
    {"HelmRelease", "OCIRepository", "helm.toolkit.fluxcd.io", "source.toolkit.fluxcd.io"}
)
# the modules the engines' models and collectors moved out of
MOVED = (
    "replay/flux.py",
    "replay/argocd.py",
    "replay/nvcre.py",
    "collect/trainer.py",
    "collect/nvcrelogs.py",
)


def gitops_names() -> frozenset[str]:
    """What names a GitOps engine's object: its unit kinds and the groups of its objects."""
    return frozenset({e.unit_kind for e in GITOPS.values()} | GITOPS_GROUPS)


def expanded_names() -> frozenset[str]:
    """The kinds and groups of the objects an engine expands into runs itself (NVCRE's)."""
    found = {
        part
        for engine in READINESS.values()
        if not engine.writes_runs
        for mode in ("category", "workloadrun")
        for part in engine.run_object(mode, False)
    }
    return frozenset(found)


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            first = node.body[0] if node.body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def engine_imports(source: str) -> list[str]:
    """Each import of an engine's package in a module's source, as `line: module`."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            module = node.module or ""
            names = [module, *(f"{module}.{a.name}" for a in node.names)]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        hits = [n for n in names if n == "nvcregen.engines" or n.startswith("nvcregen.engines.")]
        if hits:
            found.append(f"{node.lineno}: {hits[0]}")
    return found


def named_in_logic(source: str, words: Iterable[str]) -> list[str]:
    """Each string constant of a module's code (not a docstring) that is one of `words`."""
    wanted = frozenset(words)
    tree = ast.parse(source)
    skipped = _docstrings(tree)
    hits = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and id(node) not in skipped
        and isinstance(node.value, str)
        and node.value in wanted
    ]
    hits.sort(key=lambda n: (n.lineno, n.col_offset))
    return [f"{node.lineno}: {node.value!r}" for node in hits]


def _modules(folder: Path) -> list[Path]:
    return sorted(folder.rglob("*.py"))


def test_no_module_outside_the_engines_imports_an_engines_package() -> None:
    found = {
        path.relative_to(ROOT).as_posix(): hits
        for path in _modules(PACKAGE)
        if ENGINES not in path.parents
        and (hits := engine_imports(path.read_text(encoding="utf-8")))
    }
    assert not found, "ask engineapi.registry (part_of) through a protocol instead:\n" + "\n".join(
        f"{f}:{h}" for f, hits in found.items() for h in hits
    )


def test_the_replay_collect_and_platform_name_no_engines_objects_in_their_logic() -> None:
    layers = {
        PACKAGE / "replay": gitops_names() | expanded_names(),
        PACKAGE / "collect": gitops_names(),
        PACKAGE / "compile" / "platform": gitops_names() | CHART_NAMES,
    }
    found = {
        path.relative_to(ROOT).as_posix(): hits
        for folder, words in layers.items()
        for path in _modules(folder)
        if (hits := named_in_logic(path.read_text(encoding="utf-8"), words))
    }
    assert not found, "the engine's package holds that (its replay model, its collector):\n" + (
        "\n".join(f"{f}:{h}" for f, hits in found.items() for h in hits)
    )


def test_the_moved_modules_are_gone_and_each_engine_holds_its_parts() -> None:
    assert [m for m in MOVED if (PACKAGE / m).exists()] == []
    held = sorted(p.relative_to(ENGINES).as_posix() for p in ENGINES.rglob("*.py"))
    for part in (
        "gitops/argocd/replay.py",
        "gitops/flux/replay.py",
        "readiness/nvcre/replay.py",
        "readiness/nvcre/collect.py",
        "readiness/trainer/collect.py",
        "gitops/argocd/chartref.py",
        "gitops/flux/chartref.py",
    ):
        assert part in held, part


def test_the_names_are_the_engines_own() -> None:
    assert gitops_names() >= {"Application", "Kustomization", "argoproj.io"}
    assert expanded_names() == {"nvcre.nvidia.com", "Certification", "WorkloadRun"}


def test_the_checks_find_each_old_form_and_leave_messages_alone() -> None:
    old = '''
"""Argo CD's Applications and Flux's Kustomizations, in a docstring: allowed."""
from nvcregen.engines.gitops.flux.replay import kustomizations
import nvcregen.engines.readiness.nvcre.replay
from nvcregen.engines import gitops

_APPLICATION = ("argoproj.io", "Application")
if (item.group, item.kind) == (FLUX, "Kustomization"):
    pass
if item.kind == "Certification":
    pass
message = "a Kustomization that never becomes Ready"
wave = "argocd.argoproj.io/sync-wave"
'''
    assert [h.split(": ")[1] for h in engine_imports(old)] == [
        "nvcregen.engines.gitops.flux.replay",
        "nvcregen.engines.readiness.nvcre.replay",
        "nvcregen.engines",
    ]
    words = gitops_names() | expanded_names()
    assert [h.split(": ")[1] for h in named_in_logic(old, words)] == [
        "'argoproj.io'",
        "'Application'",
        "'Kustomization'",
        "'Certification'",
    ]
    assert engine_imports("from nvcregen.engineapi.registry import part_of\n") == []
