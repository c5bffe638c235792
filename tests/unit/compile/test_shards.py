"""Readiness steps split into shards each GitOps unit can hold (issue #33, item 2).

The shipped trainer site (2 nodes) holds, per single-node round, 10 runs and their 10
prebuilt Workloads (20 objects); per two-node round 4 and 4 (8); `00-common/` 8 objects.
Small limits passed as EngineFacts put each boundary exactly on those figures.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from nvcregen.catalog.engines import EngineFacts, engine_facts
from nvcregen.catalog.load import load_catalog
from nvcregen.chain.pipeline import Built, Options, build_site
from nvcregen.check.replayed import replay_manifests, replay_manifests_of
from nvcregen.core.errors import Diagnostic
from nvcregen.core.kueuekeys import PREBUILT_LABEL
from nvcregen.core.labels import PARENT
from nvcregen.core.manifest import Manifest
from nvcregen.emit.naming import manifest_path
from nvcregen.engines.gitops.argocd.shards import parent_source
from nvcregen.replay.model import TreeObject
from nvcregen.replay.report import engine_lines
from nvcregen.replay.site import replay_site
from nvcregen.replay.timeline import PlanView, plan_view
from nvcregen.replay.units import gitops_units, object_bytes, unit_problems

ROOT = Path(__file__).resolve().parents[3]
TRAINER = "tests/fixtures/perrun/h20-3e-trainer.yaml"  # one run per test, node and round
SINGLE_ROUND = "01-single-node/round-1"  # 10 runs, 10 Workloads
STEP_OBJECTS = 20
LAB = "sites/h20-3e-lab.yaml"
FLUX_STEP = "h20-3e-trainer-readiness-01-single-node-r1"


def limits(objects: int = 1000, manifests: str = "8MiB", status: str = "1MiB") -> EngineFacts:
    facts = engine_facts()
    unit = facts.unit.model_copy(
        update={"max_objects": objects, "max_manifests": manifests, "max_status": status}
    )
    return facts.model_copy(update={"unit": unit})


@cache
def site_text(engine: str = "argocd", trigger: str = "manual", site: str = TRAINER) -> str:
    text = (ROOT / site).read_text(encoding="utf-8")
    text = text.replace("    engine: argocd\n", f"    engine: {engine}\n")
    return text.replace("trigger: manual", f"trigger: {trigger}")


def built(
    facts: EngineFacts, engine: str = "argocd", trigger: str = "manual", site: str = TRAINER
) -> Built:
    text = site_text(engine, trigger, site)
    found = build_site(text.encode(), site, load_catalog(), Options(root=ROOT), facts)
    assert isinstance(found, Built), getattr(found, "diagnostics", None)
    return found


def paths(found: Built) -> dict[str, Manifest]:
    return {manifest_path(m): m for m in found.manifests}


def named(found: Built, kind: str, name: str) -> dict[str, Any]:
    (obj,) = [m.obj for m in found.manifests if m.kind == kind and m.name == name]
    return obj


def folder_of(found: Built, prefix: str) -> list[str]:
    return sorted({m.folder for m in found.manifests if m.folder.startswith(prefix)})


def step_sizes(found: Built, folder: str) -> tuple[int, int]:
    """The manifests and Flux inventory of one step folder, as the replay measures them."""
    sizes = [
        object_bytes(TreeObject(p, p, m.obj), engine_facts())
        for p, m in paths(found).items()
        if m.folder == folder
    ]
    return sum(s[0] for s in sizes), sum(s[1] for s in sizes)


def within(found: Built, facts: EngineFacts) -> None:
    """Every unit of the tree within `facts`' limits, as the replay measures them."""
    tree = [TreeObject(p, p, m.obj) for p, m in paths(found).items()]
    units = gitops_units(tree, "out/h20-3e-trainer", facts)
    assert units
    assert unit_problems(units, facts) == []


# --- Flux --------------------------------------------------------------------------------


