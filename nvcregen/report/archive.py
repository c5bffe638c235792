"""Read a verified run folder: summary.json, verdicts.json, provenance.json, bandwidth.csv.

These files are the contract with `nvcregen collect`: they are read with the archive's
one model (`results/archivemodel.py`), the one collect writes them with, keys the
model does not know ignored, so the report depends on the files, not on collect's code.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel

from nvcregen.report.folder import ReportError
from nvcregen.results.archivemodel import (
    ArchiveFileError,
    BandwidthCsvRow,
    ProvenanceFile,
    SummaryFile,
    read_bandwidth_csv,
    read_json_file,
)
from nvcregen.results.archiveread import ArchiveFileTooLargeError, read_capped
from nvcregen.results.attestation import signature_text
from nvcregen.results.verdicts import Verdicts

M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True)
class ReadArchive:
    """Everything the report shows of one run folder."""

    path: Path
    summary: SummaryFile
    verdicts: Verdicts
    provenance: ProvenanceFile
    bandwidth: tuple[BandwidthCsvRow, ...]
    signature: str = ""  # signed by which key, or unsigned (`results/attestation.py`)


READ = ("summary.json", "verdicts.json", "provenance.json", "bandwidth.csv")


def read_texts(folder: Path) -> dict[str, str]:
    """The texts of the files the report reads.

    Raises:
        ReportError: When one cannot be read as UTF-8 text.

    """
    return {name: _text(folder, name) for name in READ}


def read_archive(folder: Path, texts: dict[str, str] | None = None) -> ReadArchive:
    """Read a run folder's files (verify it first: see `folder.verified_run`).

    Args:
        folder: The run folder.
        texts: The files' texts, when already read (and perhaps sanitized).

    Raises:
        ReportError: When a file is not what `nvcregen collect` writes.

    """
    found = texts if texts is not None else read_texts(folder)
    summary = _json(folder, "summary.json", SummaryFile, found)
    verdicts = _json(folder, "verdicts.json", Verdicts, found)
    provenance = _json(folder, "provenance.json", ProvenanceFile, found)
    bandwidth = read_bandwidth(found["bandwidth.csv"])
    return ReadArchive(
        folder, summary, verdicts, provenance, bandwidth, signature=signature_text(folder)
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
        return read_json_file(model, texts[name])
    except ArchiveFileError as exc:
        raise ReportError(f"{folder / name}: {exc}") from exc


def read_bandwidth(text: str) -> tuple[BandwidthCsvRow, ...]:
    """The rows of bandwidth.csv (`archivemodel.read_bandwidth_csv`).

    Raises:
        ReportError: When a column is missing or a number is not a number.

    """
    try:
        return read_bandwidth_csv(text)
    except ArchiveFileError as exc:
        raise ReportError(str(exc)) from exc
