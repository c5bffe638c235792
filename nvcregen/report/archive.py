"""Read a verified run folder: summary.json, verdicts.json, provenance.json, bandwidth.csv.

These files are the contract with `nvcregen collect` (see `nvcregen/results/`); they are
read here with models of their own, keeping only what the report shows and ignoring
keys it does not know, so the report depends on the files, not on collect's code.
"""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from nvcregen.core import codes
from nvcregen.report.folder import ReportError
from nvcregen.results.archiveread import ArchiveFileTooLargeError, read_capped
from nvcregen.results.attestation import signature_text

Word = Literal["pass", "fail", "incomplete"]
M = TypeVar("M", bound="FileModel")


class FileModel(BaseModel):
    """Base of the archive file models: frozen, unknown keys ignored."""

    model_config = ConfigDict(frozen=True, extra="ignore")


class Reason(FileModel):
    """Why a verdict is what it is."""

    code: str
    word: Word
    message: str = ""


class TransportCheck(FileModel):
    """What a threshold expected and what its rounds used."""

    expected: str | None = None
    seen: tuple[str, ...] = ()
    pinned: str | None = None
    checked: bool = False


class Figure(FileModel):
    """One figure over a group's final rounds, with its own median and spread."""

    name: str
    unit: str = ""
    rounds: tuple[float, ...] = ()
    median: float | None = None
    spread: float | None = None


class GroupVerdict(FileModel):
    """One group's verdict on one threshold."""

    group: str = ""
    nodes: tuple[str, ...] = ()
    word: Word
    reasons: tuple[Reason, ...] = ()
    rounds: int = 0
    final_rounds: int = 0
    figures: tuple[Figure, ...] = ()
    transport: TransportCheck = TransportCheck()


class ThresholdVerdict(FileModel):
    """One comparison of one site threshold, for one stage."""

    threshold: int
    test: str
    scope: str
    stage: str = ""
    field: str
    comparison: str = ""
    bound: float | None = None
    unit: str = ""
    at: str | None = None
    size_bytes: int | None = None
    word: Word
    reasons: tuple[Reason, ...] = ()
    groups: tuple[GroupVerdict, ...] = ()


class RunVerdict(FileModel):
    """One planned test of one stage, as NVCRE finished it."""

    stage: str
    scope: str
    test: str
    source: str = ""
    state: str
    word: Word
    reasons: tuple[Reason, ...] = ()


class ExportVerdict(FileModel):
    """Whether a ReportExport's saved report verified."""

    name: str
    source: str = ""
    verification: str
    word: Word
    detail: str = ""


class NodeRun(FileModel):
    """One group of one run that held a node, and how it ended."""

    stage: str
    scope: str = ""
    test: str
    group: str = ""
    nodes: tuple[str, ...] = ()
    word: Word
    why: str = ""


class NodeVerdict(FileModel):
    """One node: failed, suspect, excluded, untested or cleared, and why."""

    node: str
    status: Literal["failed", "suspect", "excluded", "untested", "cleared"]
    word: Word
    reasons: tuple[str, ...] = ()
    runs: tuple[NodeRun, ...] = ()


class Finding(FileModel):
    """What the evidence of one run showed: unbound, implausible, an anomaly, a note."""

    code: str
    kind: str
    word: Word
    stage: str = ""
    test: str = ""
    group: str = ""
    round: int | None = None
    source: str = ""
    sizes: tuple[int, ...] = ()
    message: str


class VerdictsFile(FileModel):
    """verdicts.json."""

    word: Word
    thresholds: tuple[ThresholdVerdict, ...] = ()
    runs: tuple[RunVerdict, ...] = ()
    exports: tuple[ExportVerdict, ...] = ()
    nodes: tuple[NodeVerdict, ...] = ()
    findings: tuple[Finding, ...] = ()


class FailedNode(FileModel):
    """A node NVCRE failed, and why."""

    name: str
    reason: str = ""
    message: str = ""


class Ref(FileModel):
    """The object a measurement was read from."""

    kind: str = ""
    name: str = ""


class GoodputComponents(FileModel):
    """The times (seconds) goodput is computed from."""

    training: float | None = None
    lost_work: float | None = None
    resume: float | None = None
    reschedule: float | None = None
    checkpoint_save: float | None = None


class GoodputRound(FileModel):
    """One round of a training run."""

    ref: Ref = Ref()
    group: str = ""
    iteration: int | None = None
    finality: str
    reason: str = ""
    ratio: float | None = None
    components: GoodputComponents = GoodputComponents()
    avg_step_time_sec: float | None = None
    avg_tflops_per_gpu: float | None = None
    interruptions: int | None = None


class BandwidthRound(FileModel):
    """One round of one group of an NCCL run, as summary.json records it."""

    ref: Ref = Ref()
    group: str = ""
    nodes: tuple[str, ...] = ()
    iteration: int | None = None
    finality: str = ""
    completion_time: str | None = None
    transports: tuple[str, ...] = ()


class RunSummary(FileModel):
    """One planned test of one stage in summary.json."""

    stage: str
    scope: str
    test: str
    expected_transport: str | None = None
    pinned_transport: str | None = None
    state: str = ""
    reason: str = ""
    message: str = ""
    excluded_nodes: tuple[str, ...] = ()
    exclusion_reason: str = ""
    failed_nodes: tuple[FailedNode, ...] = ()
    unjudged_nodes: tuple[FailedNode, ...] = ()
    bandwidth: tuple[BandwidthRound, ...] = ()
    goodput: tuple[GoodputRound, ...] = ()
    superseded: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()


