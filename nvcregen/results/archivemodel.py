"""The archive's readable files as one typed model: what `collect` writes, what every reader reads.

    summary.json      SummaryFile     runs (`runs.RunResult`), exports, logs read, problems
    verdicts.json     Verdicts        every verdict (`verdicts.Verdicts`, with its parts)
    provenance.json   ProvenanceFile  site file, tool version, listings, images, versions
    bandwidth.csv     BandwidthCsvRow one row per round and message size

`collect` (both engines) builds these models and writes them with `file_text` and
`bandwidth_text`; `report`, `history`, `export metrics`, `retest` and `quarantine`
read them back with `read_json_file` and `read_bandwidth_csv`; the test factories build
archives with them; `schemas/archive.v1alpha1.json` is generated from them
(`results/archiveschema.py`). The parts of a file are the models the results are
judged with (`results/models.py`, `runs.py`, `verdicts.py`, ...), dumped as they are:
there is no second description of a run or a verdict.

An archive is untrusted input (`docs/design/0013-hostile-results.md`): a file is read
whole only under its cap (`archiveread.py`, NVC759), JSON nested too deeply is NVC714,
a number of more than 4,300 digits NVC713, anything else that does not decode NVC716,
and a value of the wrong type is named by its place in the file. Keys a reader does
not know are ignored, so an archive written by a later nvcregen still reads; keys a
reader needs and an earlier archive lacks take their defaults.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Iterable
from typing import Any, ClassVar, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    ValidationError,
    model_serializer,
)

from nvcregen.core import codes
from nvcregen.core.secrets import redact_data
from nvcregen.results.logrecords import LogRecord
from nvcregen.results.payloads import ReportExportResult
from nvcregen.results.runs import RunResult
from nvcregen.results.verdicts import Verdicts
from nvcregen.results.words import Word

M = TypeVar("M", bound=BaseModel)

BANDWIDTH_COLUMNS = (
    "stage",
    "scope",
    "test",
    "group",
    "round",
    "measurement",
    "finality",
    "reason",
    "size_bytes",
    "time_us",
    "algbw_gbs",
    "busbw_gbs",
    "samples",
    "transport",
)


class ArchiveFileError(ValueError):
    """A file of an archive that is not what `collect` writes (the message says where)."""


class FileModel(BaseModel):
    """Base of the file models: frozen, unknown keys ignored.

    A key named in `WRITTEN_WHEN_SET` is written only when it was given (a trainer
    collection's `logs`, say): an archive of the other engine never had it.
    """

    model_config = ConfigDict(frozen=True, extra="ignore")
    WRITTEN_WHEN_SET: ClassVar[frozenset[str]] = frozenset()

    @model_serializer(mode="wrap")
    def _leave_out_unset(self, handler: SerializerFunctionWrapHandler) -> Any:
        data = handler(self)
        if isinstance(data, dict):
            for name in self.WRITTEN_WHEN_SET - self.model_fields_set:
                data.pop(name, None)
        return data


class SiteRef(FileModel):
    """The site file the results were judged against: its name, path and sha256."""

    name: str
    file: str = ""
    sha256: str = ""


class Listing(FileModel):
    """One complete listing of a cluster: what was asked and how it was read."""

    kind: str
    namespace: str | None = None
    label_selector: str = ""
    resource_version: str = ""
    items: int = 0
    pages: int = 1
    restarts: int = 0
    served: bool = True


class ImageRecord(FileModel):
    """An image the objects' specs name, its digest (None when tag-only) and where."""

    image: str
    digest: str | None = None
    objects: tuple[str, ...] = ()


class LogDigest(FileModel):
    """One log a trainer-mode collection read, whole: its path and sha256."""

    path: str
    sha256: str = ""


class RunFacts(FileModel):
    """What finding a site's runs reads of summary.json: its run id and when it finished.

    A run folder is listed and ordered by these alone, before the rest of the file is
    read (`report/folder.py`): "" and None when summary.json does not say.
    """

    run_id: str = ""
    finished_at: str | None = None


class SummaryFile(RunFacts):
    """summary.json: what was collected, run by run, with the overall verdict.

    `logs` (every log read, per section of a packed log) is written by a trainer-mode
    collection, and by an NVCRE one that read node-health logs.
    """

    WRITTEN_WHEN_SET: ClassVar[frozenset[str]] = frozenset({"logs"})

    site: str
    run_id: str
    verdict: Word
    counts: dict[str, int] = Field(default_factory=dict)
    collected_from: str = ""
    objects: dict[str, int] = Field(default_factory=dict)
    runs: tuple[RunResult, ...] = ()
    report_exports: tuple[ReportExportResult, ...] = ()
    problems: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    logs: tuple[LogRecord, ...] = ()


class ProvenanceFile(FileModel):
    """provenance.json: where the results come from.

    `gpu_models`, `cuda_drivers`, `dcgm_versions` and `logs` (each log once, whole) are
    written by a trainer-mode collection only.
    """

    WRITTEN_WHEN_SET: ClassVar[frozenset[str]] = frozenset(
        {"gpu_models", "cuda_drivers", "dcgm_versions", "logs"}
    )

    site: SiteRef
    nvcregen: str = ""
    collected_from: str = ""
    listings: tuple[Listing, ...] = ()
    images: tuple[ImageRecord, ...] = ()
    nccl_versions: tuple[str, ...] = ()
    gpu_models: tuple[str, ...] = ()
    cuda_drivers: tuple[str, ...] = ()
    dcgm_versions: tuple[str, ...] = ()
    logs: tuple[LogDigest, ...] = ()


class BandwidthCsvRow(FileModel):
    """One row of bandwidth.csv: one message size of one round of one group.

    `round` is None when the measurement names no iteration (an empty cell); `time_us`
    is always empty (NVCRE records bandwidths only); `transports` is the `;`-joined
    `transport` cell.
    """

    stage: str
    scope: str
    test: str
    group: str
    round: int | None = None
    measurement: str
    finality: str
    reason: str
    size_bytes: int
    algbw: float
    busbw: float
    samples: int = 0
    transports: tuple[str, ...] = ()

    def cells(self) -> tuple[object, ...]:
        """The row's cells, in BANDWIDTH_COLUMNS order, as collect writes them."""
        return (
            self.stage,
            self.scope,
            self.test,
            self.group,
            "" if self.round is None else self.round,
            self.measurement,
            self.finality,
            self.reason,
            self.size_bytes,
            "",
            f"{self.algbw:g}",
            f"{self.busbw:g}",
            self.samples,
            ";".join(self.transports),
        )


FILES: dict[str, type[BaseModel]] = {
    "summary.json": SummaryFile,
    "verdicts.json": Verdicts,
    "provenance.json": ProvenanceFile,
}


def dump_json(data: object) -> str:
    """JSON text as the archive writes it: sorted keys, two-space indent, final newline."""
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def file_text(model: BaseModel) -> str:
    """A file model's JSON text, as the archive holds it.

    Every secret in its strings is masked (`redact_data`): a condition's message is
    NVCRE's text, and may quote a token or a `user:password@` URL it was given.
    """
    return dump_json(redact_data(model.model_dump(mode="json")))


def read_json_file(model: type[M], text: str) -> M:
    """A file of the archive read as its model.

    Raises:
        ArchiveFileError: When it is not JSON (NVC716), nested too deeply (NVC714),
            holds a number too long (NVC713) or a value its model refuses (named by
            its place, `runs.0.state: ...`).

    """
    try:
        return model.model_validate(json.loads(text))
    except json.JSONDecodeError as exc:
        raise ArchiveFileError(f"error[{codes.NVC716.code}]: not JSON: {exc}") from exc
    except RecursionError as exc:  # hostile nesting: the archive is not trusted
        raise ArchiveFileError(f"error[{codes.NVC714.code}]: nested too deeply to be read") from exc
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        where = ".".join(str(p) for p in first["loc"]) or "(top)"
        raise ArchiveFileError(f"{where}: {first['msg']}") from exc
    except ValueError as exc:  # int() of more than 4300 digits: the archive is not trusted
        code = codes.NVC713.code if "digits" in str(exc) else codes.NVC716.code
        raise ArchiveFileError(f"error[{code}]: cannot be decoded: {exc}") from exc


def bandwidth_text(rows: Iterable[BandwidthCsvRow]) -> str:
    """bandwidth.csv: its header and one line per row."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(BANDWIDTH_COLUMNS)
    writer.writerows(row.cells() for row in rows)
    return buffer.getvalue()


def read_bandwidth_csv(text: str) -> tuple[BandwidthCsvRow, ...]:
    """The rows of bandwidth.csv, by column name (extra columns ignored).

    Raises:
        ArchiveFileError: When a column is missing or a number is not a number (a
            number of more than 4,300 digits is NVC713), or the text is not CSV the
            csv module reads (NVC716).

    """
    try:
        return tuple(
            _row(line, record) for line, record in enumerate(csv.DictReader(io.StringIO(text)), 2)
        )
    except csv.Error as exc:  # a field over the csv module's limit, a NUL byte
        raise ArchiveFileError(
            f"bandwidth.csv: error[{codes.NVC716.code}]: cannot be read: {exc}"
        ) from exc


def _row(line: int, record: dict[str, str]) -> BandwidthCsvRow:
    try:
        return BandwidthCsvRow(
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
            samples=int(record.get("samples") or 0),
            transports=tuple(t for t in record["transport"].split(";") if t),
        )
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        code = f"error[{codes.NVC713.code}]: " if "digits" in str(exc) else ""
        raise ArchiveFileError(f"bandwidth.csv line {line}: {code}{exc!r}") from exc


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"not a bandwidth: {text!r}")
    return value
