"""Every output layer of a site, in apply order: CRDs, platform, queues, monitoring, readiness."""

from __future__ import annotations

from pathlib import Path

from nvcregen.catalog.load import Catalog
from nvcregen.compile.gitops.chain import argocd_health_config, chain_readiness
from nvcregen.compile.gitops.layer import check_gitops, gitops_manifests
from nvcregen.compile.gitops.steps import gate_readiness, plan_steps
from nvcregen.compile.imagelist import catalog_images, dependency_images, images_txt
from nvcregen.compile.monitoring.layer import check_monitoring, monitoring_manifests
from nvcregen.compile.platform.helm import HelmRenderer, select_renderer
from nvcregen.compile.platform.layer import check_platform, platform_manifests
from nvcregen.compile.queue import kueue_install, queue_manifests
from nvcregen.compile.readiness.nvcre import readiness_manifests
from nvcregen.compile.readiness.preview import preview_manifests
from nvcregen.compile.readiness.trainer import trainer_manifests
from nvcregen.core.errors import Diagnostic
from nvcregen.core.manifest import Manifest
from nvcregen.plan.model import TestUnit
from nvcregen.spec.positions import Document
from nvcregen.spec.v1alpha1 import Site

# The layers GitOps applies. "preview" (NVCRE mode: what NVCRE will create, for review)
# is written to out/<site>/preview/ but is deliberately not one of them.
LAYER_ORDER = ("crds", "platform", "queues", "monitoring", "readiness")


def check_layers(site: Site, doc: Document) -> list[Diagnostic]:
    """Layer-specific site checks: dependency versions, scraping, GitOps settings."""
    # Trainer mode installs no NVCRE, so there is nothing to monitor (see site_manifests).
    monitoring = check_monitoring(site, doc) if site.spec.readiness.engine == "nvcre" else []
    return check_platform(site, doc) + monitoring + check_gitops(site, doc)


def site_manifests(
    site: Site, catalog: Catalog, test_units: list[TestUnit], root: Path
) -> list[Manifest]:
    """Build every layer; the GitOps layer applies the others in `LAYER_ORDER`.

    Readiness runs are applied stage by stage (trainer mode: round by round), each step
    only after the one before it passed (`nvcregen.compile.gitops.steps`).

    Raises:
        HelmError: the site's chart archive cannot be verified or rendered.

    """
    manifests = platform_manifests(site, _renderer(site), base_dir=root)
    # Kueue is installed with the platform; its queues are a layer of their own, applied
    # once its CRDs exist (docs/design/0007-admission.md).
    manifests += kueue_install(site, test_units) + queue_manifests(site, test_units)
    steps = plan_steps(site, test_units)
    if site.spec.readiness.engine == "trainer":
        # No NVCRE: its metrics, rules and dashboard would watch nothing (and alert).
        manifests += gate_readiness(site, trainer_manifests(site, test_units), steps)
    else:
        manifests += monitoring_manifests(site, test_units)
        readiness = readiness_manifests(site, test_units)
        manifests += gate_readiness(site, readiness, steps) + preview_manifests(readiness)
    if site.spec.gitops.engine == "argocd":
        manifests.append(argocd_health_config())  # without it Argo CD's waves wait for nothing
    present = [layer for layer in LAYER_ORDER if any(m.component == layer for m in manifests)]
    return manifests + chain_readiness(site, gitops_manifests(site, present, manifests), steps)


def image_list(
    site: Site, catalog: Catalog, test_units: list[TestUnit], manifests: list[Manifest]
) -> str:
    """`images.txt`: every image the site will pull, for mirroring an offline site."""
    extra = catalog_images(site, catalog, test_units) + dependency_images(site)
    return images_txt([m.obj for m in manifests], extra)


def _renderer(site: Site) -> HelmRenderer | None:
    # Importing the Helm SDK loads a large shared library: only when a chart is rendered.
    nvcre = site.spec.readiness.engine == "nvcre"
    return select_renderer() if nvcre and site.spec.nvcre.chart.archive is not None else None
