"""The render gate replays the objects it is about to write (docs/design/0008-replay.md)."""

from __future__ import annotations

import copy
import dataclasses
from pathlib import Path

import pytest
from sitefactory import catalog

from nvcregen.chain import pipeline
from nvcregen.chain.pipeline import Built, Options, build_site
from nvcregen.check.gate import check_manifests
from nvcregen.check.replayed import replay_manifests
from nvcregen.compile.layers import image_list
from nvcregen.core.errors import Diagnostic, Severity, Span
from nvcregen.core.manifest import Manifest
from nvcregen.emit.naming import manifest_path

ROOT = Path(__file__).resolve().parents[3]
SITE = "sites/h20-3e-lab.yaml"
WAVE = "argocd.argoproj.io/sync-wave"


@pytest.fixture(scope="module")
def built() -> Built:
    found = build_site((ROOT / SITE).read_bytes(), SITE, catalog(), Options(root=ROOT))
    assert isinstance(found, Built)
    return found


def _in_wave_one(manifest: Manifest) -> Manifest:
    if manifest.folder != "02-two-node":
        return manifest
    meta = manifest.obj["metadata"]
    obj = {**manifest.obj, "metadata": {**meta, "annotations": {**meta["annotations"], WAVE: "1"}}}
    return dataclasses.replace(manifest, obj=obj)


def test_the_shipped_site_passes_the_gate(built: Built) -> None:
    assert check_manifests(built.manifests, built.plan) == []


def test_overlapping_stages_fail_render_at_the_site_lines(built: Built) -> None:
    manifests = [_in_wave_one(m) for m in built.manifests]
    found = check_manifests(manifests, built.plan)
    two_node = sorted(manifest_path(m) for m in manifests if m.folder == "02-two-node")
    assert [d.code for d in found] == ["NVC672"] * len(two_node) and len(two_node) == 4
    first = found[0]
    assert first.is_error
    assert first.message.startswith(f"generated {two_node[0]}: ")
    assert first.span.file == SITE
    source = next(m.source for m in manifests if manifest_path(m) == two_node[0])
    assert source.startswith("/spec/readiness/stages/1/")  # the stage's test it runs
    assert first.span == built.plan.doc.span(source)
    assert first.notes == ("in the object at /metadata/name",)


def test_objects_with_errors_are_not_replayed(built: Built) -> None:
    def unlabelled(manifest: Manifest) -> Manifest:
        if manifest.kind != "WorkloadRun":
            return manifest
        spec = {**manifest.obj["spec"], "workloadMetadata": {"labels": {}}}
        return dataclasses.replace(manifest, obj={**manifest.obj, "spec": spec})

    manifests = [unlabelled(m) for m in built.manifests]
    codes = {d.code for d in check_manifests(manifests, built.plan)}
    assert "NVC625" in codes
    assert not {c for c in codes if c.startswith("NVC67")}


def test_render_writes_no_tree_when_the_replay_it_runs_beside_the_writers_fails(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """compile_source replays while its workers write the files: a replay error still stops it."""
    raw = (ROOT / SITE).read_bytes()
    passed = pipeline.compile_source(raw, SITE, catalog(), Options(root=ROOT))
    assert passed.tree is not None and not any(d.is_error for d in passed.diagnostics)
    failed = Diagnostic(Span(SITE, 1, 1), Severity.ERROR, "NVC672", "overlapping stages")
    monkeypatch.setattr(pipeline, "replay_manifests", lambda *_: [failed])
    result = pipeline.compile_source(raw, SITE, catalog(), Options(root=ROOT))
    assert result.tree is None
    assert failed in result.diagnostics


@pytest.mark.parametrize("site_file", sorted(p.name for p in (ROOT / "sites").glob("*.yaml")))
def test_what_runs_beside_the_writers_changes_no_object(site_file: str) -> None:
    """Render's workers write the objects as they were when forked: the replay and the
    image list running meanwhile in the parent must leave every object as it was."""
    shown = f"sites/{site_file}"
    found = build_site((ROOT / shown).read_bytes(), shown, catalog(), Options(root=ROOT))
    assert isinstance(found, Built)
    before = copy.deepcopy([m.obj for m in found.manifests])
    replay_manifests(found.manifests, found.plan)
    image_list(found.plan, found.manifests)
    assert [m.obj for m in found.manifests] == before
