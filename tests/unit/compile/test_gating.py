"""Readiness stages in order: steps, Argo CD waves and final gate, the Flux chain, the trigger."""

from __future__ import annotations

import dataclasses
import itertools
import json
import re
from collections import defaultdict
from typing import Any

import pytest
from sitefactory import FILE, catalog, edit, parse, plan_of, site_yaml
from trainerfactory import ROOT, trainer_text

from nvcregen.check.objectcheck import object_findings
from nvcregen.check.replayed import replay_manifests_of
from nvcregen.compile.gitops import timing
from nvcregen.compile.gitops.common import LAYERS
from nvcregen.compile.gitops.healthchecks import COMPANION_CHECKS, WORKLOAD, check_for
from nvcregen.compile.gitops.steps import (
    COMMON_FOLDER,
    SYNC_WAVE,
    is_companion,
    is_run,
    place_runs,
    plan_steps,
)
from nvcregen.compile.gitops.timing import timed_steps
from nvcregen.compile.layers import site_manifests
from nvcregen.compile.postprocess import postprocess
from nvcregen.core import units
from nvcregen.core.kueuekeys import PREBUILT_LABEL
from nvcregen.core.manifest import Manifest
from nvcregen.emit.naming import manifest_path
from nvcregen.engines.gitops.argocd.health import ARGOCD_CM_SYNC, argocd_health_keys, argocd_key
from nvcregen.engines.gitops.flux.chain import health_expr, step_kustomization_name
from nvcregen.plan.requeue import deactivation_ms
from nvcregen.plan.resolve import plan
from nvcregen.replay.context import Context
from nvcregen.replay.model import TreeObject
from nvcregen.replay.report import render_plans
from nvcregen.replay.simulate import Case, Timeline
from nvcregen.replay.site import replay_context, replay_site
from nvcregen.replay.timeline import StepRow, plan_view, step_worst_ms
from nvcregen.spec.v1alpha1 import Site

REPO = "https://git.example.com/gpu/readiness.git"
LABEL_VALUE_MAX = 63


def site_text(
    engine: str = "argocd", *, trigger: str = "manual", mode: str = "nvcre", rounds: int = 2
) -> str:
    """The factory site with a GitOps engine, a trigger and (optionally) trainer mode."""
    text = edit(
        site_yaml(rounds=rounds), "  readiness:\n", f"  readiness:\n    trigger: {trigger}\n"
    )
    text = trainer_text(text) if mode == "trainer" else text
    return text + f"  gitops:\n    engine: {engine}\n    repoURL: {REPO}\n"


def build(text: str) -> tuple[Site, list[Manifest]]:
    """Every layer of a site, labelled as rendered."""
    site, _ = parse(text)
    found = site_manifests(plan_of(site), ROOT)
    return site, postprocess(found, site, FILE)


def readiness(found: list[Manifest]) -> list[Manifest]:
    return [m for m in found if m.component == "readiness"]


def runs(found: list[Manifest]) -> list[Manifest]:
    return [m for m in readiness(found) if is_run(m)]


def wave(manifest: Manifest) -> int:
    return int(manifest.obj["metadata"].get("annotations", {}).get(SYNC_WAVE, "0"))


def kustomizations(found: list[Manifest]) -> dict[str, dict[str, Any]]:
    return {m.name: m.obj["spec"] for m in found if m.kind == "Kustomization"}


# --- Steps and Argo CD waves -------------------------------------------------------------


def test_nvcre_mode_has_one_step_per_stage() -> None:
    site, _ = parse(site_text(rounds=3))
    steps = plan_steps(site, plan(site, catalog()))
    assert [(s.number, s.stage, s.round, s.folder) for s in steps] == [
        (1, "node", None, "01-node"),
        (2, "fabric", None, "02-fabric"),
    ]
    assert [[c.kind for c in s.checks] for s in steps] == [
        ["Certification", "WorkloadRun"],
        ["Certification"],
    ]


def test_nvcre_runs_are_in_their_stage_folder_and_wave() -> None:
    _, found = build(site_text())
    placed = runs(found)
    assert {m.kind for m in placed} == {"Certification", "WorkloadRun"}
    for manifest in placed:
        stage = manifest.obj["metadata"]["labels"]["nvcregen.io/stage"]
        number = {"node": 1, "fabric": 2}[stage]
        assert wave(manifest) == number
        assert manifest.folder == f"0{number}-{stage}"
        assert manifest_path(manifest).startswith(f"readiness/0{number}-{stage}/")


