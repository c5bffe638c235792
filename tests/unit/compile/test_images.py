"""Tests of nvcregen.plan.images: pins, the catalog default and the mirror."""

from __future__ import annotations

import pytest
from sitefactory import DCGM_IMAGE, NCCL_IMAGE, catalog, site, site_yaml

from nvcregen.plan.images import is_pinned, mirrored, resolve_image, source_image

CATALOG_NCCL = "nvcr.io/nvidia/pytorch:26.01-py3"


@pytest.mark.parametrize(
    ("mirror", "expected"),
    [
        ("registry.internal/mirror", "registry.internal/mirror/nvcr.io/nvidia/pytorch:26.01-py3"),
        ("registry.internal/mirror/", "registry.internal/mirror/nvcr.io/nvidia/pytorch:26.01-py3"),
        ("registry.internal:5000", "registry.internal:5000/nvcr.io/nvidia/pytorch:26.01-py3"),
        (None, "nvcr.io/nvidia/pytorch:26.01-py3"),
    ],
)
def test_mirror_keeps_the_source_registry_in_the_path(mirror: str | None, expected: str) -> None:
    assert mirrored(CATALOG_NCCL, mirror) == expected


def test_mirror_keeps_the_digest() -> None:
    assert mirrored(NCCL_IMAGE, "mirror.local/m") == f"mirror.local/m/{NCCL_IMAGE}"


def test_site_pin_wins_over_the_catalog() -> None:
    pinned = site()
    assert source_image(pinned, catalog(), "nccl") == NCCL_IMAGE
    assert source_image(pinned, catalog(), "dcgm") == DCGM_IMAGE
    assert catalog().images.nccl == CATALOG_NCCL


def test_catalog_default_when_the_site_pins_nothing() -> None:
    unpinned = site(site_yaml(images="mirror: registry.internal/mirror"))
    assert source_image(unpinned, catalog(), "nccl") == CATALOG_NCCL
    assert resolve_image(unpinned, catalog(), "nccl") == (
        f"registry.internal/mirror/{CATALOG_NCCL}"
    )
    assert resolve_image(unpinned, catalog(), "dcgm") == (
        f"registry.internal/mirror/{catalog().images.dcgm}"
    )


def test_resolve_image_without_a_mirror_is_the_source_image() -> None:
    assert resolve_image(site(), catalog(), "nccl") == NCCL_IMAGE


@pytest.mark.parametrize(
    ("image", "pinned"),
    [
        (NCCL_IMAGE, True),
        (CATALOG_NCCL, False),
        ("registry.internal:5000/nvidia/dcgm", False),
        ("nvcr.io/nvidia/pytorch@sha256:" + "a" * 64, True),
    ],
)
def test_is_pinned(image: str, pinned: bool) -> None:
    assert is_pinned(image) is pinned
