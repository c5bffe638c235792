"""Semantic checks that apply only in trainer mode (`readiness.engine: trainer`).

- NVC321 (error): a DCGM test on a selector pool. Trainer mode runs each DCGM level as a
  Job pinned to each node by name, and a selector pool names none.
- NVC322 (error): a test with no trainer-mode form (checkpointed training needs NVCRE's
  catalog entry and its goodput measurement).
- NVC323 (warning): an NCCL test on a selector pool runs as one TrainJob per round on
  whichever nodes the scheduler picks, not on every node (group) of the pool.
- NVC324 (warning): `readiness.packing: packed` outside trainer mode, where NVCRE's
  controller expands the plan and nothing is packed.
- NVC345 (error): a pair test on a selector pool in trainer mode: its pairs are named.

Tests and pools that other checks already reject (unknown names) are skipped here.
"""

from __future__ import annotations

from nvcregen.catalog.load import Catalog
from nvcregen.core import codes
from nvcregen.core.errors import Diagnostic, Severity
from nvcregen.engineapi.registry import readiness_of
from nvcregen.kindapi.registry import kind_of
from nvcregen.plan.resolve import stage_pool_name
from nvcregen.spec.positions import Document
from nvcregen.spec.v1alpha1 import Site

ENGINE = "/spec/readiness/engine"
PACKING = "/spec/readiness/packing"


def trainer_mode_problems(site: Site, catalog: Catalog, doc: Document) -> list[Diagnostic]:
    """Every trainer-mode problem of a site; in NVCRE mode, only a packing it ignores."""
    if not readiness_of(site).writes_runs:  # tests it cannot run: validate/nvcreform.py
        if site.spec.readiness.packing == "perRun":
            return []
        message = "readiness.packing applies to trainer mode: NVCRE expands the plan itself"
        hint = "remove packing, or set readiness.engine: trainer"
        return [_diagnostic(doc, PACKING, codes.NVC324.code, message, hint, Severity.WARNING)]
    pools = {p.name: p for p in site.spec.node_pools}
    found: list[Diagnostic] = []
    for i, stage in enumerate(site.spec.readiness.stages):
        pool = pools.get(stage_pool_name(site, stage))
        for j, name in enumerate(stage.tests):
            test = catalog.tests.get(name)
            if test is None or pool is None:
                continue
            where = f"/spec/readiness/stages/{i}/tests/{j}"
            kind = kind_of(test)
            if kind.pair and pool.nodes is None:
                message = (
                    f"{name} runs a server on one node and its client on a named partner, "
                    f"but pool '{pool.name}' selects its nodes by label and names none"
                )
                hint = f"list the nodes of pool '{pool.name}' (nodes: [...]) to pair them"
                found.append(_diagnostic(doc, where, codes.NVC345.code, message, hint))
            elif kind.pair:
                continue
            elif not kind.collective and not kind.per_node:
                message = f"{name} has no trainer-mode form: it needs NVCRE's catalog entry"
                hint = "remove it from this stage, or run the plan with readiness.engine: nvcre"
                found.append(_diagnostic(doc, where, codes.NVC322.code, message, hint))
            elif kind.per_node and pool.nodes is None:
                message = (
                    f"{name} runs as a Job pinned to each node in trainer mode, but pool "
                    f"'{pool.name}' selects its nodes by label and names none"
                )
                hint = f"list the nodes of pool '{pool.name}' (nodes: [...]) or use engine: nvcre"
                found.append(_diagnostic(doc, where, codes.NVC321.code, message, hint))
            elif kind.collective and pool.nodes is None:
                message = (
                    f"{name} runs as one TrainJob per round on any {pool.name} nodes the "
                    "scheduler picks, not on every node of the pool"
                )
                hint = f"list the nodes of pool '{pool.name}' to test each node (group) in turn"
                found.append(
                    _diagnostic(doc, where, codes.NVC323.code, message, hint, Severity.WARNING)
                )
    return found


def _diagnostic(
    doc: Document,
    where: str,
    code: str,
    message: str,
    hint: str,
    severity: Severity = Severity.ERROR,
) -> Diagnostic:
    notes = (f"readiness.engine is trainer ({ENGINE})",)
    return Diagnostic(doc.span(where), severity, code, message, where, hint, notes)
