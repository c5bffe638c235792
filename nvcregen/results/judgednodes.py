"""What a run says of its site and its nodes, read without the rest of the archive.

The gate before a node returns to service (`quarantine --release`) asks each newer run of
a site only whose run it is and how it judged each node. Reading every file of every
newer run (`report.archive.read_archive`: bandwidth.csv, every run and log record of
summary.json, the signature) cost what the whole archive costs; this reads three files
with the bounded reader (`archiveread.read_capped`, NVC759) into models that keep only
what is asked, keys they do not know ignored as every reader of an archive does:

    summary.json     `site`, `run_id`
    provenance.json  `site.sha256` (the site file it was judged against; "" if unrecorded)
    verdicts.json    `nodes[].node`, `nodes[].status`, and of each group that held a
                     node asked about (`nodes[].runs[]`) its `stage`, `test`, `nodes`,
                     `word`, `code`

The groups give the node's word on each test of the run (`results/nodetests.py`): the
gate releases a node only on a pass of each test that failed it. The file is read up to
its cap (NVC759) like every file of an archive, so a run of many nodes and groups costs
at most that.

The run must be verified first (`report.folder.runs_after` verifies each run it gives):
this reads files, it does not check them against SHA256SUMS.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from pydantic import Field, ValidationError

from nvcregen.results.archivemodel import ArchiveFileError, FileModel, SiteRef, read_json_file
from nvcregen.results.archiveread import read_capped
from nvcregen.results.nodes import NodeStatus
from nvcregen.results.nodetests import TestKey, words_by_test
from nvcregen.results.words import Word

M = TypeVar("M", bound=FileModel)


class _Summary(FileModel):
    site: str
    run_id: str = ""


class _Provenance(FileModel):
    site: SiteRef = Field(default_factory=lambda: SiteRef(name=""))


class _Group(FileModel):
    stage: str
    test: str
    nodes: tuple[str, ...] = ()
    word: Word
    code: str = ""


class _Groups(FileModel):
    runs: tuple[_Group, ...] = ()


class _Node(FileModel):
    node: str
    status: NodeStatus
    runs: tuple[Any, ...] = ()  # read as `_Groups` for the nodes asked about only


class _Verdicts(FileModel):
    nodes: tuple[_Node, ...] = ()


@dataclass(frozen=True)
class JudgedNodes:
    """A run's site, the sha256 of the site file it was judged against, how it judged nodes."""

    site: str
    site_sha256: str  # "" when provenance.json records none
    statuses: dict[str, str]  # node -> status over the whole run
    tests: dict[str, dict[TestKey, Word]] = field(default_factory=dict)  # node -> test -> word


def judged_nodes(folder: Path, nodes: Collection[str] | None = None) -> JudgedNodes:
    """The site, node statuses and each node's word on each test of a verified run folder.

    Each node's groups are checked and worded for the `nodes` asked about (every node
    when None): a fleet's run holds 1,024 nodes' groups, a release asks of a few.

    Raises:
        ArchiveFileError: A file is not what `collect` writes, or not UTF-8 (the message
            names the file).
        OSError: A file cannot be read, or is over its cap (`ArchiveFileTooLargeError`).

    """
    summary = _read(folder, "summary.json", _Summary)
    provenance = _read(folder, "provenance.json", _Provenance)
    verdicts = _read(folder, "verdicts.json", _Verdicts)
    statuses = {n.node: str(n.status) for n in verdicts.nodes}
    tests = {
        n.node: words_by_test(n.node, _groups(n, at))
        for at, n in enumerate(verdicts.nodes)
        if nodes is None or n.node in nodes
    }
    return JudgedNodes(summary.site, provenance.site.sha256, statuses, tests)


def _groups(node: _Node, at: int) -> tuple[_Group, ...]:
    """The node's groups, checked as the model of verdicts.json checks them."""
    try:
        return _Groups.model_validate({"runs": node.runs}).runs
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ArchiveFileError(f"verdicts.json: nodes.{at}.{where}: {first['msg']}") from exc


def _read(folder: Path, name: str, model: type[M]) -> M:
    raw = read_capped(folder / name)
    try:
        return read_json_file(model, raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ArchiveFileError(f"{name}: not UTF-8: {exc}") from exc
    except ArchiveFileError as exc:
        raise ArchiveFileError(f"{name}: {exc}") from exc
