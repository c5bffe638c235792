"""NVC366: a Pod or workload object without the spec the API server requires (pure).

The OpenAPI schemas leave `spec` optional on every kind, so a hand-edited file whose
`spec` is null (or gone) passes the schema check, yet the API server's own validation
(Go code, not the schema) refuses it: a Pod needs `spec.containers`, a Job, Deployment,
StatefulSet, DaemonSet or ReplicaSet `spec.template.spec.containers`, a CronJob its
`spec.schedule` and job template. A spec of another type is the schema's (NVC602).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nvcregen.check.findings import Finding
from nvcregen.core import codes
from nvcregen.core.kube import api_group

CODE = codes.NVC366.code
_TEMPLATE = "spec.template.spec.containers"
# (group, kind) -> the first field the API server names as required without a spec
REQUIRED: dict[tuple[str, str], str] = {
    ("", "Pod"): "spec.containers",
    ("apps", "Deployment"): _TEMPLATE,
    ("apps", "StatefulSet"): _TEMPLATE,
    ("apps", "DaemonSet"): _TEMPLATE,
    ("apps", "ReplicaSet"): _TEMPLATE,
    ("batch", "Job"): _TEMPLATE,
    ("batch", "CronJob"): "spec.schedule",
}


def required_findings(obj: Mapping[str, Any]) -> list[Finding]:
    """NVC366 for a Pod or workload object whose spec is null or missing; [] otherwise."""
    kind = str(obj.get("kind", ""))
    field = REQUIRED.get((api_group(str(obj.get("apiVersion", ""))), kind))
    if field is None or obj.get("spec") is not None:
        return []
    message = f"this {kind} has no spec: the API server refuses it ({field}: Required value)"
    hint = "restore its spec, or render the site again (nvcregen render)"
    return [Finding("/spec", CODE, message, hint=hint)]
