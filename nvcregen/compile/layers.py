"""Every output layer of a site, in apply order: CRDs, platform, queues, monitoring, readiness."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from nvcregen.catalog.load import Catalog
from nvcregen.compile.gitops.common import LAYERS
from nvcregen.compile.gitops.engineparts import objects_of
from nvcregen.compile.gitops.layer import check_gitops, gitops_manifests
from nvcregen.compile.gitops.steps import gate_readiness, place_runs, plan_steps
from nvcregen.compile.gitops.timing import timed_steps
from nvcregen.compile.imagelist import catalog_images, chart_pulls, images_txt
from nvcregen.compile.monitoring.layer import check_monitoring, monitoring_manifests
from nvcregen.compile.platform.helm import HelmRenderer, select_renderer
from nvcregen.compile.platform.layer import check_platform, platform_manifests
from nvcregen.compile.platform.pins import check_pins
from nvcregen.compile.podsecurity import label_namespaces
from nvcregen.compile.queue import kueue_install, queue_manifests
from nvcregen.compile.queue.prebuilt import check_prebuilt
from nvcregen.compile.readiness.engineparts import readiness_objects
from nvcregen.compile.readiness.network import check_pod_network
from nvcregen.compile.readiness.pods import check_tolerations
from nvcregen.core.errors import Diagnostic
from nvcregen.core.manifest import Manifest
from nvcregen.engineapi.registry import gitops_of, readiness_of
from nvcregen.plan.model import TestUnit
from nvcregen.plan.resolved import Plan
from nvcregen.spec.positions import Document
from nvcregen.spec.v1alpha1 import Site
from nvcregen.validate.admission import workflow_namespace_gap


def check_layers(
    site: Site,
    doc: Document,
    *,
    strict: bool = False,
    test_units: Sequence[TestUnit] | None = None,
    catalog: Catalog | None = None,
) -> list[Diagnostic]:
    """Layer-specific site checks: dependency versions, pins, scraping, GitOps, RDMA networks.

    `strict` makes what only works by luck (RoCE pods without a pod network, charts and
    images without digests, example digests) an error.
    `test_units` (the plan, once built) tells which pools RDMA runs use; `catalog` which
    digests are examples.
    """
    # Trainer mode installs no NVCRE, so there is nothing to monitor (see site_manifests).
    nvcre = readiness_of(site).installs_nvcre
    monitoring = check_monitoring(site, doc) if nvcre else []
    units = test_units or ()
    network = check_pod_network(site, units, doc, strict=strict)
    examples = catalog.examples if catalog is not None else None
    pinned = check_pins(site, doc, examples, units, strict=strict)
    platform = check_platform(site, doc) + pinned + check_tolerations(site, doc)
    queues = workflow_namespace_gap(site, doc)  # NVC381: a gap NVCRE 0.7.0 leaves open
    queues += check_prebuilt(site, doc, units)  # NVC384-386: prebuilt Workloads off, or in vain
    return platform + monitoring + network + queues + check_gitops(site, doc)


def site_manifests(plan: Plan, root: Path) -> list[Manifest]:
    """Build every layer of a plan; the GitOps layer applies the others in `LAYERS`.

    Readiness runs are applied stage by stage (trainer mode: round by round), each step
    only after the one before it passed (`nvcregen.compile.gitops.steps`).

    Raises:
        HelmError: the site's chart archive cannot be verified or rendered.

    """
    site, test_units = plan.site, plan.units
    manifests = platform_manifests(site, _renderer(site), base_dir=root)
    # Kueue is installed with the platform; its queues are a layer of their own, applied
    # once its CRDs exist (docs/design/0007-admission.md).
    queues = queue_manifests(site, test_units)
    manifests += kueue_install(site, test_units) + queues
    steps = plan_steps(site, test_units)
    # No NVCRE: its metrics, rules and dashboard would watch nothing (and alert); else
    # NVCRE is monitored unless it is another site's, which monitors it.
    if readiness_of(site).installs_nvcre and site.spec.nvcre.managed:
        manifests += monitoring_manifests(site, test_units)
    runs = readiness_objects(readiness_of(site))
    readiness = runs.readiness(site, test_units)  # the engine's objects running the tests
    placed = place_runs(readiness, steps)  # step folders and sync waves
    steps = timed_steps(plan, steps, [*placed, *queues])  # worst case, replayed
    manifests += gate_readiness(site, placed, steps)
    # Periodic CronJobs: a layer of their own, outside the one-shot steps (design note 0021).
    manifests += runs.periodic(site, test_units)
    manifests += runs.preview(readiness)  # what NVCRE will make of them, for review
    engine = objects_of(gitops_of(site))
    manifests += engine.platform(site)  # Argo CD's health checks: else its waves wait for nothing
    manifests = label_namespaces(site, manifests)  # the Pod Security level their pods need
    present = [layer for layer in LAYERS if any(m.component == layer for m in manifests)]
    gitops = gitops_manifests(site, present, manifests, plan.catalog.charts)
    return manifests + engine.chain(site, gitops, steps)


def image_list(plan: Plan, manifests: list[Manifest]) -> str:
    """`images.txt`: every image and chart the site will pull, for mirroring an offline site."""
    objects = [m.obj for m in manifests]
    controllers, charts = chart_pulls(objects, plan.catalog.charts)
    return images_txt(objects, catalog_images(plan) + controllers, charts)


def _renderer(site: Site) -> HelmRenderer | None:
    # Importing the Helm SDK loads a large shared library: only when a chart is rendered.
    nvcre = readiness_of(site).installs_nvcre
    return select_renderer() if nvcre and site.spec.nvcre.chart.archive is not None else None