def test_a_flux_step_at_the_object_limit_is_one_unit_and_one_more_is_split() -> None:
    whole = built(limits(STEP_OBJECTS), "flux")
    assert folder_of(whole, SINGLE_ROUND) == [SINGLE_ROUND]  # at the limit: as today
    assert whole.manifests == built(engine_facts(), "flux").manifests
    split = built(limits(STEP_OBJECTS - 1), "flux")
    shards = folder_of(split, SINGLE_ROUND)
    assert shards == [f"{SINGLE_ROUND}/shard-00", f"{SINGLE_ROUND}/shard-01"]
    counts = [sum(m.folder == s for m in split.manifests) for s in shards]
    assert counts == [18, 2]  # greedy: 9 runs with their Workloads, then the tenth
    within(split, limits(STEP_OBJECTS - 1))


@pytest.mark.parametrize("figure", ["manifests", "status"])
def test_a_flux_step_at_the_byte_limit_is_one_unit_and_one_byte_less_splits_it(
    figure: str,
) -> None:
    manifest_bytes, inventory_bytes = step_sizes(built(engine_facts(), "flux"), SINGLE_ROUND)
    exact = manifest_bytes if figure == "manifests" else inventory_bytes
    at = limits(**{figure: f"{exact}B"})  # type: ignore[arg-type]
    assert folder_of(built(at, "flux"), SINGLE_ROUND) == [SINGLE_ROUND]
    under = limits(**{figure: f"{exact - 1}B"})  # type: ignore[arg-type]
    split = built(under, "flux")
    assert folder_of(split, SINGLE_ROUND) == [
        f"{SINGLE_ROUND}/shard-00",
        f"{SINGLE_ROUND}/shard-01",
    ]
    within(split, under)


def test_each_flux_shard_keeps_its_steps_checks_and_the_next_step_waits_for_every_shard() -> None:
    plain = built(engine_facts(), "flux")
    split = built(limits(STEP_OBJECTS - 1), "flux")
    step = named(plain, "Kustomization", FLUX_STEP)
    assert not [m for m in split.manifests if m.name == FLUX_STEP]  # replaced by its shards
    shard_names = [f"{FLUX_STEP}-s00", f"{FLUX_STEP}-s01"]
    for index, name in enumerate(shard_names):
        shard = named(split, "Kustomization", name)
        path = f"./readiness/{SINGLE_ROUND}/shard-{index:02d}"
        assert shard["spec"] == {**step["spec"], "path": path}  # wait, timeout, checks kept
        assert shard["spec"]["wait"] is True and shard["spec"]["healthCheckExprs"]
    following = named(split, "Kustomization", "h20-3e-trainer-readiness-01-single-node-r2-s00")
    assert following["spec"]["dependsOn"] == [{"name": n} for n in shard_names]
    # the head stays the one suspended object of `trigger: manual`
    head = named(split, "Kustomization", "h20-3e-trainer-readiness")
    assert head == named(plain, "Kustomization", "h20-3e-trainer-readiness")
    assert head["spec"]["suspend"] is True
    suspended = [
        m.name
        for m in split.manifests
        if m.kind == "Kustomization" and m.obj["spec"].get("suspend")
    ]
    assert suspended == ["h20-3e-trainer-readiness"]


def test_a_run_and_its_prebuilt_workload_are_always_in_the_same_shard() -> None:
    # 3 objects a shard: one run and its Workload fit, a second pair would not
    split = built(limits(3), "flux")
    runs = [m for m in split.manifests if m.obj["metadata"].get("labels", {}).get(PREBUILT_LABEL)]
    runs = [m for m in runs if m.kind != "Workload"]
    assert len(runs) == 42
    folders = {m.name: m.folder for m in split.manifests if m.kind == "Workload"}
    for run in runs:
        label = run.obj["metadata"]["labels"][PREBUILT_LABEL]
        assert folders[label] == run.folder and "/shard-" in run.folder


Replayed = tuple[tuple[int | None, int | None], frozenset[str], bool, bool]


def replayed(found: Built) -> dict[str, Replayed]:
    """Per run (by name): its expected start and end, the runs that finish before it
    starts, whether the engine waits for it and whether the end of the plan reports it."""
    replay = replay_manifests_of(found.manifests, found.plan)
    gating = replay.gating
    names = {r.source.path: r.source.name for r in replay.runs}
    before = gating.before(names)
    return {
        name: (
            replay.expected.runs[path],
            frozenset(names[p] for p in before.get(gating.step_of[path], frozenset())),
            gating.waited(path),
            path in gating.unreported,
        )
        for path, name in names.items()
    }


