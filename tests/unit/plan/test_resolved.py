"""The Plan: built once by `validate`, what every later layer takes (plan/resolved.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from sitefactory import FILE, catalog, edit, site_yaml

from nvcregen.chain.pipeline import Options, compile_source
from nvcregen.plan import resolved
from nvcregen.plan.budget import plan_budget
from nvcregen.plan.facts import plan_facts
from nvcregen.plan.resolve import plan
from nvcregen.validate.site import load_site

ROOT = Path(__file__).resolve().parents[3]


def test_a_valid_site_is_planned_once_with_everything_it_resolved() -> None:
    loaded = load_site(site_yaml().encode(), FILE, catalog())
    planned = loaded.plan
    assert planned is not None
    assert planned.site is loaded.site and planned.doc is loaded.doc
    assert planned.catalog is catalog() and planned.inventory is None
    assert planned.name == "lab"
    assert list(planned.units) == plan(planned.site, catalog())
    assert [(u.stage.name, u.test.name) for u in planned.units] == [
        ("node", "dcgm-l1"),
        ("node", "nccl-all-reduce"),
        ("fabric", "nccl-all-reduce"),
    ]


def test_the_budget_and_the_replays_facts_are_worked_out_once_from_the_plan() -> None:
    planned = load_site(site_yaml().encode(), FILE, catalog()).plan
    assert planned is not None
    assert planned.budget == plan_budget(planned.site, planned.units)
    assert planned.budget is planned.budget
    assert planned.facts == plan_facts(planned.site, planned.units)
    assert planned.facts is planned.facts
    assert planned.facts.root == "out/lab"


def test_a_plan_over_budget_is_still_a_plan_and_its_budget_is_the_one_reported() -> None:
    text = edit(site_yaml(), "gpuHours: 500", "gpuHours: 0.01")
    loaded = load_site(text.encode(), FILE, catalog())
    assert loaded.plan is not None
    (over,) = [d for d in loaded.diagnostics if d.path == "/spec/readiness/window/gpuHours"]
    assert over.code == "NVC313"
    assert f"needs {loaded.plan.budget.worst_gpu_hours} GPU-hours" in over.message


def test_a_site_whose_references_fail_has_a_model_but_no_plan() -> None:
    text = edit(site_yaml(), "tests: [dcgm-l1, nccl-all-reduce]", "tests: [dcgm-l0]")
    loaded = load_site(text.encode(), FILE, catalog())
    assert loaded.site is not None and loaded.doc is not None
    assert loaded.plan is None
    assert any(d.is_error for d in loaded.diagnostics)


def test_a_plan_pointed_at_another_folder_is_a_new_plan_with_its_own_facts() -> None:
    planned = load_site(site_yaml().encode(), FILE, catalog()).plan
    assert planned is not None
    _ = planned.facts  # worked out for the site as written
    moved = planned.with_gitops_path("deploy/out/lab")
    assert moved.site.spec.gitops.path == "deploy/out/lab"
    assert moved.facts.root == "deploy/out/lab"
    assert planned.site.spec.gitops.path is None and planned.facts.root == "out/lab"
    assert moved.units is planned.units and moved.doc is planned.doc
    assert moved.budget == planned.budget


@pytest.mark.parametrize("site_file", ["h20-3e-lab.yaml", "h20-3e-trainer.yaml"])
def test_render_works_out_the_replays_facts_once(
    site_file: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The step timeouts (compile) and the render gate's replay read one Plan's facts."""
    calls: list[str] = []

    def counted(*args: object) -> object:
        calls.append(site_file)
        return plan_facts(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(resolved, "plan_facts", counted)
    shown = f"sites/{site_file}"
    result = compile_source((ROOT / shown).read_bytes(), shown, catalog(), Options(root=ROOT))
    assert result.tree is not None
    assert calls == [site_file]