class LogEntry(FileModel):
    """One log a trainer-mode collection read, as summary.json's `logs` records it."""

    path: str
    run: str = ""
    round: int = 0
    finished_at: str | None = None


class SummaryFile(FileModel):
    """summary.json."""

    site: str
    run_id: str
    finished_at: str | None = None
    verdict: Word
    counts: dict[str, int] = Field(default_factory=dict)
    collected_from: str = ""
    runs: tuple[RunSummary, ...] = ()
    problems: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    logs: tuple[LogEntry, ...] = ()


class SiteRef(FileModel):
    """The site file the results were judged against."""

    name: str
    file: str = ""
    sha256: str = ""


class Image(FileModel):
    """An image the objects name, and its digest (None when tag-only)."""

    image: str
    digest: str | None = None


class ProvenanceFile(FileModel):
    """provenance.json."""

    site: SiteRef
    nvcregen: str = ""
    collected_from: str = ""
    images: tuple[Image, ...] = ()
    nccl_versions: tuple[str, ...] = ()
    gpu_models: tuple[str, ...] = ()
    cuda_drivers: tuple[str, ...] = ()


@dataclass(frozen=True)
class BandwidthRow:
    """One row of bandwidth.csv: one message size of one round of one group."""

    stage: str
    scope: str
    test: str
    group: str
    round: int | None
    measurement: str
    finality: str
    reason: str
    size_bytes: int
    algbw: float
    busbw: float
    transports: tuple[str, ...]


@dataclass(frozen=True)
class Archive:
    """Everything the report shows of one run folder."""

    path: Path
    summary: SummaryFile
    verdicts: VerdictsFile
    provenance: ProvenanceFile
    bandwidth: tuple[BandwidthRow, ...]
    signature: str = ""  # signed by which key, or unsigned (`results/attestation.py`)


READ = ("summary.json", "verdicts.json", "provenance.json", "bandwidth.csv")


def read_texts(folder: Path) -> dict[str, str]:
    """The texts of the files the report reads.

    Raises:
        ReportError: When one cannot be read as UTF-8 text.

    """
    return {name: _text(folder, name) for name in READ}


def read_archive(folder: Path, texts: dict[str, str] | None = None) -> Archive:
    """Read a run folder's files (verify it first: see `folder.verified_run`).

    Args:
        folder: The run folder.
        texts: The files' texts, when already read (and perhaps sanitized).

    Raises:
        ReportError: When a file is not what `nvcregen collect` writes.

    """
    found = texts if texts is not None else read_texts(folder)
    return Archive(
        path=folder,
        summary=_json(folder, "summary.json", SummaryFile, found),
        verdicts=_json(folder, "verdicts.json", VerdictsFile, found),
        provenance=_json(folder, "provenance.json", ProvenanceFile, found),
        bandwidth=read_bandwidth(found["bandwidth.csv"]),
        signature=signature_text(folder),
    )


def _text(folder: Path, name: str) -> str:
    try:
        return read_capped(folder / name).decode("utf-8")
    except ArchiveFileTooLargeError as exc:
        raise ReportError(f"{folder / name}: {exc}") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise ReportError(f"{folder / name} cannot be read: {exc}") from exc


def _json(folder: Path, name: str, model: type[M], texts: dict[str, str]) -> M:
    try:
        return model.model_validate(json.loads(texts[name]))
    except json.JSONDecodeError as exc:
        raise ReportError(f"{folder / name}: error[NVC716]: not JSON: {exc}") from exc
    except RecursionError as exc:  # hostile nesting: the archive is not trusted
        raise ReportError(f"{folder / name}: error[NVC714]: nested too deeply to be read") from exc
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        where = ".".join(str(p) for p in first["loc"]) or "(top)"
        raise ReportError(f"{folder / name}: {where}: {first['msg']}") from exc
    except ValueError as exc:  # int() of more than 4300 digits: the archive is not trusted
        code = codes.NVC713.code if "digits" in str(exc) else codes.NVC716.code
        raise ReportError(f"{folder / name}: error[{code}]: cannot be decoded: {exc}") from exc


def read_bandwidth(text: str) -> tuple[BandwidthRow, ...]:
    """The rows of bandwidth.csv, by column name (extra columns ignored).

    Raises:
        ReportError: When a column is missing or a number is not a number.

    """
    try:
        return tuple(
            _row(line, record) for line, record in enumerate(csv.DictReader(io.StringIO(text)), 2)
        )
    except csv.Error as exc:  # a field over the csv module's limit, a NUL byte
        raise ReportError(f"bandwidth.csv: error[NVC716]: cannot be read: {exc}") from exc


def _row(line: int, record: dict[str, str]) -> BandwidthRow:
    try:
        return BandwidthRow(
            stage=record["stage"],
            scope=record["scope"],
            test=record["test"],
            group=record["group"],
            round=int(record["round"]) if record["round"] else None,
            measurement=record["measurement"],
            finality=record["finality"],
            reason=record["reason"],
            size_bytes=int(record["size_bytes"]),
            algbw=_finite(record["algbw_gbs"]),
            busbw=_finite(record["busbw_gbs"]),
            transports=tuple(t for t in record["transport"].split(";") if t),
        )
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        code = "error[NVC713]: " if "digits" in str(exc) else ""  # int() of 4300 digits
        raise ReportError(f"bandwidth.csv line {line}: {code}{exc!r}") from exc


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"not a bandwidth: {text!r}")
    return value
