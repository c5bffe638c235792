"""Filling shards: a step folder's objects in groups, packed within a unit's limits (pure).

What every engine's shards share (`shards.py` says how a step is split; each engine's
package how its units split: `engines/gitops/<engine>/shards.py`); a run and its prebuilt
Workload are one group, never apart.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from nvcregen.catalog.engines import EngineFacts
from nvcregen.compile.gitops.steps import COMPONENT as READINESS
from nvcregen.core.kueuekeys import KUEUE_PREFIX, PREBUILT_LABEL
from nvcregen.core.manifest import Manifest, content_hash, hashed_name
from nvcregen.emit.naming import manifest_path
from nvcregen.engineapi.protocol import GitOpsEngine
from nvcregen.replay.model import TreeObject
from nvcregen.replay.units import object_bytes, over_limits

SHARD = "shard-"
NAME_MAX = 63  # Flux labels every applied object with its unit's name: a label value
READINESS_SOURCE = "/spec/readiness"


@dataclass(frozen=True)
class Sized:
    """Objects that go into one shard together, and their size."""

    items: tuple[Manifest, ...]
    manifest_bytes: int
    inventory_bytes: int


def readiness_folders(manifests: Iterable[Manifest]) -> dict[str, list[Manifest]]:
    """The readiness layer's objects by folder, each folder's in file order."""
    found: dict[str, list[Manifest]] = {}
    for m in manifests:
        if m.component == READINESS:
            found.setdefault(m.folder, []).append(m)
    return {f: sorted(items, key=manifest_path) for f, items in sorted(found.items())}


def sized_groups(items: Sequence[Manifest], facts: EngineFacts) -> list[Sized]:
    """The folder's objects in file order, each run with its prebuilt Workload."""
    workloads = {m.name: m for m in items if _is_workload(m)}
    runs = [m for m in items if not _is_workload(m)]
    claimed = {_prebuilt(m) for m in runs} & workloads.keys()
    groups: list[Sized] = []
    for m in items:
        if _is_workload(m) and m.name in claimed:
            continue  # in its run's group
        label = _prebuilt(m)
        mine = (m, workloads[label]) if not _is_workload(m) and label in claimed else (m,)
        groups.append(_sized(mine, facts))
    return groups


def _is_workload(m: Manifest) -> bool:
    return m.kind == "Workload" and str(m.obj.get("apiVersion", "")).startswith(KUEUE_PREFIX)


def _prebuilt(m: Manifest) -> str:
    """The prebuilt Workload a run names (its label), "" when none."""
    return str((m.obj["metadata"].get("labels") or {}).get(PREBUILT_LABEL, ""))


def _sized(items: Sequence[Manifest], facts: EngineFacts) -> Sized:
    manifest = inventory = 0
    for m in items:
        path = manifest_path(m)
        one, entry = object_bytes(TreeObject(path, path, m.obj), facts)
        manifest += one
        inventory += entry
    return Sized(tuple(items), manifest, inventory)


def fits(engine: GitOpsEngine, groups: Sequence[Sized], facts: EngineFacts) -> bool:
    """Whether the groups together fit one unit of `engine`."""
    count = sum(len(g.items) for g in groups)
    size = sum(g.manifest_bytes for g in groups)
    inventory = sum(g.inventory_bytes for g in groups)
    return not over_limits(engine, count, size, inventory, facts)


def pack(engine: GitOpsEngine, groups: Sequence[Sized], facts: EngineFacts) -> list[list[Sized]]:
    """Groups in order, greedily into shards each within every limit of `engine`'s unit.

    A group that alone crosses a limit is a shard of its own (the replay refuses it).
    """
    shards: list[list[Sized]] = []
    current: list[Sized] = []
    count = size = inventory = 0
    for group in groups:
        more = (count + len(group.items), size + group.manifest_bytes)
        if current and over_limits(engine, *more, inventory + group.inventory_bytes, facts):
            shards.append(current)
            current = []
            count = size = inventory = 0
        current.append(group)
        count += len(group.items)
        size += group.manifest_bytes
        inventory += group.inventory_bytes
    if current:
        shards.append(current)
    return shards


def split(folder: str, shards: Sequence[Sequence[Sized]]) -> tuple[list[str], dict[int, Manifest]]:
    """Each shard's folder, and every object moved into it (by `id`)."""
    width = max(2, len(str(len(shards) - 1)))
    names = [f"{folder}/{SHARD}{i:0{width}d}" for i in range(len(shards))]
    moved = {
        id(m): dataclasses.replace(m, folder=name)
        for name, shard in zip(names, shards, strict=True)
        for group in shard
        for m in group.items
    }
    return names, moved


def stage_source(items: Iterable[Manifest]) -> str:
    """The stage pointer the runs of a step folder come from (`/spec/readiness` if none)."""
    for m in items:
        parts = m.source.split("/")
        if m.source.startswith("/spec/readiness/stages/") and len(parts) > 4:
            return "/".join(parts[:5])
    return READINESS_SOURCE


def shard_name(parts: list[str]) -> str:
    """A name of the parts, hashed to fit a Kubernetes name (`NAME_MAX`)."""
    name = "-".join(parts)
    return name if len(name) <= NAME_MAX else hashed_name(parts, content_hash(name), NAME_MAX)


def folder_suffix(folder: str) -> str:
    """`01-x/round-1/shard-00` as a name part: `01-x-r1-s00`."""
    return folder.replace("/round-", "-r").replace(f"/{SHARD}", "-s")


def replace_moved(manifests: Sequence[Manifest], moved: Mapping[int, Manifest]) -> list[Manifest]:
    """The manifests, each moved one in its shard's folder."""
    return [moved.get(id(m), m) for m in manifests]
