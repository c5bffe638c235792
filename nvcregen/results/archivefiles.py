"""The readable files of an archive: summary.json, bandwidth.csv, provenance.json (pure)."""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from nvcregen import __version__
from nvcregen.core.secrets import redact_data
from nvcregen.results.liveobjects import Obj, Snapshot, key_of
from nvcregen.results.runs import RunSet
from nvcregen.results.verdicts import Verdicts

CSV_COLUMNS = (
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
_NCCL_VERSION = re.compile(r"NCCL version (\d+\.\d+\.\d+)")
_TIME = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.\d+)?Z$")


@dataclass(frozen=True)
class SiteFile:
    """The site file a collection was judged against."""

    name: str
    path: str
    sha256: str


def to_json(data: object) -> str:
    """JSON text as the archive writes it: sorted keys, two-space indent, final newline.

    Every secret in its strings is masked (`redact_data`): a condition's message is
    NVCRE's text, and may quote a token or a `user:password@` URL it was given.
    """
    return json.dumps(redact_data(data), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def summary(
    site: SiteFile,
    run_id: str,
    snapshot: Snapshot,
    objects: Sequence[Obj],
    runs: RunSet,
    verdicts: Verdicts,
) -> dict[str, Any]:
    """What was collected, run by run: states, nodes, measurements and their finality."""
    kinds: dict[str, int] = {}
    for obj in objects:
        kinds[str(obj.get("kind"))] = kinds.get(str(obj.get("kind")), 0) + 1
    return {
        "site": site.name,
        "run_id": run_id,
        "finished_at": finished_at(runs),
        "verdict": str(verdicts.word),
        "counts": verdicts.counts(),
        "collected_from": snapshot.origin,
        "objects": dict(sorted(kinds.items())),
        "runs": [run.model_dump(mode="json") for run in runs.runs],
        "report_exports": [export.model_dump(mode="json") for export in runs.exports],
        "problems": list(runs.problems),
        "notes": list(snapshot.notes),
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


def bandwidth_csv(runs: RunSet) -> str:
    """One row per test, stage, group, round and message size, final or not.

    `time_us` is empty: a BandwidthMeasurement records bandwidths only, and a time
    derived from an averaged bandwidth would not be a measured time.
    """
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for run in runs.runs:
        for m in run.bandwidth:
            for row in m.rows:
                writer.writerow(
                    (
                        run.stage,
                        run.scope,
                        run.test,
                        m.group,
                        m.iteration or "",
                        m.ref.name,
                        str(m.finality),
                        m.reason,
                        row.size_bytes,
                        "",
                        f"{row.alg_bw:g}",
                        f"{row.bus_bw:g}",
                        row.samples,
                        ";".join(m.transports),
                    )
                )
    return buffer.getvalue()


def provenance(site: SiteFile, snapshot: Snapshot, objects: Sequence[Obj]) -> dict[str, Any]:
    """Where the results come from: site file hash, tool version, listings, images, NCCL."""
    return {
        "site": {"name": site.name, "file": site.path, "sha256": site.sha256},
        "nvcregen": __version__,
        "collected_from": snapshot.origin,
        "listings": [
            {
                "kind": record.kind,
                "namespace": record.namespace,
                "label_selector": record.label_selector,
                "resource_version": record.resource_version,
                "items": record.items,
                "pages": record.pages,
                "restarts": record.restarts,
                "served": record.served,
            }
            for record in snapshot.listings
        ],
        "images": images(objects),
        "nccl_versions": nccl_versions(objects),
    }


def images(objects: Sequence[Obj]) -> list[dict[str, Any]]:
    """Every image the objects' specs name, its digest (None when tag-only) and where."""
    found: dict[str, set[str]] = {}
    for obj in objects:
        for image in _values(obj.get("spec"), "image"):
            found.setdefault(image, set()).add(str(key_of(obj)))
    return [
        {
            "image": image,
            "digest": image.split("@", 1)[1] if "@" in image else None,
            "objects": sorted(where),
        }
        for image, where in sorted(found.items())
    ]


def nccl_versions(objects: Sequence[Obj]) -> list[str]:
    """NCCL versions the objects' statuses quote from logs (`NCCL version 2.27.3`)."""
    versions = {
        match
        for obj in objects
        for text in _strings(obj.get("status"))
        for match in _NCCL_VERSION.findall(text)
    }
    return sorted(versions)


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
