"""Semantic checks of how readiness runs are admitted: Kueue or NVCRE's gang scheduler.

- NVC360 (error): the Kueue version cannot drive the Trainer version. Kueue patches a
  TrainJob it admits: through `runtimePatches` since Kueue 0.17 (new in Trainer 2.2), through
  `podTemplateOverrides` (Trainer 2.0 and 2.1) in 0.14 to 0.16; before 0.14 it has no
  TrainJob integration at all. Every readiness run is a TrainJob (NVCRE runs them too).
- NVC361 (error): a managed Kueue other than the release nvcregen installs, 0.19.2.
- NVC362 (error): both `kueue` and `gangScheduler` are written: a run has one admitter.
- NVC363 (error): `gangScheduler` in trainer mode: it is NVCRE's; trainer mode uses Kueue.
- NVC364 (error): `gangScheduler.queueLabelKey` with a test that runs as a WorkloadRun,
  whose schema (NVCRE 0.7.0) has no such field.
- NVC381 (info, checked with the layers, like NVC372): NVCRE mode with Kueue. NVCRE's
  controllers create each Workflow in its Certification's or WorkloadRun's namespace, and
  its jobs, TrainJobs and their dependencies in the Workflow's namespace (NVIDIA/cluster-
  readiness-engine: `certification_controller.go` `createWorkflowForCategory`,
  `workloadrun_controller.go` `Reconcile`, `workflow_controller.go` `createJobForGroup` and
  `createDependencyResource`, `job_controller.go` `createWorkloadFromSpec`): the site's
  `nvcre.namespace`, the one namespace the ClusterQueue admits. Two things could still put
  a run elsewhere, and the note names them as preconditions: a catalog manifest carrying
  its own `metadata.namespace` (NVCRE keeps it), and `WorkflowSpec.namespace`, documented as
  a generated namespace when empty although the controllers read (source read after 0.6.0,
  before a 0.7.0 tag) never use it.
"""

from __future__ import annotations

from nvcregen.catalog.load import Catalog
from nvcregen.core import codes
from nvcregen.core.errors import Diagnostic, Severity
from nvcregen.core.kueuekeys import QUEUE_LABEL
from nvcregen.engineapi.registry import readiness_of
from nvcregen.plan.resolve import (
    mode_for,
    network_for,
    nvcre_requests_nics,
    resolve_pools,
    stage_pool_name,
)
from nvcregen.spec.positions import Document
from nvcregen.spec.v1alpha1 import Site

KUEUE = "/spec/dependencies/kueue"
GANG = "/spec/dependencies/gangScheduler"
INSTALLED = "0.19.2"
Version = tuple[int, ...]


def admission_problems(site: Site, catalog: Catalog, doc: Document) -> list[Diagnostic]:
    """Every problem with how the site's readiness runs reach a queue."""
    deps = site.spec.dependencies
    found: list[Diagnostic] = []
    if deps.gang_scheduler is not None:
        found += _gang_problems(site, catalog, doc)
        return found
    kueue = deps.kueue
    if kueue.managed and kueue.version != INSTALLED:
        message = f"nvcregen installs Kueue {INSTALLED}, not {kueue.version}"
        hint = f"remove version (or write {INSTALLED}), or set managed: false for your own Kueue"
        found.append(_error(doc, f"{KUEUE}/version", codes.NVC361.code, message, hint))
    problem = trainer_problem(_version(kueue.version), _version(deps.trainer.version))
    if problem is not None:
        hint = f"run Kueue >= 0.17 with Trainer {deps.trainer.version}, e.g. {INSTALLED}"
        found.append(_error(doc, f"{KUEUE}/version", codes.NVC360.code, problem, hint))
    return found


