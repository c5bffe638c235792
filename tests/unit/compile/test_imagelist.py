"""Tests of nvcregen.compile.imagelist: what images.txt lists, and how (issue 12 item 7)."""

from __future__ import annotations

from chartfactory import platform_site, platform_text
from sitefactory import IMAGES, catalog, plan_of, units_of

from nvcregen.compile.imagelist import (
    BARE_NOTE,
    CHART_NOTE,
    HEADER,
    TAG_NOTE,
    catalog_images,
    chart_pulls,
    images_txt,
)
from nvcregen.compile.platform.layer import platform_manifests
from nvcregen.compile.queue import kueue_install
from nvcregen.core.manifest import Obj
from nvcregen.engines.readiness.nvcre.layer import readiness_manifests

MANAGER = "ghcr.io/nvidia/cluster-readiness-engine/manager"
TRAINER = "ghcr.io/kubeflow/trainer/trainer-controller-manager:v2.2.1"
JOBSET = "registry.k8s.io/jobset/jobset:v0.11.0"
DIGEST = "sha256:" + "c" * 64
MIRROR = "registry.internal/m"


def _objects(**knobs: str) -> list[Obj]:
    site = platform_site(**knobs)
    test_units = units_of(platform_text(**knobs))
    found = readiness_manifests(site, test_units) + platform_manifests(site, None)
    return [m.obj for m in found + kueue_install(site, test_units)]


def _lines(**knobs: str) -> list[str]:
    objects = _objects(**knobs)
    images, charts = chart_pulls(objects, catalog().charts)
    extra = catalog_images(plan_of(platform_site(**knobs))) + images
    text = images_txt(objects, extra, charts)
    assert text.startswith(HEADER)
    return text.removeprefix(HEADER).splitlines()


def test_images_txt_lists_every_image_and_chart_sorted_with_notes() -> None:
    lines = _lines(engine="flux")
    assert lines == sorted(lines)
    images = [line.split()[0] for line in lines]
    assert len(images) == len(set(images))
    assert f"{MANAGER}  {BARE_NOTE}" in lines  # no digest in the site: the chart picks
    assert f"{TRAINER}  {TAG_NOTE}" in lines  # the chart's default, from catalog/charts
    assert JOBSET not in images  # the site does not manage JobSet
    nccl = IMAGES.split("nccl: ")[1].split("\n")[0]
    dcgm = IMAGES.split("dcgm: ")[1].split("\n")[0]
    assert {nccl, dcgm} <= set(images)
    charts = [line for line in lines if CHART_NOTE in line]
    assert [c.split()[0] for c in charts] == [
        "ghcr.io/kubeflow/charts/kubeflow-trainer:2.2.1",
        "ghcr.io/nvidia/cluster-readiness-engine:0.7.0",
        "registry.k8s.io/kueue/charts/kueue:0.19.2",
    ]
    assert all("version only" in c for c in charts)


def test_a_mirrored_site_pulls_every_image_and_chart_through_its_mirror() -> None:
    """Before issue 12 the Trainer image and every chart still came from public registries."""
    knobs = {
        "images": f"mirror: {MIRROR}\n{IMAGES}",
        "nvcre": f"image: {{digest: {DIGEST}}}",
        "dependencies": "jobset: {managed: true}",
    }
    lines = _lines(engine="flux", **knobs)
    assert f"{MIRROR}/{MANAGER}@{DIGEST}" in lines
    assert f"{MIRROR}/{TRAINER}  {TAG_NOTE}" in lines
    assert f"{MIRROR}/{JOBSET}  {TAG_NOTE}" in lines
    assert f"{MIRROR}/registry.k8s.io/kueue/kueue:v0.19.2  {TAG_NOTE}" in lines
    assert not [line for line in lines if not line.startswith(f"{MIRROR}/")]
    sources = [o for o in _objects(engine="flux", **knobs) if o["kind"] == "OCIRepository"]
    assert all(o["spec"]["url"].startswith(f"oci://{MIRROR}/") for o in sources)


def test_argo_applications_pull_charts_through_the_mirror_and_keep_the_digest() -> None:
    knobs = {
        "images": f"mirror: {MIRROR}\n{IMAGES}",
        "dependencies": f"trainer: {{chartDigest: {DIGEST}, imageDigest: {DIGEST}}}",
    }
    apps = [o for o in _objects(engine="argocd", **knobs) if o["kind"] == "Application"]
    urls = [a["spec"]["source"]["repoURL"].removeprefix("oci://") for a in apps]
    assert urls and all(url.startswith(f"{MIRROR}/") for url in urls)
    # pinned: Argo CD's OCI source pulls the digest, the version is an annotation
    (trainer,) = [a for a in apps if a["spec"]["source"]["repoURL"].endswith("/kubeflow-trainer")]
    assert trainer["spec"]["source"]["targetRevision"] == DIGEST
    assert trainer["spec"]["source"]["path"] == "."
    assert "chart" not in trainer["spec"]["source"]
    assert trainer["metadata"]["annotations"] == {
        "nvcregen.io/chart-digest": DIGEST,
        "nvcregen.io/chart-version": "2.2.1",
    }
    values = trainer["spec"]["source"]["helm"]["valuesObject"]
    assert values["image"] == {
        "registry": f"{MIRROR}/ghcr.io",
        "repository": "kubeflow/trainer/trainer-controller-manager",
        "tag": f"v2.2.1@{DIGEST}",
    }
    lines = _lines(engine="argocd", **knobs)
    assert (
        f"{MIRROR}/ghcr.io/kubeflow/charts/kubeflow-trainer:2.2.1@{DIGEST}  {CHART_NOTE}" in lines
    )
    assert f"{MIRROR}/{TRAINER}@{DIGEST}" in lines


def test_images_in_crds_and_helm_value_blocks() -> None:
    crd = {"kind": "CustomResourceDefinition", "spec": {"x": {"image": "not/an:image"}}}
    values = {
        "kind": "HelmRelease",
        "spec": {
            "values": {"a": {"image": {"registry": "ghcr.io", "repository": "x/y", "tag": "v1"}}}
        },
    }
    assert images_txt([crd, values]) == HEADER + f"ghcr.io/x/y:v1  {TAG_NOTE}\n"


def test_the_trainer_chart_brings_jobset_only_when_the_site_manages_it() -> None:
    def controllers(**knobs: str) -> list[str]:
        return sorted(chart_pulls(_objects(**knobs), catalog().charts)[0])

    assert JOBSET in controllers(dependencies="jobset: {managed: true}")
    assert JOBSET not in controllers()
    assert TRAINER not in controllers(dependencies="trainer: {managed: false}")
