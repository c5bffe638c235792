"""`nvcregen check --server`: dry-run every object on a real API server, as findings.

Each object goes through server-side apply with `dryRun=All` and strict field
validation (`nvcregen.cluster.dryrun`). What the server refuses becomes a finding at the
refused field, turned into a JSON pointer, so `check_tree` reports it at the generated
file's line. Codes: NVC640 rejected by the server, NVC641 kind unknown to the server
(its CRD is not installed), NVC642 server unreachable (one finding for the whole run).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from nvcregen.check.crossref import Located
from nvcregen.check.findings import Finding
from nvcregen.cluster.client import Cluster, ServerUnreachableError, connect
from nvcregen.cluster.dryrun import DryRunResult, dry_run_apply, serves
from nvcregen.core import codes
from nvcregen.core.fields import mapping_at
from nvcregen.core.labels import REQUIRES
from nvcregen.spec.positions import pointer

ServerCheck = Callable[[list[Located]], list[tuple[str, Finding]]]

REJECTED = codes.NVC640.code
UNKNOWN_KIND = codes.NVC641.code
UNREACHABLE = codes.NVC642.code
PRECONDITION = codes.NVC643.code

CRD_HINT = (
    "apply the CRD layer first (for NVCRE kinds, the chart's CRDs): an object whose kind "
    "the server does not know cannot be dry-run"
)
SCHEMA_HINT = (
    "the cluster's CRD or admission policy differs from what nvcregen checks offline "
    "(schemas/upstream/); compare the installed version with the vendored one"
)
STATUS_HINTS = {
    403: "a dry-run needs the same RBAC as a real apply: `patch` on this resource",
    409: "another field manager owns these fields; nvcregen applies with force=true",
}

# One step of a dotted field path: `.name`, `name` or `[index-or-key]`.
_FIELD_STEP = re.compile(r"\.?(?:\[([^\]]*)\]|([^.\[\]]+))")
# Where a Status without causes names the field in its message (strict field validation).
_FIELD_IN_MESSAGE = (
    re.compile(r'(?:unknown|duplicate) field "([^"]+)"'),
    re.compile(r"\.?([\w.\[\]/-]+): field not declared in schema"),
)


def server_check(context: str | None, kubeconfig: Path | None = None) -> ServerCheck:
    """Connect to a kubeconfig context now, and return the check `check_tree` runs.

    Args:
        context: The kubeconfig context whose API server dry-runs the objects; None
            for the current context.
        kubeconfig: The kubeconfig file; None for `$KUBECONFIG` or `~/.kube/config`.

    Returns:
        A function from the tree's objects to `(file, finding)` pairs.

    Raises:
        ClusterError: When the client is missing or the context cannot be used; no
            request has been sent at that point.

    """
    cluster = connect(context, kubeconfig)

    def check(objects: list[Located]) -> list[tuple[str, Finding]]:
        return server_findings(objects, cluster)

    return check


def server_findings(objects: list[Located], client: Cluster) -> list[tuple[str, Finding]]:
    """Dry-run each object; report refusals, unknown kinds, and an unreachable server once.

    Args:
        objects: The tree's objects, each with the file it was read from.
        client: A client from `nvcregen.cluster.client.connect`.

    Returns:
        `(file, finding)` pairs. When the server stops answering, one NVC642 finding on
        the object being sent, and no further object is tried.

    """
    try:
        found = precondition_findings(objects, client)
    except ServerUnreachableError:
        found = []  # the dry-run below reports the server once
    # CRDs first, as a GitOps controller applies them, so their CRs are judged after them.
    ordered = sorted(objects, key=lambda o: o.obj.get("kind") != "CustomResourceDefinition")
    for done, located in enumerate(ordered):
        try:
            result = dry_run_apply(client, located.obj)
        except ServerUnreachableError as exc:
            message = f"{exc}; dry-run stopped after {done} of {len(objects)} objects"
            hint = (
                "check the context's server address, credentials and network, e.g. "
                f"`kubectl --context {client.context} get --raw /version`"
            )
            found.append((located.file, Finding("", UNREACHABLE, message, hint=hint)))
            break
        found += [(located.file, finding) for finding in result_findings(located.obj, result)]
    return found


def precondition_findings(objects: list[Located], client: Cluster) -> list[tuple[str, Finding]]:
    """NVC643 for each API an object requires (`nvcregen.io/requires`) the server lacks.

    Raises:
        ServerUnreachableError: When discovery gets no answer.

    """
    found: list[tuple[str, Finding]] = []
    for located in objects:
        annotations = mapping_at(located.obj, "metadata", "annotations") or {}
        for api in filter(None, str(annotations.get(REQUIRES, "")).split(",")):
            api_version, _, kind = api.strip().rpartition("/")
            served = serves(client, api_version, kind)
            if served:
                continue
            state = "could not be checked (discovery failed)" if served is None else "is not served"
            message = f"this site requires {kind} ({api_version}), which {state} on the cluster"
            hint = (
                f"install {kind} before the site (the site's dependencies say another owner "
                "installs it), or let nvcregen install it (e.g. dependencies.jobset.managed: true)"
            )
            where = f"/metadata/annotations/{REQUIRES.replace('/', '~1')}"
            found.append((located.file, Finding(where, PRECONDITION, message, hint=hint)))
    return found


def result_findings(obj: Mapping[str, Any], result: DryRunResult) -> list[Finding]:
    """The findings for one object's dry-run: none when accepted, one per Status cause.

    Args:
        obj: The object that was sent.
        result: What the server answered.

    Returns:
        NVC641 at `/kind` for a kind the server does not serve; otherwise NVC640 at
        each cause's field (or at the field the message names, or the object).

    """
    if result.ok:
        return []
    what = _describe(obj)
    if not result.kind_known:
        message = f"{result.message}; {what} was not dry-run"
        return [Finding("/kind", UNKNOWN_KIND, message, hint=CRD_HINT)]
    hint = _hint(result)
    if not result.causes:
        message = f"the API server rejects {what} (HTTP {result.status_code}): {result.message}"
        return [Finding(_pointer_in(result.message), REJECTED, message, hint=hint)]
    return [
        Finding(
            field_pointer(field),
            REJECTED,
            f"the API server rejects {what}: {_cause_text(field, message)}",
            hint=hint,
        )
        for field, message in result.causes
    ]


def field_pointer(field: str) -> str:
    """Turn a field path as the API server writes it into a JSON pointer.

    Args:
        field: E.g. `spec.categories[0].options.gpusPerNode`, or
            `metadata.labels[app.kubernetes.io/name]` (a bracketed map key).

    Returns:
        E.g. `/spec/categories/0/options/gpusPerNode`; `""` (the whole object) when
        the field is empty or not a path.

    """
    text = field.strip()
    if text in {"", "<nil>", "<root>"}:
        return ""
    parts: list[str] = []
    position = 0
    while position < len(text):
        step = _FIELD_STEP.match(text, position)
        if step is None:
            return ""
        key = step.group(1) if step.group(1) is not None else step.group(2)
        parts.append(key.strip("\"'"))
        position = step.end()
    return pointer(parts)


def _pointer_in(message: str) -> str:
    for pattern in _FIELD_IN_MESSAGE:
        found = pattern.search(message)
        if found:
            return field_pointer(found.group(1))
    return ""


def _cause_text(field: str, message: str) -> str:
    return message if not field or field in message else f"{field}: {message}"


def _describe(obj: Mapping[str, Any]) -> str:
    meta = mapping_at(obj, "metadata") or {}
    namespace = f"{meta['namespace']}/" if meta.get("namespace") else ""
    return f"{obj.get('kind')} {namespace}{meta.get('name')}"


def _hint(result: DryRunResult) -> str:
    if result.status_code == 404 and 'namespaces "' in result.message:
        return "create the namespace first: a dry-run does not create it"
    if result.status_code in STATUS_HINTS:
        return STATUS_HINTS[result.status_code]
    if result.status_code >= 500:
        return "the server failed on every attempt; an admission webhook may be down"
    return SCHEMA_HINT if result.status_code in {400, 422} else ""