@pytest.mark.parametrize("engine", ["flux", "argocd"])
def test_a_sharded_tree_runs_in_the_order_and_at_the_times_of_the_unsharded_one(
    engine: str,
) -> None:
    split = built(limits(STEP_OBJECTS - 1), engine)
    assert any("/shard-" in m.folder for m in split.manifests)
    runs = replayed(split)
    assert runs == replayed(built(limits(100_000), engine))
    assert len(runs) == 42
    # round 2 of the single-node stage waits for all 10 runs of round 1, in both shards
    (gate,) = {
        gate for name, (_, gate, _, _) in runs.items() if "-r2-" in name and "single" in name
    }
    assert len(gate) == 10 and all("-r1-" in name for name in gate)


@pytest.mark.parametrize("engine", ["flux", "argocd"])
def test_nvcre_mode_shards_its_steps_and_runs_them_in_the_same_order(engine: str) -> None:
    # NVCRE mode: a Certification and 2 WorkloadRuns, then 4 WorkloadRuns (NVCRE runs the
    # groups); at two objects a unit each stage is split, its runs kept in order
    split = built(limits(2), engine, site=LAB)
    shards = folder_of(split, "02-two-node")
    assert shards == [f"02-two-node/shard-{i:02d}" for i in range(2)]
    assert replayed(split) == replayed(built(limits(100_000), engine, site=LAB))
    assert (
        built(engine_facts(), engine, site=LAB).manifests
        == built(limits(100_000), engine, site=LAB).manifests
    )


def test_plan_counts_the_flux_shards_a_step_holds_at_once_and_warns_past_concurrent() -> None:
    def view(found: Built) -> PlanView:
        return plan_view(replay_manifests_of(found.manifests, found.plan))

    def workers(found: Built) -> int | None:
        load = view(found).load
        assert load is not None
        return load.flux_workers

    assert workers(built(engine_facts(), "flux")) == 1
    assert workers(built(limits(STEP_OBJECTS - 1), "flux")) == 2  # two shards at once
    # 4 objects a shard: a single-node round is 5 shards, past Flux's 4 workers
    crowded = view(built(limits(4), "flux"))
    assert crowded.load is not None and crowded.load.flux_workers == 5
    (flux,) = [line for line in engine_lines(crowded) if line.startswith("Flux workers")]
    assert flux.startswith("Flux workers: 5 of kustomize-controller's 4")
    assert "every worker" in flux


# --- Argo CD -----------------------------------------------------------------------------


def readiness_objects(found: Built) -> int:
    return sum(m.component == "readiness" for m in found.manifests)


def test_the_readiness_application_at_the_limit_is_kept_and_one_more_makes_a_parent() -> None:
    plain = built(engine_facts())
    total = readiness_objects(plain)
    assert built(limits(total)).manifests == plain.manifests  # at the limit: as today
    parent_tree = built(limits(total - 1))
    parent = named(parent_tree, "Application", "h20-3e-trainer-readiness")
    assert parent["spec"]["source"]["path"] == "out/h20-3e-trainer/readiness"
    assert "directory" not in parent["spec"]["source"]  # the top of readiness/ only
    assert "automated" not in parent["spec"]["syncPolicy"]  # trigger: manual
    assert parent["spec"]["info"][1] == {
        "name": "children",
        "value": "after a window, `argocd app delete -l nvcregen.io/parent="
        "h20-3e-trainer-readiness -y` (runs are kept) until the next sync starts one",
    }
    children = sorted(
        (
            m
            for m in parent_tree.manifests
            if m.kind == "Application" and m.component == "readiness"
        ),
        key=lambda m: int(m.obj["metadata"]["annotations"]["argocd.argoproj.io/sync-wave"]),
    )
    waves = [
        (
            m.obj["metadata"]["annotations"]["argocd.argoproj.io/sync-wave"],
            m.obj["spec"]["source"]["path"],
        )
        for m in children
    ]
    base = "out/h20-3e-trainer/readiness"
    assert waves == [
        ("0", f"{base}/00-common"),
        ("1", f"{base}/01-single-node/round-1"),
        ("2", f"{base}/01-single-node/round-2"),
        ("3", f"{base}/01-single-node/round-3"),
        ("4", f"{base}/02-two-node/round-1"),
        ("5", f"{base}/02-two-node/round-2"),
        ("6", f"{base}/02-two-node/round-3"),
        ("7", f"{base}/03-passed"),
    ]
    sources = [child.source for child in children]
    stages = ["/spec/readiness/stages/0"] * 3 + ["/spec/readiness/stages/1"] * 3
    assert sources == ["/spec/readiness", *stages, "/spec/readiness"]  # where NVC677 lands
    for child in children:
        assert child.folder == "" and child.obj["metadata"]["namespace"] == "argocd"
        assert child.obj["metadata"]["labels"][PARENT] == "h20-3e-trainer-readiness"
        spec = child.obj["spec"]
        assert spec["project"] == parent["spec"]["project"]
        assert spec["destination"] == parent["spec"]["destination"]
        assert spec["source"]["repoURL"] == parent["spec"]["source"]["repoURL"]
        assert spec["source"]["targetRevision"] == "main"
        assert spec["syncPolicy"]["automated"] == {"prune": False, "selfHeal": False}
        assert spec["syncPolicy"]["syncOptions"] == parent["spec"]["syncPolicy"]["syncOptions"]
    within(parent_tree, limits(total - 1))


