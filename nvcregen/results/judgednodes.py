"""What a run says of its site and its nodes, read without the rest of the archive.

The gate before a node returns to service (`quarantine --release`) asks each newer run of
a site only whose run it is and how it judged each node. Reading every file of every
newer run (`report.archive.read_archive`: bandwidth.csv, every run and log record of
summary.json, the signature) cost what the whole archive costs; this reads three files
with the bounded reader (`archiveread.read_capped`, NVC759) into models that keep only
what is asked, keys they do not know ignored as every reader of an archive does:

    summary.json     `site`, `run_id`
    provenance.json  `site.sha256` (the site file it was judged against; "" if unrecorded)
    verdicts.json    `nodes[].node`, `nodes[].status`

The run must be verified first (`report.folder.locate` verifies every run it lists):
this reads files, it does not check them against SHA256SUMS.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from pydantic import Field

from nvcregen.results.archivemodel import ArchiveFileError, FileModel, SiteRef, read_json_file
from nvcregen.results.archiveread import read_capped
from nvcregen.results.nodes import NodeStatus

M = TypeVar("M", bound=FileModel)


class _Summary(FileModel):
    site: str
    run_id: str = ""


class _Provenance(FileModel):
    site: SiteRef = Field(default_factory=lambda: SiteRef(name=""))


class _Node(FileModel):
    node: str
    status: NodeStatus


class _Verdicts(FileModel):
    nodes: tuple[_Node, ...] = ()


@dataclass(frozen=True)
class JudgedNodes:
    """A run's site, the sha256 of the site file it was judged against, its node statuses."""

    site: str
    site_sha256: str  # "" when provenance.json records none
    statuses: dict[str, str]


def judged_nodes(folder: Path) -> JudgedNodes:
    """The site and node statuses of a verified run folder.

    Raises:
        ArchiveFileError: A file is not what `collect` writes, or not UTF-8 (the message
            names the file).
        OSError: A file cannot be read, or is over its cap (`ArchiveFileTooLargeError`).

    """
    summary = _read(folder, "summary.json", _Summary)
    provenance = _read(folder, "provenance.json", _Provenance)
    verdicts = _read(folder, "verdicts.json", _Verdicts)
    statuses = {n.node: str(n.status) for n in verdicts.nodes}
    return JudgedNodes(summary.site, provenance.site.sha256, statuses)


def _read(folder: Path, name: str, model: type[M]) -> M:
    raw = read_capped(folder / name)
    try:
        return read_json_file(model, raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ArchiveFileError(f"{name}: not UTF-8: {exc}") from exc
    except ArchiveFileError as exc:
        raise ArchiveFileError(f"{name}: {exc}") from exc
