"""Each engine's code lives in its own package (issue 35, item 3).

No module outside `nvcregen/engines/` imports an engine's package (the layers find an
engine through `engineapi.registry` and ask for its parts through their own protocols),
and the layers that held the engines' models name none of an engine's objects in their
logic: the replay (`nvcregen/replay/`) neither a GitOps engine's units (an Application,
a Kustomization, their API groups) nor the objects NVCRE expands into runs,
`nvcregen/collect/` no GitOps unit, and `nvcregen/compile/` and `nvcregen/rehearse/`
neither a unit nor the objects a GitOps engine installs a chart with (a HelmRelease and
its OCIRepository).
Messages and docstrings may still name them. What moved into an engine's package (a
GitOps engine's objects, shards, step chain, health checks, rehearsal play, controllers on
the twin and project checks; a readiness engine's objects: NVCRE's Certifications,
WorkloadRuns, LogProfile and preview, trainer mode's TrainJobs, per-node, pair, packed and
periodic runs) is named nowhere outside it: no module elsewhere defines, imports or uses a
name those modules define.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

import pytest

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
# the modules the engines' code moved out of
MOVED = (
    "replay/flux.py",
    "replay/argocd.py",
    "replay/nvcre.py",
    "collect/trainer.py",
    "collect/nvcrelogs.py",
    "compile/gitops/argocd.py",
    "compile/gitops/argocdshards.py",
    "compile/gitops/project.py",
    "compile/gitops/flux.py",
    "compile/gitops/fluxshards.py",
    "compile/gitops/chain.py",
    "compile/gitops/health",
    "rehearse/fluxplay.py",
    "check/projects.py",
    "core/helmsource.py",
    "compile/readiness/preview.py",
    "compile/readiness/nvcre.py",  # its two name limits, which the alerts match, in core/nvcre.py
    "compile/readiness/trainer.py",
    "compile/readiness/trainerlayer.py",
    "compile/readiness/runs.py",
    "compile/readiness/pairjobs.py",
    "compile/readiness/packed.py",
    "compile/readiness/nodejob.py",
    "compile/readiness/periodic.py",
    "compile/templates/mpi-launcher.sh.j2",
    "compile/templates/pack-node.sh.j2",
    "compile/templates/pack-launcher.sh.j2",
)
# each GitOps engine's modules moved in from the layers, whose names stay in its package
ENGINE_MODULES = {
    "gitops/argocd": (
        "layer", "shards", "project", "health", "objects", "rehearse", "livehealth", "check",
        "helmsource",
    ),
    "gitops/flux": (
        "layer", "shards", "chain", "objects", "rehearse", "livehealth", "play", "controllers",
    ),
    "readiness/nvcre": ("layer", "preview", "objects"),
    "readiness/trainer": (
        "layer", "trainjobs", "runs", "pairjobs", "packed", "nodejob", "periodic", "objects",
    ),
}  # fmt: skip
# what a layer asks every engine's part for, by the one name the layer gives
PART_NAMES = frozenset({"ENGINE", "MODEL", "CHART_REF", "OBJECTS", "PLAYER", "CHECKS"})


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


def defined_names(source: str) -> frozenset[str]:
    """The public names a module defines at its top level (functions, classes, constants)."""
    found: set[str] = set()
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            found.add(node.name)
        elif isinstance(node, ast.Assign):
            found |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            found.add(node.target.id)
    return frozenset(n for n in found if not n.startswith("_"))


def used_names(source: str) -> frozenset[str]:
    """Every name a module's code defines, imports or uses (`x`, `a.x`, `import a.x`)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Name):
            found.add(node.id)
        elif isinstance(node, ast.Attribute):
            found.add(node.attr)
        elif isinstance(node, ast.FunctionDef | ast.ClassDef):
            found.add(node.name)
        elif isinstance(node, ast.alias):
            found |= {node.name.rpartition(".")[2], *([node.asname] if node.asname else [])}
    return frozenset(found)


