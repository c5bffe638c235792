"""The GitOps units of a tree and whether their engines can hold them (NVC677; issue 33).

A unit is what one engine object applies: an Argo CD Application (its source folder, with
or without subfolders) or a Flux Kustomization (its folder and every subfolder), each
object of the tree counted for the unit that reads it. Three figures are held against
`catalog/engines.yaml`:

- objects: Argo CD's Application status breaks near 3,000 resources, Flux's inventory
  cannot hold thousands; a unit may apply at most `unit.maxObjects`;
- manifests: Argo CD's repo-server refuses a directory app over 10 MB; a unit's objects,
  measured as compact JSON (what the API server stores; the YAML files are about as
  large), may be at most `unit.maxManifests`;
- status: what the engine writes for the unit, one object that etcd must store: Argo CD
  lists every resource (`argocd.statusPerResource` each), Flux its inventory (each id
  `<namespace>_<name>_<group>_<kind>` and version, `flux.inventoryPerEntry` more); at
  most `unit.maxStatus`.

A tree whose unit crosses one is refused: the engine would fail it, late and partly.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from nvcregen.catalog.engines import EngineFacts
from nvcregen.core import codes
from nvcregen.engineapi.protocol import GitOpsEngine
from nvcregen.replay.gating import under
from nvcregen.replay.gitopsmodel import models
from nvcregen.replay.model import Problem, TreeObject

CODE = codes.NVC677.code


@dataclass(frozen=True)
class Unit:
    """One GitOps unit of a tree and what it holds.

    Attributes:
        engine: Its GitOps engine.
        owner: The Application or Kustomization.
        folder: The site folder it applies ("" the whole site).
        objects: How many objects of the tree it applies.
        manifest_bytes: Their size as compact JSON.
        status_bytes: The status the engine writes for it (estimated).
        largest: The subfolder holding most of its objects, and how many.

    """

    engine: GitOpsEngine
    owner: TreeObject
    folder: str
    objects: int
    manifest_bytes: int
    status_bytes: int
    largest: tuple[str, int]


@dataclass(frozen=True)
class _Folder:
    """What one folder of the tree holds: objects, their JSON bytes, Flux inventory bytes."""

    objects: int
    manifest_bytes: int
    inventory_bytes: int


def gitops_units(objects: Sequence[TreeObject], root: str, facts: EngineFacts) -> list[Unit]:
    """Every Application and Kustomization reading the site's folder, with what it holds.

    The objects are tallied once per folder; each unit then adds up the folders it reads
    (a few dozen), never walks the objects again.
    """
    folders = _folders(objects, facts)
    return [
        _unit(engine, owner, base, recurse, folders, facts)
        for engine, model in models()
        for owner, base, recurse in model.units(objects, root)
    ]


def _folders(objects: Iterable[TreeObject], facts: EngineFacts) -> dict[str, _Folder]:
    tally: dict[str, list[int]] = {}
    for item in objects:
        counts = tally.setdefault(item.path.rpartition("/")[0], [0, 0, 0])
        manifest, inventory = object_bytes(item, facts)
        counts[0] += 1
        counts[1] += manifest
        counts[2] += inventory
    return {folder: _Folder(*counts) for folder, counts in tally.items()}


def object_bytes(item: TreeObject, facts: EngineFacts) -> tuple[int, int]:
    """One object's manifest (compact JSON) and its Flux inventory entry, in bytes.

    The one measure of a unit: the compiler fills shards with it (`compile.gitops.shardpack`).
    """
    manifest = len(json.dumps(item.obj, separators=(",", ":")))
    return manifest, len(_inventory_id(item)) + facts.flux_inventory_per_entry


def over_limits(
    engine: GitOpsEngine,
    objects: int,
    manifest_bytes: int,
    inventory_bytes: int,
    facts: EngineFacts,
) -> bool:
    """Whether a unit of these figures crosses a limit of its engine (at a limit is within)."""
    status = engine.status_bytes(objects, inventory_bytes, facts)
    return bool(_over_figures(objects, manifest_bytes, status, facts))


def _unit(
    engine: GitOpsEngine,
    owner: TreeObject,
    base: str,
    recurse: bool,
    folders: Mapping[str, _Folder],
    facts: EngineFacts,
) -> Unit:
    # a unit reads a folder when it would apply a file in it (`gating.under`)
    held = {f: t for f, t in folders.items() if under(f"{f}/-", base, recurse=recurse)}
    count = sum(t.objects for t in held.values())
    size = sum(t.manifest_bytes for t in held.values())
    status = engine.status_bytes(count, sum(t.inventory_bytes for t in held.values()), facts)
    counts = sorted((f, t.objects) for f, t in held.items())
    largest = max(counts, key=lambda f: f[1], default=("", 0))
    return Unit(engine, owner, base, count, size, status, largest)


def _inventory_id(item: TreeObject) -> str:
    """Flux's inventory entry id of an object, and its version."""
    return f"{item.namespace}_{item.name}_{item.group}_{item.kind}{item.obj.get('apiVersion')}"


def unit_problems(units: Sequence[Unit], facts: EngineFacts) -> list[Problem]:
    """NVC677 for each unit over a limit of its engine, at the unit's own object."""
    found = []
    for unit in units:
        over = _over(unit, facts)
        if not over:
            continue
        folder, count = unit.largest
        message = (
            f"{unit.engine.unit_kind} {unit.owner.name} applies {_figures(unit)}:"
            f" over {', '.join(over)};"
            f" {unit.engine.title} would fail it"
        )
        hint = (
            "fewer nodes per site, fewer tests or rounds per stage, or NVCRE mode (its "
            "controller expands a stage's groups itself); catalog/engines.yaml has each "
            "limit's source"
        )
        note = f"most of it is in {folder or '.'}/ ({count} objects)"
        pointer = unit.engine.unit_path
        found.append(Problem(unit.owner.file, pointer, CODE, message, hint=hint, notes=(note,)))
    return found


def _over(unit: Unit, facts: EngineFacts) -> list[str]:
    return _over_figures(unit.objects, unit.manifest_bytes, unit.status_bytes, facts)


def _over_figures(objects: int, manifest_bytes: int, status: int, facts: EngineFacts) -> list[str]:
    limits = [
        (objects, facts.unit.max_objects, f"{facts.unit.max_objects:,} objects"),
        (manifest_bytes, facts.max_manifest_bytes, f"{facts.unit.max_manifests} manifests"),
        (status, facts.max_status_bytes, f"a {facts.unit.max_status} status"),
    ]
    return [text for value, limit, text in limits if value > limit]


def _figures(unit: Unit) -> str:
    return (
        f"{unit.objects:,} objects, {_mib(unit.manifest_bytes)} of manifests and a status of"
        f" about {_mib(unit.status_bytes)}"
    )


def _mib(n: int) -> str:
    return f"{n / 2**20:.1f} MiB" if n >= 2**20 else f"{n / 1024:.0f} KiB"
