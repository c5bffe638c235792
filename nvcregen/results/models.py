"""Results as NVCRE reports them, parsed from each object's `.status` into typed models.

NVCRE writes numbers as decimal strings ("473.44", "0.942373"); they are parsed as
floats here, and a value that is not a finite number is an error, never a zero. Which
measurements count is decided by their conditions (nvcre-api §1.5, §1.6):

- bandwidth: only `Complete=True` with reason `JobSucceeded` is final. `NoDataCollected`
  and `LogsUnavailable` are provisional, `JobFailed` is not evaluated, and anything
  still `Measuring` (or waiting on `FinalReadPending`) is provisional;
- goodput: `Complete=True` is final (its status is frozen from then on), with the same
  exceptions for the reasons above.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel

from nvcregen.results.liveobjects import metadata, owner_uids, status_of

PROVISIONAL_REASONS = frozenset({"NoDataCollected", "LogsUnavailable"})
FINAL_BANDWIDTH_REASON = "JobSucceeded"
FAILED_JOB_REASON = "JobFailed"


class Finality(enum.StrEnum):
    """Whether a measurement may be judged."""

    FINAL = "final"
    PROVISIONAL = "provisional"
    NOT_EVALUATED = "not-evaluated"


class RunState(enum.StrEnum):
    """Where a Certification category, WorkloadRun or Workflow stands."""

    SUCCEEDED = "succeeded"
    FAILED = "failed"
    IN_PROGRESS = "in-progress"
    PENDING = "pending"


class ResultError(ValueError):
    """An object's status cannot be read as NVCRE documents it.

    `field` names the first field that could not be read (`status.results[2].busBW`)
    and `value` what it held, when the error is about one field.
    """

    def __init__(self, message: str, *, field: str = "", value: object = None) -> None:
        super().__init__(message)
        self.field = field
        self.value = value


def _decimal(value: object) -> float:
    """A decimal string (or number) as a finite float."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        # pydantic reports a ValueError as a validation error; a TypeError would escape
        raise ValueError(f"expected a decimal number, got {value!r}")  # noqa: TRY004
    number = float(value)
    if not math.isfinite(number):
        raise ValueError(f"expected a finite number, got {value!r}")
    return number


Decimal = Annotated[float, BeforeValidator(_decimal)]


class StatusModel(BaseModel):
    """Base of the models read from `.status`: camelCase keys, unknown keys ignored.

    The models a collection is judged with are also the parts of its archive's files,
    dumped with their field names (`archivemodel.py`); read back from an archive, a
    key it lacks takes its default.
    """

    model_config = ConfigDict(
        frozen=True, extra="ignore", alias_generator=to_camel, validate_by_name=True
    )


class Condition(StatusModel):
    """One `metav1.Condition`."""

    type: str
    status: Literal["True", "False", "Unknown"]
    reason: str = ""
    message: str = ""


class BandwidthRow(StatusModel):
    """Average bandwidths of one message size (GB/s, out-of-place columns)."""

    size_bytes: Annotated[int, Field(ge=0)]
    alg_bw: Annotated[Decimal, Field(alias="algBW", ge=0)]
    bus_bw: Annotated[Decimal, Field(alias="busBW", ge=0)]
    samples: Annotated[int, Field(ge=0)]


class BandwidthStatus(StatusModel):
    """`BandwidthMeasurement.status`; `transport` only where NVCRE records it."""

    results: list[BandwidthRow] = Field(default_factory=list)
    transport: list[str] = Field(default_factory=list)
    conditions: list[Condition] = Field(default_factory=list)
    start_time: str | None = None
    completion_time: str | None = None


