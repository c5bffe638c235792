"""One generated object's problems, as an API server and nvcregen's policies see it.

Apart from the render gate (`check/gate.py`) so that what a `check` worker imports holds
no site or catalog models: the workers start before the parent has imported those.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from nvcregen.check.cel import CelResult, reported_rules, uses_old_self
from nvcregen.check.findings import Finding
from nvcregen.check.podsets import cel_view, in_containers, moved, probe, split_containers
from nvcregen.check.policy import check_policies
from nvcregen.check.required import required_findings
from nvcregen.check.webhooks import SIZE_CODE, size_findings, webhook_findings
from nvcregen.core import codes
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

    A Kueue Workload's container lists (a prebuilt Workload repeats its run's, and every
    run of a test has the same) are checked once per distinct list (`check/podsets.py`).

    Args:
        obj: The object.
        kube_version: Selects the core Kubernetes schemas.
        strict: Tag-only images become errors.
        old: The object's previous version, for transition rules; None checks as a create.

    Returns:
        Structural schema problems, failed and unchecked CEL rules, webhook-only rules,
        then policy findings.

    """
    if old is None and (split := split_containers(obj)) is not None:
        skeleton, lists = split
        found = _object_findings(
            skeleton, kube_version=kube_version, strict=strict, cel_view=cel_view(skeleton)
        )
        # The skeleton's size is not the object's: NVC658 measures the whole Workload.
        found = [f for f in found if f.code != SIZE_CODE] + size_findings(obj)
        for index, key in lists:
            found += [
                moved(f, index)
                for f in _container_findings(key, kube_version=kube_version, strict=strict)
            ]
        return found
    return _object_findings(obj, kube_version=kube_version, strict=strict, old=old)


@functools.lru_cache(maxsize=4096)
def _container_findings(key: str, *, kube_version: str, strict: bool) -> tuple[Finding, ...]:
    """The findings of one container list, checked in a Workload of its own (cached)."""
    found = _object_findings(probe(key), kube_version=kube_version, strict=strict)
    return tuple(f for f in found if in_containers(f))


def _object_findings(
    obj: Mapping[str, Any],
    *,
    kube_version: str,
    strict: bool,
    old: Mapping[str, Any] | None = None,
    cel_view: Mapping[str, Any] | None = None,
) -> list[Finding]:
    """`object_findings` of one whole object; CEL rules run on `cel_view` when given."""
    registry = default_registry()
    data, converted = to_json(obj)  # one walk over the object: plain JSON from here on
    if converted or not isinstance(data, dict):
        problems = registry.validate(obj, kube_version=kube_version)
    else:
        problems = registry.validate_json(data, kube_version=kube_version)
    findings = [Finding(p.pointer, p.code, p.message) for p in problems]
    # CEL rules assume a structurally valid object, as the API server does.
    if not problems and isinstance(data, dict):
        view = data if cel_view is None else to_json(cel_view)[0]
        cel_data = view if isinstance(view, dict) else data
        findings += [_cel_finding(r) for r in reported_rules(cel_data, old=old)]
    findings += webhook_findings(obj) + required_findings(obj)
    return findings + check_policies(obj, strict=strict)


def _cel_finding(result: CelResult) -> Finding:
    if result.status == "unchecked":
        return Finding(
            result.pointer,
            codes.NVC611.code,
            f"CEL rule not checked offline ({result.reason}): {result.rule}",
            Severity.WARNING,
            "the API server will evaluate it; `nvcregen check --server` does so now",
        )
    hint = ""
    if uses_old_self(result.rule):
        hint = "this change needs a new object name: the field is immutable once created"
    return Finding(
        result.pointer, codes.NVC610.code, f"{result.message} (rule: {result.rule})", hint=hint
    )
