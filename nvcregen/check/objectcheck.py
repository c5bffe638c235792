"""One generated object's problems, as an API server and nvcregen's policies see it.

Apart from the render gate (`check/gate.py`) so that what a `check` worker imports holds
no site or catalog models: the workers start before the parent has imported those.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nvcregen.check.cel import CelResult, reported_rules, uses_old_self
from nvcregen.check.findings import Finding
from nvcregen.check.policy import check_policies
from nvcregen.check.webhooks import webhook_findings
from nvcregen.core.errors import Severity
from nvcregen.kubeschema.normalize import to_json
from nvcregen.kubeschema.registry import default_registry


def object_findings(
    obj: Mapping[str, Any],
    *,
    kube_version: str = "1.30",
    strict: bool = False,
    old: Mapping[str, Any] | None = None,
) -> list[Finding]:
    """Every problem of one object, as an API server and nvcregen's policies see it.

    Args:
        obj: The object.
        kube_version: Selects the core Kubernetes schemas.
        strict: Tag-only images become errors.
        old: The object's previous version, for transition rules; None checks as a create.

    Returns:
        Structural schema problems, failed and unchecked CEL rules, webhook-only rules,
        then policy findings.

    """
    registry = default_registry()
    data, converted = to_json(obj)  # one walk over the object: plain JSON from here on
    if converted or not isinstance(data, dict):
        problems = registry.validate(obj, kube_version=kube_version)
    else:
        problems = registry.validate_json(data, kube_version=kube_version)
    findings = [Finding(p.pointer, p.code, p.message) for p in problems]
    # CEL rules assume a structurally valid object, as the API server does.
    if not problems and isinstance(data, dict):
        findings += [_cel_finding(r) for r in reported_rules(data, old=old)]
    return findings + webhook_findings(obj) + check_policies(obj, strict=strict)


def _cel_finding(result: CelResult) -> Finding:
    if result.status == "unchecked":
        return Finding(
            result.pointer,
            "NVC611",
            f"CEL rule not checked offline ({result.reason}): {result.rule}",
            Severity.WARNING,
            "the API server will evaluate it; `nvcregen check --server` does so now",
        )
    hint = ""
    if uses_old_self(result.rule):
        hint = "this change needs a new object name: the field is immutable once created"
    return Finding(result.pointer, "NVC610", f"{result.message} (rule: {result.rule})", hint=hint)
