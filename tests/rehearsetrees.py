"""Compiled trees of the trainer site (Argo CD, and Flux), for the rehearsal's pure parts:
session fixtures registered by tests/conftest.py (`pytest_plugins`). The site is the shipped
one with a run per test, node and round (tests/fixtures/perrun/): the report's tests count
and name those runs; the shipped, packed site is rehearsed on the real controllers."""

from __future__ import annotations

from pathlib import Path

import pytest

from nvcregen.catalog.load import load_catalog
from nvcregen.chain.pipeline import CompileResult, Options, build_site
from nvcregen.emit.naming import manifest_path
from nvcregen.plan.facts import PlanFacts
from nvcregen.replay.model import TreeObject

ROOT = Path(__file__).resolve().parent.parent
TRAINER = ROOT / "tests" / "fixtures" / "perrun" / "h20-3e-trainer.yaml"


def compiled(text: str) -> tuple[list[TreeObject], PlanFacts]:
    """A site's objects at their paths in its folder, and the replay's facts."""
    built = build_site(
        text.encode(), "sites/h20-3e-trainer.yaml", load_catalog(), Options(root=ROOT)
    )
    assert not isinstance(built, CompileResult), [str(d) for d in built.diagnostics]
    objects = [TreeObject(p, p, m.obj) for m in built.manifests for p in [manifest_path(m)]]
    return sorted(objects, key=lambda o: o.path), built.plan.facts


@pytest.fixture(scope="session")
def argocd_tree() -> tuple[list[TreeObject], PlanFacts]:
    return compiled(TRAINER.read_text("utf-8"))


@pytest.fixture(scope="session")
def flux_tree() -> tuple[list[TreeObject], PlanFacts]:
    text = TRAINER.read_text("utf-8").replace("engine: argocd", "engine: flux")
    return compiled(text)
