"""Compressed payloads NVCRE keeps in ConfigMaps: node results and report snapshots.

- Node results (ADR-055/061): a Workflow's `failedNodesRef` names a ConfigMap whose
  `binaryData["failed-nodes.json.gz"]` is gzip of a JSON array of `{name, reason,
  message}`; `succeededNodesRef` names one whose `binaryData["succeeded-nodes.csv.gz"]`
  is gzip of comma-separated node names.
- Report snapshots: a ReportExport's `status.snapshotRef` names an immutable ConfigMap
  (owned by the export) whose `binaryData["report.json.gz"]` is gzip of the report
  envelope; `status.sha256` is the hex SHA-256 of the uncompressed envelope and
  `status.payloadBytes` its length.
"""

from __future__ import annotations

import base64
import binascii
import enum
import gzip
import hashlib
import io
import json
import zlib
from collections.abc import Mapping
from typing import Any

from pydantic import TypeAdapter, ValidationError

from nvcregen.results.liveobjects import status_of
from nvcregen.results.models import FailedNode, ObjectRef, ResultError, StatusModel, object_ref

FAILED_NODES_KEY = "failed-nodes.json.gz"
SUCCEEDED_NODES_KEY = "succeeded-nodes.csv.gz"
SNAPSHOT_KEY = "report.json.gz"
MAX_PAYLOAD = 64 * 1024 * 1024  # never inflate more than this from one ConfigMap key
_FAILED_NODES = TypeAdapter(list[FailedNode])


class Verification(enum.StrEnum):
    """Whether a ReportExport's saved report matches the digest NVCRE recorded."""

    VERIFIED = "verified"
    MISMATCH = "mismatch"
    NO_SNAPSHOT = "no-snapshot"
    NOT_READY = "not-ready"


class ReportExportResult(StatusModel):
    """A ReportExport, its delivery, and whether its snapshot verified."""

    ref: ObjectRef
    source: str
    phase: str = ""
    result: str = ""
    sha256: str = ""
    payload_bytes: int | None = None
    verification: Verification
    detail: str = ""


def inflate(configmap: Mapping[str, Any], key: str) -> bytes | None:
    """The uncompressed bytes of one `binaryData` key (None when the key is absent).

    Raises:
        ResultError: When the value is not base64 of gzip data, or inflates past
            `MAX_PAYLOAD` bytes.

    """
    encoded = (configmap.get("binaryData") or {}).get(key)
    if encoded is None:
        return None
    name = (configmap.get("metadata") or {}).get("name", "?")
    try:
        raw = base64.b64decode(str(encoded), validate=True)
        with gzip.GzipFile(fileobj=io.BytesIO(raw)) as stream:
            data = stream.read(MAX_PAYLOAD + 1)
    except (binascii.Error, OSError, EOFError, zlib.error) as exc:
        raise ResultError(f"ConfigMap {name}: {key} is not base64 gzip data: {exc}") from exc
    if len(data) > MAX_PAYLOAD:
        raise ResultError(f"ConfigMap {name}: {key} inflates past {MAX_PAYLOAD} bytes")
    return data


def failed_nodes(configmap: Mapping[str, Any]) -> tuple[FailedNode, ...]:
    """The failed nodes, with their reasons, from a node-results ConfigMap.

    Raises:
        ResultError: When the payload is not gzip JSON of `{name, reason, message}` items.

    """
    data = inflate(configmap, FAILED_NODES_KEY)
    if data is None:
        return ()
    try:
        return tuple(_FAILED_NODES.validate_json(data))
    except ValidationError as exc:
        name = (configmap.get("metadata") or {}).get("name", "?")
        problem = exc.errors(include_url=False)[0]["msg"]
        raise ResultError(f"ConfigMap {name}: {FAILED_NODES_KEY}: {problem}") from exc


def succeeded_nodes(configmap: Mapping[str, Any]) -> tuple[str, ...]:
    """The nodes that passed, from a node-results ConfigMap."""
    data = inflate(configmap, SUCCEEDED_NODES_KEY)
    if data is None:
        return ()
    text = data.decode("utf-8", "replace")
    return tuple(n.strip() for n in text.replace("\n", ",").split(",") if n.strip())


def report_export(
    export: Mapping[str, Any], snapshot: Mapping[str, Any] | None
) -> ReportExportResult:
    """Verify a ReportExport's snapshot against the digest and size in its status.

    Args:
        export: The ReportExport.
        snapshot: The ConfigMap its `status.snapshotRef` names, if it was read.

    """
    status = status_of(export)
    source = (export.get("spec") or {}).get("sourceRef") or {}
    fields: dict[str, Any] = {
        "ref": object_ref(export),
        "source": str(source.get("name") or ""),
        "phase": str(status.get("phase") or ""),
        "result": str(status.get("result") or ""),
        "sha256": str(status.get("sha256") or "").lower(),
        "payload_bytes": status.get("payloadBytes"),
    }
    verification, detail = _verify(fields["sha256"], fields["payload_bytes"], snapshot, status)
    return ReportExportResult(**fields, verification=verification, detail=detail)


def _verify(
    digest: str, size: object, snapshot: Mapping[str, Any] | None, status: Mapping[str, Any]
) -> tuple[Verification, str]:
    if not digest:
        return Verification.NOT_READY, f"no sha256 yet (phase {status.get('phase') or 'unset'})"
    if snapshot is None:
        ref = (status.get("snapshotRef") or {}).get("name")
        why = f"ConfigMap {ref} was not found" if ref else "status.snapshotRef is not set"
        return Verification.NO_SNAPSHOT, f"{why}; its retention may have expired"
    try:
        body = inflate(snapshot, SNAPSHOT_KEY)
    except ResultError as exc:
        return Verification.MISMATCH, str(exc)
    problem = _mismatch(body, digest, size)
    if problem or body is None:
        return Verification.MISMATCH, problem
    return Verification.VERIFIED, _envelope_result(body)


def _mismatch(body: bytes | None, digest: str, size: object) -> str:
    """What differs between a snapshot and the digest and size recorded for it."""
    if body is None:
        return f"the snapshot has no {SNAPSHOT_KEY}"
    actual = hashlib.sha256(body).hexdigest()
    if actual != digest:
        return f"sha256 of the snapshot is {actual}, status says {digest}"
    if isinstance(size, int) and size != len(body):
        return f"the snapshot has {len(body)} bytes, status says {size}"
    return ""


def _envelope_result(body: bytes) -> str:
    """The report's own verdict (PASSED, FAILED, INCOMPLETE), when the envelope says it."""
    try:
        envelope = json.loads(body)
    except ValueError:
        return "the envelope is not JSON"
    result = (envelope.get("report") or {}).get("result") if isinstance(envelope, dict) else None
    return f"report result {result}" if result else ""