def test_trainer_mode_has_one_step_per_stage_and_round() -> None:
    _, found = build(site_text(mode="trainer", rounds=3))
    placed = runs(found)
    assert {m.kind for m in placed} == {"TrainJob", "Job"}
    for manifest in placed:
        labels = manifest.obj["metadata"]["labels"]
        stage = {"node": 0, "fabric": 1}[labels["nvcregen.io/stage"]]
        round_ = int(labels["nvcregen.io/round"])
        assert wave(manifest) == stage * 3 + round_
        assert manifest.folder.endswith(f"/round-{round_}")


def test_rounds_of_one_test_never_share_a_wave() -> None:
    _, found = build(site_text(mode="trainer", rounds=3))
    waves: dict[tuple[str, str], dict[int, set[int]]] = defaultdict(lambda: defaultdict(set))
    for manifest in runs(found):
        labels = manifest.obj["metadata"]["labels"]
        test = (labels["nvcregen.io/stage"], labels["nvcregen.io/test"])
        waves[test][int(labels["nvcregen.io/round"])].add(wave(manifest))
    assert len(waves) == 3  # node: dcgm-l1, nccl-all-reduce; fabric: nccl-all-reduce
    for by_round in waves.values():
        assert sorted(by_round) == [1, 2, 3]
        for earlier, later in itertools.pairwise(sorted(by_round)):
            assert max(by_round[earlier]) < min(by_round[later])


@pytest.mark.parametrize("mode", ["nvcre", "trainer"])
def test_what_runs_need_is_applied_before_every_step(mode: str) -> None:
    _, found = build(site_text(mode=mode))
    common = [m for m in readiness(found) if m.folder == COMMON_FOLDER]
    kinds = {m.kind for m in common}
    assert "ConfigMap" in kinds  # the plan: the folder is never empty
    # NVCRE mode: a LogProfile only for NCCL WorkloadRuns, which the factory site has none of.
    assert kinds - {"ConfigMap"} == (set() if mode == "nvcre" else {"TrainingRuntime"})
    assert all(wave(m) <= 0 for m in common)
    assert min(wave(m) for m in runs(found)) == 1
    assert not any(is_run(m) for m in common)


def test_the_plan_lists_every_step_and_its_runs() -> None:
    _, found = build(site_text(mode="trainer", rounds=2))
    (plan_map,) = [m.obj for m in found if m.name == "lab-readiness-plan"]
    text = plan_map["data"]["steps"]
    folders = re.findall(r"^(\S+): step (\d+)", text, flags=re.M)
    assert folders == [
        ("01-node/round-1", "1"),
        ("01-node/round-2", "2"),
        ("02-fabric/round-1", "3"),
        ("02-fabric/round-2", "4"),
    ]
    for manifest in runs(found):
        assert f"  {manifest.kind}/{manifest.name}\n" in text
    assert plan_map["data"]["trigger"] == "manual"


@pytest.mark.parametrize("mode", ["nvcre", "trainer"])
def test_argocd_final_gate_is_one_wave_after_the_last_step(mode: str) -> None:
    """Argo CD does not wait on its last wave: the gate makes the last step's health count."""
    _, found = build(site_text(mode=mode))
    (gate,) = [m for m in readiness(found) if m.name == "lab-readiness-passed"]
    last = max(wave(m) for m in runs(found))
    assert wave(gate) == last + 1
    assert [m for m in readiness(found) if wave(m) == last + 1] == [gate]
    assert gate.kind == "ConfigMap"
    assert gate.folder == "03-passed"
    assert check_for("v1", "ConfigMap") is None  # no health check: done once applied


def test_the_gate_names_the_plan_that_passed() -> None:
    _, two = build(site_text(rounds=2))
    _, three = build(site_text(rounds=3))
    digests = [
        next(m.obj["data"]["plan"] for m in found if m.name == "lab-readiness-passed")
        for found in (two, three)
    ]
    assert digests[0] != digests[1]


def test_flux_has_no_final_gate() -> None:
    _, found = build(site_text("flux"))
    assert not [m for m in found if m.name == "lab-readiness-passed"]
    assert not [m for m in found if m.name == "argocd-cm"]


