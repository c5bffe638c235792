"""render runs the same cross-object checks as `nvcregen check`, before writing anything."""

from __future__ import annotations

import copy
from pathlib import Path

from sitefactory import parse, plan_of

from nvcregen.check.gate import check_manifests
from nvcregen.compile.layers import site_manifests
from nvcregen.compile.postprocess import postprocess
from nvcregen.core.manifest import Manifest
from nvcregen.plan.resolved import Plan

SITE = Path(__file__).resolve().parents[3] / "sites" / "h20-3e-lab.yaml"


def _manifests() -> tuple[list[Manifest], Plan]:
    planned = plan_of(*parse(SITE.read_text(encoding="utf-8")))
    built = site_manifests(planned, root=Path())
    return postprocess(built, planned.site, "sites/h20-3e-lab.yaml"), planned


def test_a_compiled_site_passes_every_render_check() -> None:
    manifests, planned = _manifests()
    assert [d for d in check_manifests(manifests, planned) if d.is_error] == []


def test_a_dangling_log_profile_reference_stops_render() -> None:
    manifests, planned = _manifests()
    broken = []
    for manifest in manifests:
        obj = copy.deepcopy(manifest.obj)
        if obj["kind"] == "WorkloadRun" and "bandwidthMeasurement" in obj["spec"]:
            obj["spec"]["bandwidthMeasurement"]["logProfileRef"] = "missing-profile"
        broken.append(Manifest(obj, manifest.component, manifest.source, manifest.catalog))
    assert broken != manifests
    codes = {d.code for d in check_manifests(broken, planned) if d.is_error}
    assert "NVC630" in codes


def test_an_object_generated_twice_stops_render() -> None:
    manifests, planned = _manifests()
    first = next(m for m in manifests if m.kind == "Certification")
    twin = Manifest(copy.deepcopy(first.obj), "platform", first.source)
    codes = {d.code for d in check_manifests([*manifests, twin], planned)}
    assert "NVC633" in codes


def test_a_gpu_count_that_differs_from_the_pool_stops_render() -> None:
    """The render gate runs NVC631 as `nvcregen check` does, at the object's site line."""
    manifests, planned = _manifests()
    changed = []
    for manifest in manifests:
        obj = copy.deepcopy(manifest.obj)
        if obj["kind"] == "Certification":
            obj["spec"]["categories"][0]["options"]["gpusPerNode"] = 4
        changed.append(Manifest(obj, manifest.component, manifest.source, manifest.catalog))
    found = [d for d in check_manifests(changed, planned) if d.code == "NVC631"]
    assert found
    assert all("gpusPerNode is 4, but the pool has 8" in d.message for d in found)
    assert not [d for d in check_manifests(manifests, planned) if d.code == "NVC631"]