def moved_names(package: str) -> frozenset[str]:
    """What the modules moved into an engine's package define, but the layers' part names."""
    found: set[str] = set()
    for module in ENGINE_MODULES[package]:
        found |= defined_names((ENGINES / package / f"{module}.py").read_text(encoding="utf-8"))
    return frozenset(found - PART_NAMES)


@pytest.mark.slow
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
        PACKAGE / "compile": gitops_names() | CHART_NAMES,
        PACKAGE / "rehearse": gitops_names() | CHART_NAMES,
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


def _holds_source(path: Path) -> bool:
    if path.is_file():
        return True
    return path.is_dir() and any("__pycache__" not in p.parts for p in path.rglob("*"))


def test_the_moved_modules_are_gone_and_each_engine_holds_its_parts() -> None:
    # a folder left holding only Python's byte-code cache (a checkout updated in place) is gone
    assert [m for m in MOVED if _holds_source(PACKAGE / m)] == []
    held = sorted(p.relative_to(ENGINES).as_posix() for p in ENGINES.rglob("*.py"))
    for part in (
        "gitops/argocd/replay.py",
        "gitops/flux/replay.py",
        "readiness/nvcre/replay.py",
        "readiness/nvcre/collect.py",
        "readiness/trainer/collect.py",
        "gitops/argocd/chartref.py",
        "gitops/flux/chartref.py",
        *(f"{package}/{module}.py" for package, mods in ENGINE_MODULES.items() for module in mods),
    ):
        assert part in held, part
    # Argo CD's Lua health checks are package data of its package, next to their loader
    scripts = sorted(p.name for p in (ENGINES / "gitops" / "argocd" / "lua").glob("*.lua"))
    assert scripts == [
        "application.lua", "job.lua", "nvcre.lua", "prelude.lua", "trainjob.lua", "workload.lua",
    ]  # fmt: skip
    # so are the launcher scripts only trainer mode renders, next to the modules rendering them
    templates = ENGINES / "readiness" / "trainer" / "templates"
    assert sorted(p.name for p in templates.glob("*.j2")) == [
        "mpi-launcher.sh.j2", "pack-launcher.sh.j2", "pack-node.sh.j2",
    ]  # fmt: skip


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


@pytest.mark.slow
def test_what_moved_into_an_engines_package_is_named_nowhere_outside_it() -> None:
    found = {}
    for package in ENGINE_MODULES:
        names = moved_names(package)
        for path in _modules(PACKAGE):
            if ENGINES / package in path.parents:
                continue
            where = path.relative_to(PACKAGE).as_posix()
            hits = names & used_names(path.read_text(encoding="utf-8"))
            if hits:
                found[f"{where} ({package})"] = sorted(hits)
    assert not found, "ask the engine's part through the layer's protocol instead:\n" + (
        "\n".join(f"{f}: {', '.join(hits)}" for f, hits in found.items())
    )


def test_the_moved_names_are_found_in_each_form_a_module_can_name_them() -> None:
    assert {"argocd_layer", "ArgoCdObjects", "RETRY", "argocd_health_keys"} <= moved_names(
        "gitops/argocd"
    )
    assert {"flux_layer", "chain_readiness", "play_flux", "health_expr"} <= moved_names(
        "gitops/flux"
    )
    assert not moved_names("gitops/flux") & PART_NAMES
    source = """
from nvcregen.engines.gitops.flux.chain import chain_readiness
import nvcregen.engines.gitops.argocd.health as lua
from x import y as argocd_health_keys
value = flux.flux_layer(site)
RETRY = 3
def play_flux(): ...
_private = 1
"""
    assert {
        "chain_readiness", "health", "lua", "argocd_health_keys", "flux_layer", "RETRY",
        "play_flux",
    } <= used_names(source)  # fmt: skip
    assert defined_names(source) == {"value", "RETRY", "play_flux"}  # not `_private`