def test_a_run_outside_every_step_is_a_bug() -> None:
    site, found = build(site_text())
    steps = plan_steps(site, plan(site, catalog()))
    (cert, *_) = [m for m in runs(found) if m.kind == "Certification"]
    stray = Manifest(cert.obj, "readiness", "/spec/readiness/stages/7")
    with pytest.raises(ValueError, match="belongs to no readiness step"):
        place_runs([stray], steps)


# --- Flux: one Kustomization per step ------------------------------------------------------


@pytest.mark.parametrize("mode", ["nvcre", "trainer"])
def test_flux_chains_one_kustomization_per_step(mode: str) -> None:
    site, found = build(site_text("flux", mode=mode))
    planned = plan_of(site)
    placed = [m for m in found if m.component in {"readiness", "queues"}]
    steps = timed_steps(planned, plan_steps(site, planned.units), placed)
    specs = kustomizations(found)
    previous = "lab-readiness"
    for step in steps:
        name = step_kustomization_name(site, step)
        spec = specs[name]
        assert spec["dependsOn"] == [{"name": previous}]
        assert spec["path"] == f"./readiness/{step.folder}"  # in the site's artifact
        assert spec["wait"] is True
        assert spec["timeout"] == step.timeout
        assert "suspend" not in spec
        in_folder = {
            (m.obj["apiVersion"], m.kind)
            for m in readiness(found)
            if m.folder == step.folder and (is_run(m) or is_companion(m))
        }
        assert {(e["apiVersion"], e["kind"]) for e in spec["healthCheckExprs"]} == in_folder
        for entry in spec["healthCheckExprs"]:
            check = check_for(entry["apiVersion"], entry["kind"]) or check_for(
                entry["apiVersion"], entry["kind"], COMPANION_CHECKS
            )
            assert check is not None
            assert entry == health_expr(check)
        # trainer mode with Kueue: each run's Workload fails the step once Kueue gives up
        assert (health_expr(WORKLOAD) in spec["healthCheckExprs"]) is (mode == "trainer")
        previous = name
    layers = {n for n in specs if n.removeprefix("lab-") in LAYERS}
    assert "lab-readiness" in layers
    assert set(specs) - layers == {"lab-gitops", *(step_kustomization_name(site, s) for s in steps)}


def test_flux_head_applies_the_common_folder_after_the_gitops_objects() -> None:
    _, found = build(site_text("flux"))
    specs = kustomizations(found)
    head = specs["lab-readiness"]
    assert head["path"] == "./readiness/00-common"
    assert head["dependsOn"] == [{"name": "lab-monitoring"}, {"name": "lab-gitops"}]
    gitops = specs["lab-gitops"]
    assert gitops["path"] == "./gitops"
    assert "dependsOn" not in gitops
    assert "suspend" not in gitops


def test_every_step_folder_holds_exactly_its_runs() -> None:
    """A Kustomization applies every file under its path: folders must not nest steps."""
    _, found = build(site_text("flux", mode="trainer", rounds=2))
    paths = {s["path"].removeprefix("./") for s in kustomizations(found).values()}
    files = [manifest_path(m) for m in readiness(found)]
    for path in paths:
        for other in paths - {path}:
            assert not other.startswith(path + "/"), f"{other} is inside {path}"
    for file in files:
        owners = [p for p in paths if file.startswith(p + "/")]
        assert len(owners) == 1, file


def test_step_kustomization_names_fit_a_label_value() -> None:
    long_site = "s" * 32
    long_stage = "t" * 32
    text = site_text("flux", mode="trainer", rounds=12)
    text = edit(text, "name: lab\n", f"name: {long_site}\n")
    text = edit(text, "- name: fabric\n", f"- name: {long_stage}\n")
    site, found = build(text)
    names = [step_kustomization_name(site, s) for s in plan_steps(site, plan(site, catalog()))]
    assert all(len(n) <= LABEL_VALUE_MAX for n in names)
    assert len(set(names)) == len(names)
    assert set(names) <= set(kustomizations(found))


@pytest.mark.parametrize("engine", ["argocd", "flux"])
def test_gitops_objects_validate_against_the_vendored_crds(engine: str) -> None:
    _, found = build(site_text(engine, mode="trainer"))
    for manifest in found:
        if manifest.component in {"gitops", "readiness"} or manifest.name == "argocd-cm":
            assert object_findings(manifest.obj, kube_version="1.30") == [], manifest.name


