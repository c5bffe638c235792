"""Measurements refused as evidence before anything is judged (pure; issue #31).

A measurement NVCRE wrote is evidence only when its numbers and times could have been
measured by this site's run (docs/design/0012-evidence.md, "Refused evidence"):

- NVC745: a number that is not a finite, non-negative decimal (`inf`, `nan`, `-465.1`,
  `abc`, `""`), or a row that averaged `samples: 0`; the object and field are named;
- NVC746: times that cannot be: `completionTime` before `startTime`, a time before the
  Certification or WorkloadRun that ran it was created, after the collection, or not an
  RFC 3339 time at all;
- NVC747: an owner reference to another object than the run's Workflow (another site's
  Workflow, say), though the measurement names a Job of the run; or a Workflow the run
  names in its status that another object owns (every measurement of it is refused).

A refused measurement counts in no figure. It keeps its place (group and round), so its
group and run are incomplete and none of the group's nodes is cleared.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from nvcregen.core import codes
from nvcregen.results.liveobjects import metadata, owner_uids, status_of
from nvcregen.results.models import (
    BandwidthMeasurement,
    Finality,
    Measurement,
    ResultError,
    object_ref,
)

NUMBER = codes.NVC745.code
TIME = codes.NVC746.code
OWNER = codes.NVC747.code


class Refusal(Measurement):
    """A measurement refused as evidence: where it is, which field, and why."""

    finality: Finality = Finality.NOT_EVALUATED
    code: str
    field: str = ""
    why: str


def unreadable(obj: Mapping[str, Any], error: ResultError) -> Refusal:
    """A measurement whose status could not be read: a number that is not one (NVC745)."""
    spec = obj.get("spec") if isinstance(obj.get("spec"), Mapping) else {}
    job = spec.get("jobRef") if isinstance(spec, Mapping) else None
    start = status_of(obj).get("startTime")
    field = error.field or "status"
    if error.value is None:
        why = f"{field} is missing or null: not a finite, non-negative number"
    else:
        why = f"{field} {error.value!r} is not a finite, non-negative number"
    return Refusal(
        ref=object_ref(obj),
        job=str(job.get("name") or "") if isinstance(job, Mapping) else "",
        owners=tuple(sorted(owner_uids(obj))),
        start_time=start if isinstance(start, str) else None,
        code=NUMBER,
        field=field,
        why=why,
    )


def stranger(workflow: Mapping[str, Any], owner: Mapping[str, Any]) -> str:
    """Why a Workflow a run names is not the run's own ("" when it is, or cannot be told).

    A Certification or WorkloadRun names its Workflow in its status; a Workflow owned by
    another object (another site's Certification) measured another run.
    """
    uid, owners = str(metadata(owner).get("uid") or ""), owner_uids(workflow)
    if not uid or not owners or uid in owners:
        return ""
    name = metadata(workflow).get("name")
    return (
        f"its Workflow {name} is owned by {', '.join(sorted(owners))}, not by this run's"
        f" {owner.get('kind')} ({uid})"
    )


def refusal(
    m: Measurement,
    workflow_uid: str,
    created: str | None,
    collected_at: str | None,
    foreign: str = "",
) -> Refusal | None:
    """Why a parsed measurement of a run cannot be evidence, or None when it can.

    Args:
        m: The measurement, placed in its run (group and round).
        workflow_uid: The uid of the run's Workflow ("" when it has none).
        created: When the run's Certification or WorkloadRun was created.
        collected_at: When the collection was made (RFC 3339).
        foreign: Why the run's Workflow is another object's (`stranger`), if it is.

    """
    if foreign:
        return _refused(m, OWNER, "metadata.ownerReferences", foreign)
    others = sorted(set(m.owners) - {workflow_uid}) if workflow_uid else []
    if others:
        why = f"metadata.ownerReferences names {', '.join(others)}, not the run's Workflow"
        return _refused(m, OWNER, "metadata.ownerReferences", f"{why} ({workflow_uid})")
    problem = _times(m, created, collected_at)
    if problem:
        return _refused(m, TIME, *problem)
    for index, row in enumerate(m.rows if isinstance(m, BandwidthMeasurement) else ()):
        if row.samples == 0:
            field = f"status.results[{index}].samples"
            return _refused(m, NUMBER, field, f"{field} is 0: the row averaged no measurement")
    return None


def _refused(m: Measurement, code: str, field: str, why: str) -> Refusal:
    kept = m.model_dump(include=set(Measurement.model_fields) - {"finality"})
    return Refusal(**kept, code=code, field=field, why=why)


def _times(m: Measurement, created: str | None, collected_at: str | None) -> tuple[str, str] | None:
    """The field whose time cannot be, and why (None when the times are possible)."""
    start, end = "status.startTime", "status.completionTime"
    stamps: dict[str, datetime] = {}
    for field, text in ((start, m.start_time), (end, m.completion_time)):
        if text is None:
            continue
        when = parse_time(text)
        if when is None:
            return field, f"{field} {text!r} is not an RFC 3339 time"
        stamps[field] = when
    if start in stamps and end in stamps and stamps[end] < stamps[start]:
        return end, f"{end} {m.completion_time} is before {start} {m.start_time}"
    born = parse_time(created) if created else None
    for field, when in stamps.items():
        if born is not None and when < born:
            return field, f"{field} {_text(when)} is before the run was created ({created})"
    now = parse_time(collected_at) if collected_at else None
    for field, when in stamps.items():
        if now is not None and when > now:
            return field, f"{field} {_text(when)} is after the collection ({collected_at})"
    return None


def parse_time(text: str) -> datetime | None:
    """An RFC 3339 time (a time without an offset is UTC), or None when it is not one."""
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        return None
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


def _text(when: datetime) -> str:
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def created_at(owner: Mapping[str, Any]) -> str | None:
    """An owner's `metadata.creationTimestamp`, when it has one."""
    text = metadata(owner).get("creationTimestamp")
    return str(text) if text else None