@pytest.mark.parametrize("figure", ["manifests", "status"])
def test_the_readiness_application_at_a_byte_limit_is_kept_and_one_byte_less_splits_it(
    figure: str,
) -> None:
    plain = built(engine_facts())
    tree = [TreeObject(p, p, m.obj) for p, m in paths(plain).items()]
    (unit,) = [
        u for u in gitops_units(tree, "out/h20-3e-trainer", limits()) if u.folder == "readiness"
    ]
    exact = unit.manifest_bytes if figure == "manifests" else unit.status_bytes
    assert exact == (
        sum(
            object_bytes(TreeObject(p, p, m.obj), engine_facts())[0]
            for p, m in paths(plain).items()
            if m.component == "readiness"
        )
        if figure == "manifests"
        else readiness_objects(plain) * engine_facts().argocd_status_per_resource
    )
    at = built(limits(**{figure: f"{exact}B"}))  # type: ignore[arg-type]
    assert at.manifests == plain.manifests
    under = built(limits(**{figure: f"{exact - 1}B"}))  # type: ignore[arg-type]
    assert named(under, "Application", "h20-3e-trainer-readiness-00-common")


def test_argo_cd_children_of_a_split_step_each_read_a_shard_in_the_steps_wave() -> None:
    found = built(limits(STEP_OBJECTS - 1))
    shards = {
        m.name: (
            m.obj["metadata"]["annotations"]["argocd.argoproj.io/sync-wave"],
            m.obj["spec"]["source"]["path"],
        )
        for m in found.manifests
        if m.kind == "Application" and "01-single-node-r1" in m.name
    }
    base = f"out/h20-3e-trainer/readiness/{SINGLE_ROUND}"
    assert shards == {
        "h20-3e-trainer-readiness-01-single-node-r1-s00": ("1", f"{base}/shard-00"),
        "h20-3e-trainer-readiness-01-single-node-r1-s01": ("1", f"{base}/shard-01"),
    }
    within(found, limits(STEP_OBJECTS - 1))


def test_on_sync_children_prune_and_heal_as_the_readiness_application_would() -> None:
    found = built(limits(STEP_OBJECTS - 1), trigger="on-sync")
    parent = named(found, "Application", "h20-3e-trainer-readiness")
    child = named(found, "Application", "h20-3e-trainer-readiness-01-single-node-r1-s00")
    assert parent["spec"]["syncPolicy"]["automated"] == {"prune": True, "selfHeal": True}
    assert child["spec"]["syncPolicy"]["automated"] == {"prune": True, "selfHeal": True}
    assert [i["name"] for i in parent["spec"].get("info", [])] == []  # nothing to end