# --- The manual trigger --------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["nvcre", "trainer"])
def test_flux_manual_trigger_suspends_only_the_head(mode: str) -> None:
    _, found = build(site_text("flux", mode=mode))
    suspended = sorted(n for n, s in kustomizations(found).items() if s.get("suspend"))
    assert suspended == ["lab-readiness"]
    _, on_sync = build(site_text("flux", trigger="on-sync", mode=mode))
    assert not [n for n, s in kustomizations(on_sync).items() if s.get("suspend")]


def test_argocd_manual_trigger_never_syncs_readiness_by_itself() -> None:
    _, found = build(site_text())
    (app,) = [m.obj for m in found if m.name == "lab-readiness" and m.kind == "Application"]
    assert "automated" not in app["spec"]["syncPolicy"]
    assert app["spec"]["source"]["directory"] == {"recurse": True}  # every step folder
    _, on_sync = build(site_text(trigger="on-sync"))
    (auto,) = [m.obj for m in on_sync if m.name == "lab-readiness" and m.kind == "Application"]
    assert auto["spec"]["syncPolicy"]["automated"]["selfHeal"] is True


# --- Timeouts ------------------------------------------------------------------------------


def _step_rows(site: Site, found: list[Manifest]) -> dict[str, StepRow]:
    """The replay's timeline of a built site, by step folder (what `nvcregen plan` shows)."""
    view = plan_view(replay_manifests_of(found, plan_of(site)))
    return {row.name: row for row in view.steps}


def _step_timeouts(site: Site, found: list[Manifest]) -> dict[str, int]:
    steps = plan_steps(site, plan(site, catalog()))
    specs = kustomizations(found)
    return {
        s.folder: units.parse_duration(specs[step_kustomization_name(site, s)]["timeout"])
        for s in steps
    }


@pytest.mark.parametrize("mode", ["nvcre", "trainer"])
def test_a_flux_step_waits_as_long_as_its_worst_case_rounded_up_to_a_minute(mode: str) -> None:
    site, found = build(site_text("flux", mode=mode, rounds=3))
    rows = _step_rows(site, found)
    timeouts = _step_timeouts(site, found)
    assert set(timeouts) == set(rows)
    for folder, timeout in timeouts.items():
        worst = rows[folder].worst_ms
        expected = rows[folder].expected_ms
        assert worst is not None and expected is not None
        assert worst <= timeout < worst + 60_000, folder
        assert timeout % 60_000 == 0
        assert timeout > expected  # NVC676 never fires on nvcregen's own


def test_retests_multiply_the_step_timeout() -> None:
    text = site_text("flux", rounds=3)
    site, found = build(text)
    retest, found_2 = build(edit(text, "gpuHours: 500}", "gpuHours: 500, retests: 1}"))
    rows = _step_rows(site, found)
    for folder, timeout in _step_timeouts(retest, found_2).items():
        worst = rows[folder].worst_ms
        assert worst is not None
        assert 2 * worst <= timeout < 2 * worst + 60_000


def test_one_job_at_a_time_lengthens_the_step_timeout() -> None:
    """The timeout follows the schedule: a step whose jobs queue one by one waits longer."""
    text = site_text("flux", rounds=3)
    site, found = build(text)
    serial, found_1 = build(edit(text, "maxConcurrentJobs: 2", "maxConcurrentJobs: 1"))
    two, one = _step_timeouts(site, found), _step_timeouts(serial, found_1)
    assert any(one[f] > two[f] for f in two)
    assert all(one[f] >= two[f] for f in two)


def test_step_timeouts_round_up_to_a_whole_minute_at_least_one() -> None:
    site, found = build(site_text("flux"))
    planned = plan_of(site)
    steps = plan_steps(site, planned.units)
    placed = [m for m in found if m.component in {"readiness", "queues"}]
    folder = steps[0].folder

    def timed(worst_ms: int) -> int | None:
        fixed = {folder: worst_ms}
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(timing, "worst_step_ms", lambda *_: fixed)
            return timed_steps(planned, steps, placed)[0].timeout_ms

    assert timed(0) == 60_000
    assert steps[0].timeout_ms is None
    with pytest.raises(ValueError, match="has no timeout yet"):
        _ = steps[0].timeout
    assert timed(60_000) == 60_000
    assert timed(60_001) == 120_000
    assert timed(119_999) == 120_000


