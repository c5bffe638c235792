"""Semantic checks of a site against the physics model (docs/design/0005-physics.md).

- NVC350 (error): a stage's `timeoutPerJob` is shorter than a test's expected duration.
- NVC351 (error): a bandwidth threshold asks for more than the links can carry.
- NVC352 (warning): a bandwidth threshold under a fifth of the expected figure: a unit slip?
- NVC353 (error): `at:` names a size the sweep never prints a row for.
- NVC354 (error): `productLabels` other than the model's catalog labels, unacknowledged.
- NVC355 (error): a threshold names a node pool the site does not define.
- NVC356 (warning): an NVCRE NCCL category run is expected to outlast the hour NVCRE's own
  catalog entry gives it (`timeout 3600` around mpirun).

The plan-based checks (NVC350-353, NVC356) run once every reference resolves.
"""

from __future__ import annotations

import difflib

from nvcregen.catalog.load import Catalog
from nvcregen.core import codes, units
from nvcregen.core.errors import Diagnostic, Severity
from nvcregen.plan import physics
from nvcregen.plan.model import TestUnit
from nvcregen.spec.positions import Document
from nvcregen.spec.v1alpha1 import Site, Threshold
from nvcregen.validate.kindtimeouts import kind_timeout_problems
from nvcregen.validate.thresholds import threshold_problems


def _diag(
    doc: Document, where: str, code: str, message: str, hint: str, severity: Severity
) -> Diagnostic:
    return Diagnostic(doc.span(where), severity, code, message, where, hint)


def label_problems(site: Site, catalog: Catalog, doc: Document) -> list[Diagnostic]:
    """NVC354: product labels that are not the model's, without productLabelsOverride."""
    found = []
    for i, pool in enumerate(site.spec.node_pools):
        hardware = catalog.find_hardware(pool.model)
        if hardware is None or pool.product_labels is None or pool.product_labels_override:
            continue
        foreign = [label for label in pool.product_labels if label not in hardware.product_labels]
        if not foreign:
            continue
        owners = {
            label: h.model
            for h in catalog.hardware.values()
            for label in h.product_labels
            if h.model != hardware.model
        }
        named = ", ".join(
            f"{label} (the label of {owners[label]})" if label in owners else label
            for label in foreign
        )
        message = (
            f"productLabels {named} not among {hardware.model}'s catalog labels "
            f"({', '.join(hardware.product_labels)})"
        )
        hint = (
            "nodes must carry their real label, never another model's; if `kubectl get node "
            "-L nvidia.com/gpu.product` shows this one, set productLabelsOverride: true"
        )
        where = f"/spec/nodePools/{i}/productLabels"
        found.append(_diag(doc, where, codes.NVC354.code, message, hint, Severity.ERROR))
    return found


def pool_problems(site: Site, doc: Document) -> list[Diagnostic]:
    """NVC355: thresholds that name a pool the site does not define."""
    pools = [p.name for p in site.spec.node_pools]
    found = []
    for i, t in enumerate(site.spec.thresholds):
        if t.pool is None or t.pool in pools:
            continue
        close = difflib.get_close_matches(t.pool, pools, n=1, cutoff=0.5)
        hint = f"did you mean '{close[0]}'?" if close else f"defined pools: {', '.join(pools)}"
        where = f"/spec/thresholds/{i}/pool"
        message = f"threshold names unknown node pool '{t.pool}'"
        found.append(_diag(doc, where, codes.NVC355.code, message, hint, Severity.ERROR))
    return found


def physics_problems(
    site: Site, catalog: Catalog, doc: Document, test_units: list[TestUnit]
) -> list[Diagnostic]:
    """NVC350-353 and NVC356 for a site whose references all resolve, on its plan."""
    found = [d for u in test_units for d in _timeout_problems(site, catalog, doc, u)]
    found += [d for u in test_units if (d := _inner_timeout_problem(catalog, doc, u))]
    found += kind_timeout_problems(doc, test_units)  # NVC791: a kind's own steps cut short
    for i, threshold in enumerate(site.spec.thresholds):
        measured = [u for u in test_units if _held_to(u, threshold)]
        found += threshold_problems(catalog, doc, i, threshold, measured)
    return found


def _held_to(unit: TestUnit, threshold: Threshold) -> bool:
    """Whether a planned test is held to a threshold (same test, scope and pool)."""
    return (
        unit.test.name == threshold.test
        and unit.stage.scope == threshold.scope
        and threshold.pool in (None, unit.pool.spec.name)
    )


def _timeout_problems(
    site: Site, catalog: Catalog, doc: Document, unit: TestUnit
) -> list[Diagnostic]:
    """NVC350: an explicit timeoutPerJob below the test's expected duration."""
    written = unit.stage.timeout_per_job
    if written is None or unit.timeout_ms >= unit.expected_ms:
        return []
    factor = site.spec.readiness.window.timeout_factor
    derived = units.format_duration(physics.timeout_ms(unit.expected_ms, factor))
    nodes = f"{unit.nodes_per_job} node{'s' if unit.nodes_per_job > 1 else ''}"
    message = (
        f"timeoutPerJob {written} is shorter than {unit.test.name}'s expected "
        f"{units.format_duration(unit.expected_ms)} on pool {unit.pool.spec.name} ({nodes})"
    )
    hint = (
        f"expected = {physics.explain(unit, catalog)}; without timeoutPerJob the stage gets "
        f"{derived} (x{factor:g} timeoutFactor)"
    )
    where = f"/spec/readiness/stages/{unit.stage_index}/timeoutPerJob"
    return [_diag(doc, where, codes.NVC350.code, message, hint, Severity.ERROR)]


def _inner_timeout_problem(catalog: Catalog, doc: Document, unit: TestUnit) -> Diagnostic | None:
    """NVC356: NVCRE's catalog entry stops the run before it is expected to end."""
    nvcre = unit.test.nvcre
    if unit.mode != "category" or nvcre is None or nvcre.inner_timeout is None:
        return None
    limit = units.parse_duration(nvcre.inner_timeout)
    if unit.expected_ms <= limit:
        return None
    message = (
        f"{unit.test.name} is expected to take {units.format_duration(unit.expected_ms)} on "
        f"pool {unit.pool.spec.name}, but NVCRE's {nvcre.domain}/{nvcre.variant} entry stops "
        f"it after {nvcre.inner_timeout} whatever timeoutPerJob says"
    )
    hint = (
        "set pinTransport: true on the stage to run it as a WorkloadRun without that limit"
        if unit.network == "rdma" or unit.stage.scope == "inter-node"
        else "expect NVCRE to stop it; the catalog's sweep is too long for this hardware"
    )
    hint += f" (expected = {physics.explain(unit, catalog)})"
    index = unit.stage.tests.index(unit.test.name)
    where = f"/spec/readiness/stages/{unit.stage_index}/tests/{index}"
    return _diag(doc, where, codes.NVC356.code, message, hint, Severity.WARNING)