def test_the_project_allows_the_children_and_argocd_cm_checks_applications() -> None:
    found = built(limits(STEP_OBJECTS - 1))
    project = named(found, "AppProject", "h20-3e-trainer")
    assert {"server": "https://kubernetes.default.svc", "namespace": "argocd"} in project["spec"][
        "destinations"
    ]
    assert "namespaceResourceWhitelist" not in project["spec"]  # every namespaced kind
    assert "namespaceResourceBlacklist" not in project["spec"]
    (cm,) = [m.obj for m in found.manifests if m.name == "argocd-cm"]
    assert "resource.customizations.health.argoproj.io_Application" in cm["data"]
    # and the render gate (NVC680: every object against its project) finds nothing
    assert [d for d in _gate(found) if d.is_error] == []


def _gate(found: Built) -> list[Diagnostic]:
    from nvcregen.check.gate import check_manifests

    return check_manifests(found.manifests, found.plan)


# --- Refused ----------------------------------------------------------------------------


def refused(facts: EngineFacts, engine: str, monkeypatch: pytest.MonkeyPatch) -> list[Diagnostic]:
    """NVC677 of the render gate's replay, with `facts` as catalog/engines.yaml."""
    monkeypatch.setattr("nvcregen.replay.site.engine_facts", lambda: facts)
    found = built(facts, engine)
    diags = replay_manifests(found.manifests, found.plan)
    # the other layers' units are the site's whole platform or GitOps folder: left out
    return [d for d in diags if d.code == "NVC677" and d.path != "/spec/gitops"]


