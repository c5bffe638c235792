"""A collection's readable files, as the archive's models (pure; `archivemodel.py`).

`summary`, `provenance` and `bandwidth_rows` build them from what a collection read
and judged; `texts` writes them, with verdicts.json, as the archive holds them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from nvcregen import __version__
from nvcregen.kindapi.registry import KINDS
from nvcregen.results.archivemodel import (
    BandwidthCsvRow,
    ImageRecord,
    Listing,
    LogDigest,
    ProvenanceFile,
    SiteRef,
    SummaryFile,
    bandwidth_text,
    file_text,
)
from nvcregen.results.liveobjects import Obj, Snapshot, key_of
from nvcregen.results.logrecords import LogRecord
from nvcregen.results.runs import RunSet
from nvcregen.results.verdicts import Verdicts

_NCCL_VERSION = re.compile(r"NCCL version (\d+\.\d+\.\d+)")
_TIME = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.\d+)?Z$")


@dataclass(frozen=True)
class SiteFile:
    """The site file a collection was judged against."""

    name: str
    path: str
    sha256: str


def summary(
    site: SiteFile,
    run_id: str,
    snapshot: Snapshot,
    objects: Sequence[Obj],
    runs: RunSet,
    verdicts: Verdicts,
    logs: Sequence[LogRecord] | None = None,
) -> SummaryFile:
    """What was collected, run by run: states, nodes, measurements and their finality.

    `logs` are the logs read (trainer mode, node-health logs): None leaves the key out.
    """
    kinds: dict[str, int] = {}
    for obj in objects:
        kinds[str(obj.get("kind"))] = kinds.get(str(obj.get("kind")), 0) + 1
    read = {} if logs is None else {"logs": tuple(logs)}
    return SummaryFile(
        site=site.name,
        run_id=run_id,
        finished_at=finished_at(runs),
        verdict=verdicts.word,
        counts=verdicts.counts(),
        collected_from=snapshot.origin,
        objects=dict(sorted(kinds.items())),
        runs=runs.runs,
        report_exports=runs.exports,
        problems=runs.problems,
        notes=snapshot.notes,
        **read,
    )


def texts(
    about: SummaryFile, runs: RunSet, verdicts: Verdicts, origin: ProvenanceFile
) -> dict[str, str]:
    """summary.json, bandwidth.csv, verdicts.json and provenance.json, as archived."""
    return {
        "summary.json": file_text(about),
        "bandwidth.csv": bandwidth_text(bandwidth_rows(runs)),
        "verdicts.json": file_text(verdicts),
        "provenance.json": file_text(origin),
    }


def latest(times: Iterable[str | None]) -> str | None:
    """The latest of some RFC 3339 UTC times, as `YYYY-MM-DDTHH:MM:SSZ`; None without any."""
    found = [f"{m[1]}Z" for t in times if t and (m := _TIME.match(t))]
    return max(found, default=None)


def finished_at(runs: RunSet) -> str | None:
    """When the last measurement of a collection finished (its `completionTime`).

    `report` and `history` order a site's runs by it: the run ids of runs collected from
    saved logs without timestamps start with `undated`, and their hashes say nothing of
    their order.
    """
    return latest(m.completion_time for run in runs.runs for m in (*run.bandwidth, *run.goodput))


def bandwidth_rows(runs: RunSet) -> tuple[BandwidthCsvRow, ...]:
    """One row per test, stage, group, round and message size, final or not.

    `time_us` is empty: a BandwidthMeasurement records bandwidths only, and a time
    derived from an averaged bandwidth would not be a measured time.
    """
    return tuple(
        BandwidthCsvRow(
            stage=run.stage,
            scope=run.scope,
            test=run.test,
            group=m.group,
            round=m.iteration or None,
            measurement=m.ref.name,
            finality=str(m.finality),
            reason=m.reason,
            size_bytes=row.size_bytes,
            algbw=row.alg_bw,
            busbw=row.bus_bw,
            samples=row.samples,
            transports=m.transports,
        )
        for run in runs.runs
        for m in run.bandwidth
        for row in m.rows
    )


def provenance(site: SiteFile, snapshot: Snapshot, objects: Sequence[Obj]) -> ProvenanceFile:
    """Where the results come from: site file hash, tool version, listings, images, NCCL."""
    return ProvenanceFile(
        site=SiteRef(name=site.name, file=site.path, sha256=site.sha256),
        nvcregen=__version__,
        collected_from=snapshot.origin,
        listings=tuple(
            Listing(
                kind=record.kind,
                namespace=record.namespace,
                label_selector=record.label_selector,
                resource_version=record.resource_version,
                items=record.items,
                pages=record.pages,
                restarts=record.restarts,
                served=record.served,
            )
            for record in snapshot.listings
        ),
        images=images(objects),
        nccl_versions=nccl_versions(objects),
    )


def log_provenance(
    origin: ProvenanceFile, records: Sequence[LogRecord], digests: Mapping[str, str]
) -> ProvenanceFile:
    """A trainer-mode collection's provenance: what its logs name, and each log.

    The NCCL, DCGM and CUDA driver versions and GPU models the logs name join the
    objects'; each log is listed once, whole, with its sha256 (a packed log's records
    are its sections); `digests` are the whole logs' sha256s by path, hashed once by the
    collection.
    """
    versions = {v for r in records if _versions_of(r.kind) == "nccl" for v in r.versions}
    return origin.model_copy(
        update={
            "nccl_versions": tuple(sorted(versions | set(origin.nccl_versions))),
            "gpu_models": tuple(sorted({m for r in records for m in r.models})),
            "cuda_drivers": tuple(sorted({v for r in records for v in r.cuda_driver})),
            "dcgm_versions": tuple(
                sorted({v for r in records if _versions_of(r.kind) == "dcgm" for v in r.versions})
            ),
            "logs": tuple(
                LogDigest(path=path, sha256=digests[path])
                for path in dict.fromkeys(r.path for r in records)
            ),
        }
    )


def _versions_of(kind: str) -> str | None:
    """What a record's `versions` are versions of: its kind's `log_versions` (None: unknown)."""
    known = KINDS.get(kind)
    return None if known is None else known.log_versions


def images(objects: Sequence[Obj]) -> tuple[ImageRecord, ...]:
    """Every image the objects' specs name, its digest (None when tag-only) and where."""
    found: dict[str, set[str]] = {}
    for obj in objects:
        for image in _values(obj.get("spec"), "image"):
            found.setdefault(image, set()).add(str(key_of(obj)))
    return tuple(
        ImageRecord(
            image=image,
            digest=image.split("@", 1)[1] if "@" in image else None,
            objects=tuple(sorted(where)),
        )
        for image, where in sorted(found.items())
    )


def nccl_versions(objects: Sequence[Obj]) -> tuple[str, ...]:
    """NCCL versions the objects' statuses quote from logs (`NCCL version 2.27.3`)."""
    versions = {
        match
        for obj in objects
        for text in _strings(obj.get("status"))
        for match in _NCCL_VERSION.findall(text)
    }
    return tuple(sorted(versions))


def _values(data: object, key: str) -> Iterator[str]:
    """Every string value of `key`, at any depth."""
    if isinstance(data, Mapping):
        for k, v in data.items():
            if k == key and isinstance(v, str):
                yield v
            else:
                yield from _values(v, key)
    elif isinstance(data, list):
        for item in data:
            yield from _values(item, key)


def _strings(data: object) -> Iterator[str]:
    if isinstance(data, str):
        yield data
    elif isinstance(data, Mapping):
        for value in data.values():
            yield from _strings(value)
    elif isinstance(data, list):
        for item in data:
            yield from _strings(item)
