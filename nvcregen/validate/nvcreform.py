"""Tests NVCRE mode cannot judge (pure).

- NVC333 (error): a test whose kind only `collect`'s reading of its log judges
  (`TestKind.nvcre_judged` False: link health counters) in a stage of an NVCRE-mode
  site. NVCRE runs a per-node kind as a WorkloadRun and `collect` reads its outcome, not
  its log: the node's script exits 0 whatever its counters did, so every port would
  pass unjudged (docs/design/0023-link-counters.md).
"""

from __future__ import annotations

from nvcregen.catalog.load import Catalog
from nvcregen.core import codes
from nvcregen.core.errors import Diagnostic, Severity
from nvcregen.engineapi.registry import readiness_of
from nvcregen.kindapi.registry import kind_of
from nvcregen.spec.positions import Document
from nvcregen.spec.v1alpha1 import Site

ENGINE = "/spec/readiness/engine"


def nvcre_form_problems(site: Site, catalog: Catalog, doc: Document) -> list[Diagnostic]:
    """Every test of an NVCRE-mode site's stages that NVCRE mode cannot judge."""
    if readiness_of(site).writes_runs:
        return []
    found: list[Diagnostic] = []
    for i, stage in enumerate(site.spec.readiness.stages):
        for j, name in enumerate(stage.tests):
            test = catalog.tests.get(name)
            if test is None or kind_of(test).nvcre_judged:
                continue
            where = f"/spec/readiness/stages/{i}/tests/{j}"
            message = (
                f"{name} is judged only from its log, which NVCRE mode never reads: its"
                " WorkloadRun would pass whatever the counters did"
            )
            hint = "run it with readiness.engine: trainer, or remove it from this stage"
            notes = (f"readiness.engine is nvcre ({ENGINE})",)
            span = doc.span(where)
            found.append(
                Diagnostic(span, Severity.ERROR, codes.NVC333.code, message, where, hint, notes)
            )
    return found