def workflow_namespace_gap(site: Site, doc: Document) -> list[Diagnostic]:
    """NVC381: NVCRE mode admitted by Kueue, whose Workflows may run where no LocalQueue is.

    Checked with the layers (`compile/layers.py`), like NVC372, another field NVCRE lacks.
    """
    deps = site.spec.dependencies
    if not readiness_of(site).installs_nvcre or deps.gang_scheduler is not None:
        return []
    namespace = site.spec.nvcre.namespace
    queue = site.spec.dependencies.kueue.local_queue
    message = (
        f"NVCRE creates every Workflow's TrainJobs in the namespace of its Certification or "
        f"WorkloadRun, '{namespace}', the only namespace the ClusterQueue admits (LocalQueue "
        f"'{queue}'): a run lands elsewhere only if a catalog manifest names its own namespace"
    )
    hint = (
        f"after a run, confirm with kubectl get trainjobs -A -l {QUEUE_LABEL}={queue} that "
        f"every TrainJob is in '{namespace}'; a run elsewhere needs a LocalQueue '{queue}' "
        "there and the ClusterQueue's namespaceSelector opened to it"
    )
    where = "/spec/nvcre/namespace" if "/spec/nvcre/namespace" in doc.spans else KUEUE
    return [Diagnostic(doc.span(where), Severity.INFO, codes.NVC381.code, message, where, hint)]


def trainer_problem(kueue: Version, trainer: Version) -> str | None:
    """Why a Kueue version cannot admit TrainJobs of a Trainer version; None when it can."""
    shown_kueue, shown_trainer = _show(kueue), _show(trainer)
    if kueue < (0, 14):
        return f"Kueue {shown_kueue} has no TrainJob integration (it came in Kueue 0.14)"
    if kueue < (0, 17) and trainer >= (2, 2):
        return (
            f"Kueue {shown_kueue} patches TrainJobs through podTemplateOverrides, which "
            f"Trainer {shown_trainer} replaced with runtimePatches (Kueue >= 0.17)"
        )
    if kueue >= (0, 17) and trainer < (2, 2):
        return (
            f"Kueue {shown_kueue} patches TrainJobs through runtimePatches, which Trainer "
            f"{shown_trainer} does not have; Kueue >= 0.17 needs Trainer >= 2.2"
        )
    return None


def _gang_problems(site: Site, catalog: Catalog, doc: Document) -> list[Diagnostic]:
    gang = site.spec.dependencies.gang_scheduler
    assert gang is not None
    found: list[Diagnostic] = []
    if "kueue" in site.spec.dependencies.model_fields_set:
        message = "kueue and gangScheduler are both set; a readiness run has one admitter"
        hint = "keep gangScheduler (KAI Scheduler) or kueue, not both"
        found.append(_error(doc, GANG, codes.NVC362.code, message, hint))
    if not readiness_of(site).gang_scheduler:
        message = "gangScheduler is NVCRE's; trainer mode admits its runs through Kueue"
        hint = "remove gangScheduler, or run the plan with readiness.engine: nvcre"
        found.append(_error(doc, GANG, codes.NVC363.code, message, hint))
    elif gang.queue_label_key is not None and _has_workload_runs(site, catalog):
        message = (
            "queueLabelKey cannot be set on WorkloadRuns (NVCRE 0.7.0's WorkloadRun has no "
            "such field), and this plan has tests that run as WorkloadRuns"
        )
        hint = "use the default label key (kai.scheduler/queue), or drop those tests"
        found.append(_error(doc, f"{GANG}/queueLabelKey", codes.NVC364.code, message, hint))
    return found


def _has_workload_runs(site: Site, catalog: Catalog) -> bool:
    """Whether some test of the plan becomes a WorkloadRun (unknown names are skipped)."""
    pools = resolve_pools(site, catalog)
    for stage in site.spec.readiness.stages:
        pool = pools.get(stage_pool_name(site, stage))
        for name in stage.tests:
            test = catalog.tests.get(name)
            if test is None or pool is None:
                continue
            network = network_for(test, pool.spec, stage.scope)
            known = nvcre_requests_nics(pool)
            if mode_for(test, stage, network, site, nvcre_knows_model=known) == "workloadrun":
                return True
    return False


def _version(text: str) -> Version:
    return tuple(int(part) for part in text.split("."))


def _show(version: Version) -> str:
    return ".".join(str(part) for part in version)


def _error(doc: Document, where: str, code: str, message: str, hint: str) -> Diagnostic:
    return Diagnostic(doc.span(where), Severity.ERROR, code, message, where, hint)
