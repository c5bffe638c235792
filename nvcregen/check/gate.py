"""Check generated objects against the real upstream schemas before anything is written."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from nvcregen.catalog.charts import ChartEntry
from nvcregen.check.admission import RUN_LAYERS, admission_findings
from nvcregen.check.affinity import affinity_findings
from nvcregen.check.crossref import (
    Located,
    PoolCounts,
    check_counts,
    check_identities,
    check_log_profiles,
    check_prebuilt_workloads,
    stage_counts,
    stage_of,
)
from nvcregen.check.engineparts import Layered, engine_findings
from nvcregen.check.findings import Finding
from nvcregen.check.parallel import objects_findings
from nvcregen.check.pods import check_pod_security, request_findings
from nvcregen.check.replayed import replay_manifests
from nvcregen.check.webhooks import check_runtimes
from nvcregen.core import codes
from nvcregen.core.errors import Diagnostic
from nvcregen.core.manifest import Manifest
from nvcregen.emit.naming import manifest_path
from nvcregen.plan.resolved import Plan
from nvcregen.spec.positions import Document

# Reported against the site line by the site checks already (NVC314 images, NVC331 TLS).
_SITE_LEVEL_CODES = frozenset({codes.NVC621.code, codes.NVC622.code})


def check_manifests(manifests: list[Manifest], plan: Plan) -> list[Diagnostic]:
    """Validate every manifest; report problems at the site line the object came from.

    A problem here is a bug in nvcregen or its catalog rather than in the site, but
    the site line still tells the user which part of their plan is affected. The plan's
    catalog tells what the charts the site's Applications install create. The plan is
    replayed (`replay_manifests`) only when
    every object is valid; render runs the two steps itself, replaying while its
    workers write the files.
    """
    found = object_checks(manifests, plan)
    if any(d.is_error for d in found):  # replay only objects that are valid
        return found
    return found + replay_manifests(manifests, plan)


def object_checks(manifests: list[Manifest], plan: Plan) -> list[Diagnostic]:
    """`check_manifests` without the replay: each object, then the objects together."""
    site, doc, test_units, charts = plan.site, plan.doc, plan.units, plan.catalog.charts
    version = site.spec.kubernetes.version
    counts = stage_counts(test_units)
    across: list[Diagnostic] = []

    def check_across() -> None:  # while the workers check each object
        across.extend(_across(manifests, doc, charts))

    each = objects_findings([m.obj for m in manifests], version, check_across)
    per_object = [
        Diagnostic(
            doc.span(manifest.source),
            finding.severity,
            finding.code,
            f"generated {manifest.kind} {manifest.name}: {finding.message}",
            manifest.source,
            finding.hint or "this is a bug in nvcregen or its catalog; please report it",
            (f"in the object at {finding.pointer}",),
        )
        for manifest, found in zip(manifests, each, strict=True)
        for finding in [*found, *_readiness(manifest), *_counts(manifest, counts)]
        if finding.code not in _SITE_LEVEL_CODES
    ]
    return per_object + across


def _counts(manifest: Manifest, counts: Mapping[str, PoolCounts]) -> Iterator[Finding]:
    """NVC631, as `nvcregen check` runs it: counts match the pool of the object's stage."""
    pool = counts.get(stage_of(manifest.obj) or "")
    if pool is not None:
        yield from check_counts(Located("", manifest.obj), pool)


def _readiness(manifest: Manifest) -> list[Finding]:
    """A readiness object names its queue, sizes its pods, pins nodes validly: NVC625/683/685."""
    if manifest.component in RUN_LAYERS:
        found = admission_findings(manifest.obj) + request_findings(manifest.obj)
        return found + affinity_findings(manifest.obj)
    return []


def _across(
    manifests: list[Manifest], doc: Document, charts: Mapping[str, ChartEntry]
) -> list[Diagnostic]:
    """The cross-object checks `nvcregen check` runs, so render never writes what it rejects."""
    by_path = {manifest_path(m): m for m in manifests}
    located = [Located(path, m.obj) for path, m in by_path.items()]
    found = [*check_log_profiles(located), *check_identities(located), *check_runtimes(located)]
    found += check_prebuilt_workloads(located)
    found += check_pod_security(located)
    layered = [Layered(m.component, Located(path, m.obj)) for path, m in by_path.items()]
    found += engine_findings(layered, charts)  # Argo CD's projects (NVC680)
    return [
        Diagnostic(
            doc.span(by_path[path].source),
            finding.severity,
            finding.code,
            f"generated {path}: {finding.message}",
            by_path[path].source,
            finding.hint or "this is a bug in nvcregen or its catalog; please report it",
        )
        for path, finding in found
    ]