class GoodputStatus(StatusModel):
    """`GoodputMeasurement.status`: the ratio and the times it is computed from."""

    result: Annotated[Decimal, Field(ge=0, le=1)] | None = None
    training_time_sec: Decimal | None = None
    lost_work_time_sec: Decimal | None = None
    resume_time_sec: Decimal | None = None
    reschedule_time_sec: Decimal | None = None
    checkpoint_save_time_sec: Decimal | None = None
    avg_step_time_sec: Decimal | None = None
    avg_tflops_per_gpu: Annotated[Decimal | None, Field(alias="avgTFLOPSPerGPU")] = None
    interruption_count: int | None = None
    conditions: list[Condition] = Field(default_factory=list)
    start_time: str | None = None
    completion_time: str | None = None


class FailedNode(StatusModel):
    """A node NVCRE failed, and why (HardwareFailureDetected, ThresholdViolation, ...)."""

    name: str
    reason: str = ""
    message: str = ""


class ObjectRef(StatusModel):
    """Which object a result was read from."""

    kind: str = ""
    namespace: str = ""
    name: str = ""
    uid: str = ""


class Measurement(StatusModel):
    """What every measurement shares: where it came from, its Job, whether it counts."""

    ref: ObjectRef = ObjectRef()
    job: str = ""
    owners: tuple[str, ...] = ()
    group: str = ""
    nodes: tuple[str, ...] = ()
    iteration: int | None = None
    finality: Finality = Finality.PROVISIONAL  # an archive's round that does not say is not final
    reason: str = ""
    start_time: str | None = None
    completion_time: str | None = None


class RankRecord(StatusModel):
    """Who produced one rank's numbers, as the log's device list names it."""

    rank: int
    host: str
    device: int | None = None
    model: str = ""


class BandwidthMeasurement(Measurement):
    """One Job's bandwidths per message size.

    `from_log` marks a round read from a saved log (trainer mode), whose device list
    (`ranks`) says who ran it, and `scheduled_on` the node its launcher pod ran on as
    the API said; NVCRE's objects name only the group's nodes.
    """

    test_type: str = ""
    rows: tuple[BandwidthRow, ...] = ()
    transports: tuple[str, ...] = ()
    from_log: bool = False
    ranks: tuple[RankRecord, ...] = ()
    scheduled_on: tuple[str, ...] = ()

    def at(self, size_bytes: int) -> BandwidthRow | None:
        """The row of one message size, if it was measured."""
        return next((r for r in self.rows if r.size_bytes == size_bytes), None)


class GoodputComponents(StatusModel):
    """The times (seconds) goodput is computed from (nvcre-api §5.2)."""

    training: float | None = None
    lost_work: float | None = None
    resume: float | None = None
    reschedule: float | None = None
    checkpoint_save: float | None = None

    def ratio(self) -> float | None:
        """(t_w - t_ch - t_rm - t_re - t_save) / (t_w - t_re), when every time is known."""
        parts = (self.training, self.lost_work, self.resume, self.reschedule)
        if any(p is None for p in parts) or self.checkpoint_save is None:
            return None
        t_w, t_ch, t_rm, t_re = (float(p) for p in parts)  # type: ignore[arg-type]
        if t_w - t_re <= 0:
            return None
        return (t_w - t_ch - t_rm - t_re - self.checkpoint_save) / (t_w - t_re)


class GoodputMeasurement(Measurement):
    """One Job's goodput, its components, and the training speed."""

    ratio: float | None = None
    components: GoodputComponents = Field(default_factory=GoodputComponents)
    avg_step_time_sec: float | None = None
    avg_tflops_per_gpu: float | None = None
    interruptions: int | None = None


def find_condition(conditions: Sequence[Condition], kind: str) -> Condition | None:
    """The condition of one type, if present."""
    return next((c for c in conditions if c.type == kind), None)