# --- Argo CD health checks, installed by the platform layer --------------------------------


def test_argocd_cm_patch_holds_only_the_health_checks() -> None:
    _, found = build(site_text())
    (patch,) = [m for m in found if m.name == "argocd-cm"]
    assert (patch.component, patch.owned) == ("platform", False)
    meta = patch.obj["metadata"]
    assert (meta["namespace"], patch.kind) == ("argocd", "ConfigMap")
    assert meta["labels"] == {"app.kubernetes.io/part-of": "argocd"}  # no nvcregen labels
    assert meta["annotations"] == {"argocd.argoproj.io/sync-options": ARGOCD_CM_SYNC}
    assert set(ARGOCD_CM_SYNC.split(",")) == {"ServerSideApply=true", "Prune=false", "Delete=false"}
    assert patch.obj["data"] == argocd_health_keys()
    assert set(patch.obj) == {"apiVersion", "kind", "metadata", "data"}


def test_every_run_kind_has_an_argocd_key_and_a_flux_expression() -> None:
    keys = argocd_health_keys()
    for mode in ("nvcre", "trainer"):
        _, found = build(site_text(mode=mode))
        for manifest in runs(found):
            check = check_for(manifest.obj["apiVersion"], manifest.kind)
            assert check is not None
            assert argocd_key(check) in keys


# --- prebuilt Workloads (trainer mode with Kueue) -------------------------------------------


@pytest.mark.parametrize("engine", ["argocd", "flux"])
def test_each_runs_workload_is_in_its_step_folder_and_wave(engine: str) -> None:
    """Argo CD gates the wave, Flux the step, on the Workload: it must be applied with its run."""
    _, found = build(site_text(engine, mode="trainer", rounds=2))
    placed = readiness(found)
    workloads = {m.name: m for m in placed if m.kind == "Workload"}
    trainer_runs = [m for m in runs(found) if m.kind in {"TrainJob", "Job"}]
    assert trainer_runs
    assert set(workloads) == {f"{m.name}-workload" for m in trainer_runs}
    for run in trainer_runs:
        workload = workloads[f"{run.name}-workload"]
        assert workload.folder == run.folder
        assert wave(workload) == wave(run)
        assert run.obj["metadata"]["labels"][PREBUILT_LABEL] == workload.name
        assert not is_run(workload)  # no step counts it, the plan does not list it


def test_the_plan_lists_runs_not_their_workloads() -> None:
    _, found = build(site_text(mode="trainer"))
    (plan_map,) = [m for m in found if m.name == "lab-readiness-plan"]
    assert "Workload/" not in plan_map.obj["data"]["steps"]
    assert "TrainJob/" in plan_map.obj["data"]["steps"]


def test_argocd_knows_the_workload_check() -> None:
    assert argocd_key(WORKLOAD) in argocd_health_keys()
    assert argocd_key(WORKLOAD) == "resource.customizations.health.kueue.x-k8s.io_Workload"


# --- holds sync: the longest a stuck step holds its sync ------------------------------------


def test_argocd_holds_a_trainer_step_until_kueue_deactivates_a_stuck_run() -> None:
    """Prebuilt Workloads end the sync: the step's worst case plus Kueue's time to give up."""
    site, found = build(site_text(mode="trainer"))
    test_units = plan(site, catalog())
    gives_up = deactivation_ms(site, test_units)
    rows = _step_rows(site, found)
    assert rows
    for row in rows.values():
        assert row.step_timeout_ms is None  # Argo CD has no sync timeout
        assert row.worst_ms is not None
        assert row.holds_ms == row.worst_ms + gives_up
        assert row.holds_queued  # a run Kueue never admits still holds it


def test_argocd_holds_without_limit_when_nothing_tells_a_deactivated_run() -> None:
    off = edit(site_text(mode="trainer"), "  nodePools:\n", PREBUILT_OFF + "  nodePools:\n")
    for text in (off, site_text(mode="nvcre")):
        site, found = build(text)
        for row in _step_rows(site, found).values():
            assert (row.holds_ms, row.holds_queued) == (None, False)


