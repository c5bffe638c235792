"""Tests NVCRE mode cannot run (pure): each kind says why (`TestKind.nvcre_refusal`).

- NVC333 (error): link health counters, judged only from their log, which NVCRE mode
  never reads: the node's script exits 0 whatever its counters did, so every port would
  pass unjudged (docs/design/0023-link-counters.md).
- NVC344 (error): the RDMA pair test, whose server must listen on one node before its
  client starts on the other; NVCRE's WorkloadRuns start every node alike
  (docs/design/0022-rdma-rails.md).
"""

from __future__ import annotations

from nvcregen.catalog.load import Catalog
from nvcregen.core.errors import Diagnostic, Severity
from nvcregen.engineapi.registry import readiness_of
from nvcregen.kindapi.registry import kind_of
from nvcregen.spec.positions import Document
from nvcregen.spec.v1alpha1 import Site

ENGINE = "/spec/readiness/engine"


def nvcre_form_problems(site: Site, catalog: Catalog, doc: Document) -> list[Diagnostic]:
    """Every test of an NVCRE-mode site's stages that NVCRE mode cannot run."""
    if readiness_of(site).writes_runs:
        return []
    found: list[Diagnostic] = []
    for i, stage in enumerate(site.spec.readiness.stages):
        for j, name in enumerate(stage.tests):
            test = catalog.tests.get(name)
            refusal = kind_of(test).nvcre_refusal if test is not None else None
            if refusal is None:
                continue
            where = f"/spec/readiness/stages/{i}/tests/{j}"
            message = refusal.message.format(name=name)
            notes = (f"readiness.engine is nvcre ({ENGINE})",)
            found.append(
                Diagnostic(
                    doc.span(where), Severity.ERROR, refusal.code, message, where,
                    refusal.hint, notes,
                )
            )  # fmt: skip
    return found