def test_a_run_and_workload_no_unit_can_hold_is_refused_at_its_stage(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # one object a unit: a run and its prebuilt Workload never fit (Flux: no parent)
    found = refused(limits(1), "flux", monkeypatch)
    assert {d.path for d in found} == {"/spec/readiness/stages/0", "/spec/readiness/stages/1"}
    stage = next(d for d in found if d.path == "/spec/readiness/stages/0")
    assert stage.is_error and stage.span.line == _line("  - name: single-node")
    assert "applies 2 objects" in stage.message
    assert refused(limits(2), "flux", monkeypatch) == []  # a pair a shard: held


def test_a_parent_with_more_children_than_a_unit_holds_is_refused_at_the_pools_nodes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # 8 objects a unit: 00-common and each two-node round fit, each single-node round is
    # 3 shards (8, 8, 4): 9 + 3 + 2 children, 14 > 8
    (found,) = refused(limits(8), "argocd", monkeypatch)
    assert found.path == "/spec/nodePools/0/nodes" and found.is_error
    assert "Application h20-3e-trainer-readiness applies 14 objects" in found.message
    assert found.span.line == _line("nodes: [node-a, node-b]")
    assert refused(limits(14), "argocd", monkeypatch) == []  # 14 children: held


def _line(needle: str) -> int:
    lines = site_text().splitlines()
    return next(i for i, line in enumerate(lines, start=1) if needle in line)


def test_sizes_are_the_objects_as_written() -> None:
    # the labels and source annotation render adds count: the sizes are the written text's
    found = built(engine_facts(), "flux")
    m = next(m for m in found.manifests if m.folder == SINGLE_ROUND)
    assert m.obj["metadata"]["annotations"]["nvcregen.io/source"].startswith(TRAINER)
    path = manifest_path(m)
    assert object_bytes(TreeObject(path, path, m.obj), engine_facts())[0] == len(
        json.dumps(m.obj, separators=(",", ":"))
    )


# --- Replay of a sharded tree -------------------------------------------------------------


def tree_of(found: Built) -> list[TreeObject]:
    return [TreeObject(p, p, m.obj) for p, m in paths(found).items()]


def test_units_measure_the_parent_by_its_children_and_each_child_by_its_shard() -> None:
    found = built(limits(STEP_OBJECTS - 1))
    units = {u.owner.name: u for u in gitops_units(tree_of(found), "out/h20-3e-trainer", limits())}
    assert units["h20-3e-trainer-readiness"].objects == 11  # 8 children, 3 rounds split in 2
    assert units["h20-3e-trainer-readiness"].folder == "readiness"
    shard = units["h20-3e-trainer-readiness-01-single-node-r1-s00"]
    assert (shard.folder, shard.objects) == (f"readiness/{SINGLE_ROUND}/shard-00", 18)
    assert units["h20-3e-trainer-readiness-02-two-node-r1"].objects == 8


def test_without_argo_cds_application_check_the_children_overlap_and_it_is_said() -> None:
    found = built(limits(STEP_OBJECTS - 1))
    key = "resource.customizations.health.argoproj.io_Application"

    def without(obj: dict[str, Any]) -> dict[str, Any]:
        if obj["kind"] == "ConfigMap" and obj["metadata"]["name"] == "argocd-cm":
            return {**obj, "data": {k: v for k, v in obj["data"].items() if k != key}}
        return obj

    tree = [TreeObject(t.file, t.path, without(dict(t.obj))) for t in tree_of(found)]
    replay = replay_site(tree, found.plan.facts)
    overlapping = [p for p in replay.problems if p.code == "NVC672"]
    assert overlapping  # round 2 no longer waits for round 1
    assert "does not wait for" in overlapping[0].message
    unreported = replay.gating.unreported
    assert len(unreported) == 42  # nothing waits for a child's last (only) wave
    assert replay_site(tree_of(found), found.plan.facts).problems == ()


def test_a_parent_is_refused_at_the_largest_pools_nodes() -> None:
    site = built(engine_facts()).plan.site
    (pool,) = site.spec.node_pools
    larger = pool.model_copy(update={"name": "big", "nodes": ["n-1", "n-2", "n-3"]})
    counted = pool.model_copy(update={"nodes": None, "selector": {"a": "b"}, "node_count": 9})
    two = site.model_copy(
        update={"spec": site.spec.model_copy(update={"node_pools": [pool, larger]})}
    )
    assert parent_source(two) == "/spec/nodePools/1/nodes"
    ties = [pool, pool.model_copy(update={"name": "twin"})]
    tied = site.model_copy(update={"spec": site.spec.model_copy(update={"node_pools": ties})})
    assert parent_source(tied) == "/spec/nodePools/0/nodes"  # the first of equals
    by_count = site.model_copy(
        update={"spec": site.spec.model_copy(update={"node_pools": [larger, counted]})}
    )
    assert parent_source(by_count) == "/spec/nodePools/1/nodeCount"


def test_children_applying_each_other_are_replayed_without_looping() -> None:
    # a hand-edited tree: two children read the top of readiness/, where each other sits
    found = built(limits(STEP_OBJECTS - 1))
    looped = {
        "h20-3e-trainer-readiness-01-single-node-r1-s00",
        "h20-3e-trainer-readiness-01-single-node-r1-s01",
    }

    def edit(obj: dict[str, Any]) -> dict[str, Any]:
        if obj["kind"] != "Application" or obj["metadata"]["name"] not in looped:
            return obj
        source = {**obj["spec"]["source"], "path": "out/h20-3e-trainer/readiness"}
        return {**obj, "spec": {**obj["spec"], "source": source}}

    tree = [TreeObject(t.file, t.path, edit(dict(t.obj))) for t in tree_of(found)]
    replay = replay_site(tree, found.plan.facts)
    assert len(replay.runs) == 42
    # the round's 10 runs are applied by no Application: said, never a loop
    assert len(replay.gating.unwaited) == 10
    assert {"NVC672", "NVC673"} <= {p.code for p in replay.problems}


@pytest.mark.parametrize("engine", ["flux", "argocd"])
def test_shard_names_of_a_long_site_name_stay_label_values_and_unique(engine: str) -> None:
    long = "h20-3e-trainer-long-site-name-32"  # a site name's 32 characters: steps' 60
    assert len(long) == 32
    text = site_text(engine).replace("  name: h20-3e-trainer\n", f"  name: {long}\n")
    text = text.replace("path: out/h20-3e-trainer", f"path: out/{long}")
    found = build_site(text.encode(), TRAINER, load_catalog(), Options(root=ROOT), limits(19))
    assert isinstance(found, Built), getattr(found, "diagnostics", None)
    kind = "Kustomization" if engine == "flux" else "Application"
    names = [m.name for m in found.manifests if m.kind == kind]
    shards = [n for n in names if n.startswith(f"{long}-readiness-01-single")]
    assert len(shards) == 6 and len(set(names)) == len(names)  # 3 rounds, 2 shards each
    plain = f"{long}-readiness-01-single-node-r1-s00"  # 64 characters
    assert len(plain) == 64 and plain not in names
    assert all(len(n) <= 63 for n in names)  # cut, with a hash, to a label value