def test_argocd_holds_without_limit_unless_the_tree_shows_it_the_deactivation() -> None:
    """The bound needs its evidence in the tree: each run's Workload, and argocd-cm's check."""
    site, found = build(site_text(mode="trainer"))
    (config,) = [m for m in found if m.name == "argocd-cm"]
    data = {k: v for k, v in config.obj["data"].items() if k != argocd_key(WORKLOAD)}
    unchecked = [
        dataclasses.replace(m, obj={**m.obj, "data": data}) if m is config else m for m in found
    ]
    without_workloads = [m for m in found if m.kind != "Workload"]
    gone = next(m for m in found if m.kind == "Workload")  # one run's Workload
    one_missing = [m for m in found if m is not gone]
    for tree in (unchecked, without_workloads):
        for row in _step_rows(site, tree).values():
            assert (row.holds_ms, row.holds_queued) == (None, False)
    rows = _step_rows(site, one_missing)
    unbounded = {name for name, row in rows.items() if row.holds_ms is None}
    assert unbounded == {gone.folder}  # its step alone: the others keep their bound
    assert len(rows) > 1


def test_flux_holds_a_step_for_its_timeout() -> None:
    site, found = build(site_text("flux", mode="trainer"))
    timeouts = _step_timeouts(site, found)
    for name, row in _step_rows(site, found).items():
        assert (row.holds_ms, row.holds_queued) == (timeouts[name], False)


PREBUILT_OFF = "  dependencies:\n    kueue: {prebuiltWorkloads: false}\n"


@pytest.mark.parametrize(
    ("limit", "expected_s"),
    [
        (1, 2 * 600 + 60),  # two timeouts, one backoff
        (3, 4 * 600 + 60 + 120 + 240),
        (7, 8 * 600 + 60 + 120 + 240 + 480 + 960 + 1920 + 3600),  # the last backoff capped
    ],
)
def test_kueue_deactivates_after_limit_plus_one_timeouts_and_limit_backoffs(
    limit: int, expected_s: int
) -> None:
    deps = f"kueue: {{requeueLimit: {limit}, podsReadyTimeout: 10m}}\n"
    site, _ = parse(trainer_text(site_yaml(dependencies=deps)))
    assert deactivation_ms(site, plan(site, catalog())) == expected_s * 1000


def test_plan_prints_what_holds_an_argocd_sync() -> None:
    site, found = build(site_text(mode="trainer"))
    view = plan_view(replay_manifests_of(found, plan_of(site)))
    text = render_plans([view], "text")
    assert "+queue" in text
    assert "no limit" not in text
    (step, *_) = json.loads(render_plans([view], "json"))[0]["steps"]
    assert step["holds_sync_while_queued"] is True
    assert step["holds_sync_ms"] == step["worst_once_ms"] + deactivation_ms(
        site, plan(site, catalog())
    )


@pytest.mark.parametrize(("engine", "mode"), [("flux", "trainer"), ("argocd", "nvcre")])
def test_step_timeouts_read_the_worst_clock_as_the_plan_shows_it(
    engine: str, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`worst_step_ms` runs the worst-case clock alone; each step's figure is the plan's."""
    site, found = build(site_text(engine, mode=mode, rounds=3))
    facts = plan_of(site).facts
    placed = [m for m in found if m.component in {"readiness", "queues"}]
    tree = [TreeObject(path, path, m.obj) for m in placed for path in [manifest_path(m)]]
    view = plan_view(replay_site(tree, facts))
    shown = {row.name: row.worst_ms for row in view.steps if row.worst_ms is not None}
    assert len(shown) >= 2
    cases: list[str] = []
    clock = Context.clock

    def recorded(ctx: Context, case: Case) -> Timeline:
        cases.append(case)
        return clock(ctx, case)

    monkeypatch.setattr(Context, "clock", recorded)
    assert timing.worst_step_ms(placed, facts) == shown
    assert cases == ["worst"], "the step timeouts ran another clock than the worst"
    monkeypatch.undo()
    ctx = replay_context(tree, facts)
    assert step_worst_ms(ctx) == shown
    # A step whose runs never all end has no figure (its row shows none either).
    stuck = replay_context(tree, facts)
    never = dataclasses.replace(
        ctx.worst, runs={**ctx.worst.runs, ctx.runs[0].source.path: (0, None)}
    )
    vars(stuck)["worst"] = never  # the clock as if its first run never ended
    assert step_worst_ms(ctx).keys() > step_worst_ms(stuck).keys()
