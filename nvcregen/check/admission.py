"""No readiness run bypasses admission (NVC625): a policy for the readiness layer (pure).

Every object of a site's `readiness/` layer that makes pods must name its queue:

- a batch/v1 Job or a TrainJob: `kueue.x-k8s.io/queue-name` in `metadata.labels`. Kueue's
  webhook suspends such an object until its whole run is admitted; one without the label
  is not Kueue's business and starts at once, next to (and against) the admitted runs;
- a Certification or WorkloadRun: that label in `spec.workloadMetadata.labels` (NVCRE
  copies it onto every TrainJob it creates; for a Certification, on every category when
  not at the top), or `spec.gangScheduler`, when KAI Scheduler admits the runs instead.

- a batch/v1 CronJob (the `periodic/` layer): that label in `spec.jobTemplate.metadata.labels`,
  which every period's Job carries (docs/design/0021-periodic.md).

`render` applies it to the objects it generates, `check` to every file under
`<site>/readiness/` and `<site>/periodic/` (docs/design/0007-admission.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nvcregen.check.findings import Finding
from nvcregen.core import codes
from nvcregen.core.fields import list_at, mapping_at
from nvcregen.core.kueuekeys import QUEUE_LABEL

CODE = codes.NVC625.code
RUN_KINDS = frozenset({("batch", "Job"), ("trainer.kubeflow.org", "TrainJob")})
NVCRE_KINDS = frozenset({("nvcre.nvidia.com", kind) for kind in ("Certification", "WorkloadRun")})
READINESS_LAYER = "readiness"
PERIODIC_LAYER = "periodic"
RUN_LAYERS = frozenset({READINESS_LAYER, PERIODIC_LAYER})


def admission_findings(obj: Mapping[str, Any]) -> list[Finding]:
    """NVC625 when a readiness object that makes pods names no queue; [] otherwise."""
    group = str(obj.get("apiVersion", "")).rpartition("/")[0]
    kind = str(obj.get("kind", ""))
    if (group, kind) in RUN_KINDS and not _labelled(mapping_at(obj, "metadata", "labels")):
        message = f"{kind} names no Kueue queue: it would start at once, outside admission"
        hint = f"label it {QUEUE_LABEL}: <the site's LocalQueue>"
        return [Finding("/metadata/labels", CODE, message, hint=hint)]
    template_labels = mapping_at(obj, "spec", "jobTemplate", "metadata", "labels")
    if (group, kind) == ("batch", "CronJob") and not _labelled(template_labels):
        message = "the CronJob's Jobs name no Kueue queue: each period would start at once"
        hint = f"label spec.jobTemplate.metadata {QUEUE_LABEL}: <the site's LocalQueue>"
        return [Finding("/spec/jobTemplate/metadata/labels", CODE, message, hint=hint)]
    if (group, kind) in NVCRE_KINDS and not _nvcre_admitted(mapping_at(obj, "spec") or {}):
        message = (
            f"{kind} names no queue for the TrainJobs NVCRE makes of it: neither "
            f"workloadMetadata.labels[{QUEUE_LABEL}] nor gangScheduler"
        )
        hint = f"set spec.workloadMetadata.labels[{QUEUE_LABEL}], or spec.gangScheduler"
        return [Finding("/spec/workloadMetadata", CODE, message, hint=hint)]
    return []


def _nvcre_admitted(spec: Mapping[str, Any]) -> bool:
    if spec.get("gangScheduler") or _labelled(_metadata_labels(spec)):
        return True
    categories = list_at(spec, "categories")
    return bool(categories) and all(
        _labelled(mapping_at(c, "options", "workloadMetadata", "labels")) for c in categories
    )


def _metadata_labels(block: Mapping[str, Any]) -> Any:
    return mapping_at(block, "workloadMetadata", "labels")


def _labelled(labels: Any) -> bool:
    return isinstance(labels, Mapping) and bool(labels.get(QUEUE_LABEL))
