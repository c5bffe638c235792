"""Rendered trees for the replay's tests: the shipped ones as `check` reads them, and edits.

`shipped(site)` reads `out/<site>/` and the site's facts as `nvcregen check` does; `edited`
returns a copy of a tree with one function applied to the objects it selects, so a test
builds a broken tree by hand from a good one and states exactly what it broke.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable
from functools import cache
from pathlib import Path
from typing import Any

from nvcregen.catalog.load import load_catalog
from nvcregen.chain.pipeline import Built, Options, build_site
from nvcregen.emit.canonical import dump_yaml
from nvcregen.emit.naming import manifest_path
from nvcregen.plan.facts import PlanFacts
from nvcregen.replay.model import Problem, TreeObject
from nvcregen.replay.site import Replay, replay_site
from nvcregen.spec.fast import parse_fast
from nvcregen.validate.site import load_site

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = ("h20-3e-lab", "h20-3e-trainer", "l20-pool")
# The shipped trainer site with a run per test, node and round (tests/fixtures/perrun/), rendered in
# memory: the replay's tests of per-run structure read it as they read a shipped tree.
PER_RUN = "h20-3e-trainer@perRun"
_PER_RUN_FILE = ROOT / "tests" / "fixtures" / "perrun" / "h20-3e-trainer.yaml"
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
WAVE = "argocd.argoproj.io/sync-wave"
Tree = tuple[TreeObject, ...]


@cache
def shipped_facts(site: str) -> PlanFacts:
    """The replay's facts of a shipped site (or of `PER_RUN`)."""
    path = _PER_RUN_FILE if site == PER_RUN else ROOT / "sites" / f"{site}.yaml"
    loaded = load_site(path.read_bytes(), f"sites/{site}.yaml", load_catalog())
    assert loaded.plan is not None, loaded.diagnostics
    return loaded.plan.facts


@cache
def shipped(site: str) -> Tree:
    """The objects of `out/<site>/`, named as `nvcregen check out` names them."""
    if site == PER_RUN:
        return _rendered(_PER_RUN_FILE)
    base = ROOT / "out" / site
    return tuple(
        TreeObject(
            f"out/{site}/{p.relative_to(base).as_posix()}",
            p.relative_to(base).as_posix(),
            parse_fast(p.read_bytes()),
        )
        for p in sorted(base.rglob("*.yaml"))
    )


def _rendered(path: Path) -> Tree:
    """A site's objects as render would write them under `out/<site>/`, without writing."""
    built = build_site(path.read_bytes(), "sites/h20-3e-trainer.yaml", load_catalog(), Options())
    assert isinstance(built, Built), getattr(built, "diagnostics", None)
    name = built.plan.site.metadata.name
    found = [
        TreeObject(
            f"out/{name}/{manifest_path(m)}",
            manifest_path(m),
            parse_fast(dump_yaml(m.obj).encode()),
        )
        for m in built.manifests
    ]
    return tuple(sorted(found, key=lambda item: item.path))


def edited(
    tree: Iterable[TreeObject],
    select: Callable[[TreeObject], bool],
    change: Callable[[dict[str, Any]], object],
) -> Tree:
    """A copy of the tree with `change` applied to (a deep copy of) each selected object."""
    found = []
    for item in tree:
        if not select(item):
            found.append(item)
            continue
        obj = copy.deepcopy(dict(item.obj))
        change(obj)
        found.append(TreeObject(item.file, item.path, obj))
    return tuple(found)


def without(tree: Iterable[TreeObject], select: Callable[[TreeObject], bool]) -> Tree:
    """The tree without the selected objects."""
    return tuple(item for item in tree if not select(item))


def kind(name: str) -> Callable[[TreeObject], bool]:
    """Select objects of one kind."""
    return lambda item: item.kind == name


def replay(tree: Iterable[TreeObject], facts: PlanFacts) -> Replay:
    """Replay a tree."""
    return replay_site(list(tree), facts)


def codes(found: Replay) -> list[str]:
    """The codes the replay reported, in order."""
    return [p.code for p in found.problems]


def of(found: Replay, code: str) -> list[Problem]:
    """The problems with one code."""
    return [p for p in found.problems if p.code == code]