def measurement_finality(
    conditions: Sequence[Condition], *, final_reason: str | None
) -> tuple[Finality, str]:
    """Finality of a measurement from its `Complete` and `Measuring` conditions.

    Args:
        conditions: The measurement's conditions.
        final_reason: The one `Complete` reason that is final (bandwidth: JobSucceeded);
            None when every `Complete=True` reason but the known exceptions is.

    """
    complete = find_condition(conditions, "Complete")
    if complete is not None and complete.status == "True":
        reason = complete.reason or "Complete"
        if reason == FAILED_JOB_REASON:
            return Finality.NOT_EVALUATED, reason
        if reason in PROVISIONAL_REASONS or final_reason not in {None, reason}:
            return Finality.PROVISIONAL, reason
        return Finality.FINAL, reason
    measuring = find_condition(conditions, "Measuring")
    if measuring is not None and measuring.status == "True":
        return Finality.PROVISIONAL, "Measuring"
    if measuring is not None and measuring.reason:
        return Finality.PROVISIONAL, measuring.reason
    return Finality.PROVISIONAL, "NotComplete"


def object_ref(obj: Mapping[str, Any]) -> ObjectRef:
    """Kind, namespace, name and uid of an object."""
    meta = metadata(obj)
    return ObjectRef(
        kind=str(obj.get("kind", "")),
        namespace=str(meta.get("namespace") or ""),
        name=str(meta.get("name") or ""),
        uid=str(meta.get("uid") or ""),
    )


def _parse(model: type[StatusModel], obj: Mapping[str, Any]) -> Any:
    try:
        return model.model_validate(dict(status_of(obj)))
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        where = field_path(first["loc"])
        raise ResultError(
            f"{object_ref(obj).kind} {object_ref(obj).name}: {where}: {first['msg']}",
            field=where,
            value=None if first["type"] == "missing" else first.get("input"),
        ) from exc


def field_path(loc: Sequence[int | str]) -> str:
    """A validation error's location under `.status`, as `status.results[2].busBW`."""
    path = "status"
    for part in loc:
        path += f"[{part}]" if isinstance(part, int) else f".{part}"
    return path


def _common(obj: Mapping[str, Any], status: BandwidthStatus | GoodputStatus) -> dict[str, Any]:
    spec = obj.get("spec") or {}
    owners = tuple(sorted(owner_uids(obj)))
    return {
        "ref": object_ref(obj),
        "job": str((spec.get("jobRef") or {}).get("name") or ""),
        "owners": owners,
        "start_time": status.start_time,
        "completion_time": status.completion_time,
    }


def parse_bandwidth(obj: Mapping[str, Any]) -> BandwidthMeasurement:
    """A BandwidthMeasurement's results and finality.

    Raises:
        ResultError: When the status does not follow the CRD schema.

    """
    status: BandwidthStatus = _parse(BandwidthStatus, obj)
    finality, reason = measurement_finality(status.conditions, final_reason=FINAL_BANDWIDTH_REASON)
    return BandwidthMeasurement(
        **_common(obj, status),
        finality=finality,
        reason=reason,
        test_type=str((obj.get("spec") or {}).get("testType") or ""),
        rows=tuple(sorted(status.results, key=lambda r: r.size_bytes)),
        transports=tuple(sorted(set(status.transport))),
    )


def parse_goodput(obj: Mapping[str, Any]) -> GoodputMeasurement:
    """A GoodputMeasurement's ratio, components and finality.

    Raises:
        ResultError: When the status does not follow the CRD schema.

    """
    status: GoodputStatus = _parse(GoodputStatus, obj)
    finality, reason = measurement_finality(status.conditions, final_reason=None)
    components = GoodputComponents(
        training=status.training_time_sec,
        lost_work=status.lost_work_time_sec,
        resume=status.resume_time_sec,
        reschedule=status.reschedule_time_sec,
        checkpoint_save=status.checkpoint_save_time_sec,
    )
    return GoodputMeasurement(
        **_common(obj, status),
        finality=finality,
        reason=reason,
        ratio=status.result,
        components=components,
        avg_step_time_sec=status.avg_step_time_sec,
        avg_tflops_per_gpu=status.avg_tflops_per_gpu,
        interruptions=status.interruption_count,
    )
