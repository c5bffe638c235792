"""Tests of nvcregen.compile.imagelist: what images.txt lists, and how."""

from __future__ import annotations

from chartfactory import platform_site, platform_text
from sitefactory import IMAGES, catalog, units_of

from nvcregen.compile.imagelist import (
    BARE_NOTE,
    HEADER,
    JOBSET_IMAGE,
    TAG_NOTE,
    TRAINER_IMAGE,
    catalog_images,
    dependency_images,
    images_txt,
)
from nvcregen.compile.platform.layer import platform_manifests
from nvcregen.compile.readiness.nvcre import readiness_manifests

MANAGER = "ghcr.io/nvidia/cluster-readiness-engine/manager"
DIGEST = "sha256:" + "c" * 64


def test_images_txt_lists_every_image_sorted_with_notes() -> None:
    site = platform_site(engine="flux")
    test_units = units_of(platform_text(engine="flux"))
    objects = [m.obj for m in readiness_manifests(site, test_units)]
    objects += [m.obj for m in platform_manifests(site, None)]
    extra = catalog_images(site, catalog(), test_units) + dependency_images(site)
    text = images_txt(objects, extra)
    assert text.startswith(HEADER)
    lines = text.removeprefix(HEADER).splitlines()
    assert lines == sorted(lines)
    images = [line.split()[0] for line in lines]
    assert len(images) == len(set(images))
    assert f"{MANAGER}  {BARE_NOTE}" in lines  # no digest in the site: the chart picks
    assert f"{TRAINER_IMAGE}  {TAG_NOTE}" in lines
    assert JOBSET_IMAGE not in images
    nccl = IMAGES.split("nccl: ")[1].split("\n")[0]
    dcgm = IMAGES.split("dcgm: ")[1].split("\n")[0]
    assert {nccl, dcgm} <= set(images)
    assert all(" " not in image for image in images)


def test_images_txt_with_a_mirror_and_catalog_defaults() -> None:
    knobs = {"images": "mirror: registry.internal/m\n", "nvcre": f"image: {{digest: {DIGEST}}}"}
    site = platform_site(**knobs)
    test_units = units_of(platform_text(**knobs))
    objects = [m.obj for m in readiness_manifests(site, test_units)]
    objects += [m.obj for m in platform_manifests(site, None)]
    lines = images_txt(objects, catalog_images(site, catalog(), test_units)).splitlines()
    assert f"registry.internal/m/{MANAGER}@{DIGEST}" in lines
    assert f"registry.internal/m/nvcr.io/nvidia/pytorch:26.01-py3  {TAG_NOTE}" in lines
    assert not [line for line in lines[2:] if not line.startswith("registry.internal/m/")]


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
    managed = platform_site(dependencies="jobset: {managed: true}")
    assert dependency_images(managed) == [TRAINER_IMAGE, JOBSET_IMAGE]
    assert dependency_images(platform_site()) == [TRAINER_IMAGE]
