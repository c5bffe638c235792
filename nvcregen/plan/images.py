"""Resolve workload images: the site's pin or the catalog default, behind the mirror."""

from __future__ import annotations

from nvcregen.catalog.load import Catalog
from nvcregen.catalog.models import ImageRole
from nvcregen.spec.v1alpha1 import Site


def source_image(site: Site, catalog: Catalog, role: ImageRole) -> str:
    """Return the image a role uses before mirroring: the site's pin, else the catalog's."""
    pinned: str | None = getattr(site.spec.images, role)
    return pinned or getattr(catalog.images, role)


def mirrored(image: str, mirror: str | None) -> str:
    """Rewrite an image to come from the site's mirror, keeping its registry in the path.

    `nvcr.io/nvidia/pytorch:26.01-py3` behind `registry.internal/mirror` becomes
    `registry.internal/mirror/nvcr.io/nvidia/pytorch:26.01-py3`; an image already in the
    mirror (one built for the site and pushed there) stays as it is.
    """
    if not mirror or image.startswith(f"{mirror.rstrip('/')}/"):
        return image
    return f"{mirror.rstrip('/')}/{image}"


def mirrored_chart(ref: str, mirror: str | None) -> str:
    """A Helm chart's OCI reference behind the mirror: `oci://<mirror>/<host>/<path>`."""
    return f"oci://{mirrored(ref.removeprefix('oci://'), mirror)}"


def resolve_image(site: Site, catalog: Catalog, role: ImageRole) -> str:
    """Return the image reference generated objects carry for a role."""
    return mirrored(source_image(site, catalog, role), site.spec.images.mirror)


def is_pinned(image: str) -> bool:
    """Whether an image reference names exact bytes (a digest), not a movable tag."""
    return "@sha256:" in image
