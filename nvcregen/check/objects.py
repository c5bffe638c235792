"""Check generated objects against the real upstream schemas before anything is written."""

from __future__ import annotations

from nvcregen.check.schemas import default_registry
from nvcregen.compile.manifest import Manifest
from nvcregen.errors import Diagnostic, Severity
from nvcregen.spec.positions import Document
from nvcregen.spec.v1alpha1 import Site


def check_manifests(manifests: list[Manifest], site: Site, doc: Document) -> list[Diagnostic]:
    """Validate every manifest; report problems at the site line the object came from.

    A problem here is a bug in nvcregen or its catalog rather than in the site, but
    the site line still tells the user which part of their plan is affected.
    """
    registry = default_registry()
    return [
        Diagnostic(
            doc.span(manifest.source),
            Severity.ERROR,
            problem.code,
            f"generated {manifest.kind} {manifest.name}: {problem.message}",
            manifest.source,
            "this is a bug in nvcregen or its catalog; please report it with the site file",
        )
        for manifest in manifests
        for problem in registry.validate(manifest.obj, kube_version=site.spec.kubernetes.version)
    ]
