"""What a Flux rehearsal hands the real Flux (engines/gitops/flux/play.py; pure parts).

The twin-side run is in tests/realserver/test_twin_rehearse.py; here: the repository's
files, the Kustomizations as applied (source, folder, dependencies, suspend) and how a
Kustomization's status is read.
"""

from __future__ import annotations

from typing import Any

import yaml

from nvcregen.engines.gitops.flux.play import (
    REHEARSAL_REPOSITORY,
    ready_state,
    rehearsed_kustomizations,
    repository_files,
)
from nvcregen.plan.facts import PlanFacts
from nvcregen.rehearse.gitopsplay import read_order
from nvcregen.replay.model import TreeObject

Tree = tuple[list[TreeObject], PlanFacts]


def test_the_repository_holds_exactly_what_the_steps_apply(flux_tree: Tree) -> None:
    objects, facts = flux_tree
    order = read_order(objects, facts.root)
    files = repository_files(order)
    applied = {item.path for step in order.steps for item in step.objects}
    assert set(files) == applied
    skipped = {path for path, _ in order.skipped}
    assert skipped and not skipped & set(files)  # HelmReleases, monitoring: not in it
    some = next(item for step in order.steps for item in step.objects if item.kind == "Job")
    assert yaml.safe_load(files[some.path]) == some.obj


def test_kustomizations_read_the_rehearsal_repository_at_their_folder(flux_tree: Tree) -> None:
    objects, facts = flux_tree
    order = read_order(objects, facts.root)
    applied = {
        k["metadata"]["name"]: k for k in rehearsed_kustomizations(objects, facts.root, order)
    }
    assert list(applied) == [s.label.removeprefix("Kustomization ") for s in order.steps]
    round_two = applied["h20-3e-trainer-readiness-01-single-node-r2"]["spec"]
    assert round_two["sourceRef"] == {"kind": "GitRepository", "name": REHEARSAL_REPOSITORY}
    assert round_two["path"] == "./readiness/01-single-node/round-2"
    assert round_two["dependsOn"] == [
        {"name": "h20-3e-trainer-readiness-01-single-node-r1", "namespace": "flux-system"}
    ]
    files = repository_files(order)
    for kustomization in applied.values():
        folder = kustomization["spec"]["path"].removeprefix("./")
        assert any(path.startswith(f"{folder}/") for path in files), folder


def test_dependencies_the_twin_does_not_run_are_dropped_and_suspend_lifted(
    flux_tree: Tree,
) -> None:
    objects, facts = flux_tree
    order = read_order(objects, facts.root)
    tree = {o.name: o for o in objects if o.kind == "Kustomization"}
    common = tree["h20-3e-trainer-readiness"].spec
    assert common.get("suspend") is True  # the site's manual trigger
    assert {d["name"] for d in common["dependsOn"]} == {
        "h20-3e-trainer-queues",
        "h20-3e-trainer-gitops",
    }
    applied = {
        k["metadata"]["name"]: k for k in rehearsed_kustomizations(objects, facts.root, order)
    }
    spec = applied["h20-3e-trainer-readiness"]["spec"]
    assert "suspend" not in spec
    kept = {d["name"] for d in spec.get("dependsOn", [])}
    assert kept == {"h20-3e-trainer-queues"}  # gitops is no step: taken as Ready
    assert kept <= set(applied)


def status(generation: int, observed: int, **ready: Any) -> dict[str, Any]:
    return {
        "metadata": {"generation": generation},
        "status": {"observedGeneration": observed, "conditions": [{"type": "Ready", **ready}]},
    }


def test_ready_state_reads_ready_failed_and_waiting() -> None:
    assert ready_state(status(1, 1, status="True", message="Applied revision")) == (
        "ready",
        "Applied revision",
    )
    failed = ready_state(status(1, 1, status="False", reason="HealthCheckFailed", message="x"))
    assert failed == ("failed", "HealthCheckFailed: x")
    refused = ready_state(status(2, 2, status="False", reason="ReconciliationFailed", message="y"))
    assert refused[0] == "failed"
    # waiting on a dependency, or in progress, is neither
    assert ready_state(status(1, 1, status="False", reason="DependencyNotReady")) == ("", "")
    assert ready_state(status(1, 1, status="Unknown", reason="Progressing")) == ("", "")
    # a Ready of an older generation says nothing of what was applied since
    assert ready_state(status(2, 1, status="True")) == ("", "")


def test_ready_state_takes_a_hostile_status_as_nothing_yet() -> None:
    hostile: list[Any] = [None, {}, {"metadata": [], "status": {}}, {"metadata": {}, "status": "x"}]
    for obj in hostile:
        assert ready_state(obj) == ("", "")
    broken = {
        "metadata": {"generation": 1},
        "status": {"observedGeneration": 1, "conditions": [1, "a"]},
    }
    assert ready_state(broken) == ("", "")
