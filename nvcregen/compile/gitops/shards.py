"""Readiness steps split into shards one GitOps unit can hold (issue 33; pure).

Argo CD and Flux each apply a folder as one unit, and a unit holds at most what
`catalog/engines.yaml` allows (objects, manifests, the status its engine writes; measured
as `nvcregen.replay.units` measures them, on the objects as written). A step whose folder
would cross a limit is split, in file order, into `shard-00/`, `shard-01/`, ... of its
folder, each filled greedily up to every limit (at a limit is within it), a run and its
prebuilt Workload always in the same shard (Kueue adopts the Workload by name; one applied
by a later unit would find the run admitted under a Workload Kueue made itself).

- Flux: the step's Kustomization becomes one per shard, each with the step's health
  checks, `wait` and timeout; the Kustomizations of the next step depend on every shard.
- Argo CD: once the readiness Application as a whole would cross a limit, it becomes a
  parent reading only the top of `readiness/`, where one child Application per step (per
  shard of a split step), one for `00-common/` and one for the final gate sit, each with
  its step's sync wave: with the Application health check of argocd-cm the parent applies
  a wave only once every child of the waves before is Healthy. `trigger: manual` leaves
  the parent without automated sync, so no child (and no run) exists until an operator
  syncs it; the children sync themselves (docs/design/0018-fleet-units.md says what that
  means for a push during a window).

A site that fits renders as it did. A group too large for any unit stays a shard of its
own, and the replay refuses it (NVC677) at the stage it comes from; a parent with more
children than a unit holds is refused at the node pool whose nodes made them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from nvcregen.catalog.engines import EngineFacts
from nvcregen.compile.gitops.argocd import ARGOCD_NAMESPACE, RETRY, SYNC_WAVE
from nvcregen.compile.gitops.chain import NAME_MAX
from nvcregen.compile.gitops.common import layer_path
from nvcregen.compile.gitops.flux import FLUX_KUSTOMIZE_API, flux_path
from nvcregen.compile.gitops.steps import COMMON_FOLDER
from nvcregen.compile.gitops.steps import COMPONENT as READINESS
from nvcregen.compile.postprocess import ordered, postprocess
from nvcregen.core.kueuekeys import KUEUE_PREFIX, PREBUILT_LABEL
from nvcregen.core.labels import PARENT
from nvcregen.core.manifest import Manifest, Obj, content_hash, hashed_name
from nvcregen.emit.naming import manifest_path
from nvcregen.engines.protocol import GitOpsEngine
from nvcregen.engines.registry import gitops_of
from nvcregen.replay.model import TreeObject
from nvcregen.replay.units import object_bytes, over_limits
from nvcregen.spec.v1alpha1 import Site

SHARD = "shard-"
READINESS_SOURCE = "/spec/readiness"
# The parent Application's children sync themselves (trigger: on-sync prunes and heals as
# the unsplit readiness Application does; manual only applies what a new commit changes).
_AUTOMATED = {"prune": True, "selfHeal": True}
_AUTOMATED_MANUAL = {"prune": False, "selfHeal": False}


@dataclass(frozen=True)
class _Sized:
    """Objects that go into one shard together, and their size."""

    items: tuple[Manifest, ...]
    manifest_bytes: int
    inventory_bytes: int


def shard_units(
    manifests: Sequence[Manifest], site: Site, source_file: str, facts: EngineFacts
) -> list[Manifest]:
    """The site's objects with every readiness unit within its engine's limits.

    `manifests` are labelled and ordered (`postprocess`, whose labels count in a unit's
    size); `source_file` names the site as `postprocess` did. Unchanged when every unit
    fits, or when the site has no GitOps objects.
    """
    if site.spec.gitops.repo_url is None:
        return list(manifests)
    folders = _readiness_folders(manifests)
    if gitops_of(site).kustomizations:
        return _flux(manifests, site, source_file, folders, facts)
    return _argocd(manifests, site, source_file, folders, facts)


def _readiness_folders(manifests: Iterable[Manifest]) -> dict[str, list[Manifest]]:
    """The readiness layer's objects by folder, each folder's in file order."""
    found: dict[str, list[Manifest]] = {}
    for m in manifests:
        if m.component == READINESS:
            found.setdefault(m.folder, []).append(m)
    return {f: sorted(items, key=manifest_path) for f, items in sorted(found.items())}


def _groups(items: Sequence[Manifest], facts: EngineFacts) -> list[_Sized]:
    """The folder's objects in file order, each run with its prebuilt Workload."""
    workloads = {m.name: m for m in items if _is_workload(m)}
    runs = [m for m in items if not _is_workload(m)]
    claimed = {_prebuilt(m) for m in runs} & workloads.keys()
    groups: list[_Sized] = []
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


def _sized(items: Sequence[Manifest], facts: EngineFacts) -> _Sized:
    manifest = inventory = 0
    for m in items:
        path = manifest_path(m)
        one, entry = object_bytes(TreeObject(path, path, m.obj), facts)
        manifest += one
        inventory += entry
    return _Sized(tuple(items), manifest, inventory)


def _fits(engine: GitOpsEngine, groups: Sequence[_Sized], facts: EngineFacts) -> bool:
    count = sum(len(g.items) for g in groups)
    size = sum(g.manifest_bytes for g in groups)
    inventory = sum(g.inventory_bytes for g in groups)
    return not over_limits(engine, count, size, inventory, facts)


def _pack(engine: GitOpsEngine, groups: Sequence[_Sized], facts: EngineFacts) -> list[list[_Sized]]:
    """Groups in order, greedily into shards each within every limit of `engine`'s unit.

    A group that alone crosses a limit is a shard of its own (the replay refuses it).
    """
    shards: list[list[_Sized]] = []
    current: list[_Sized] = []
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


def _split(
    folder: str, shards: Sequence[Sequence[_Sized]]
) -> tuple[list[str], dict[int, Manifest]]:
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


def _stage_source(items: Iterable[Manifest]) -> str:
    """The stage pointer the runs of a step folder come from (`/spec/readiness` if none)."""
    for m in items:
        parts = m.source.split("/")
        if m.source.startswith("/spec/readiness/stages/") and len(parts) > 4:
            return "/".join(parts[:5])
    return READINESS_SOURCE


def _named(parts: list[str]) -> str:
    name = "-".join(parts)
    return name if len(name) <= NAME_MAX else hashed_name(parts, content_hash(name), NAME_MAX)


def _folder_suffix(folder: str) -> str:
    """`01-x/round-1/shard-00` as a name part: `01-x-r1-s00`."""
    return folder.replace("/round-", "-r").replace(f"/{SHARD}", "-s")


def _replace_moved(manifests: Sequence[Manifest], moved: Mapping[int, Manifest]) -> list[Manifest]:
    return [moved.get(id(m), m) for m in manifests]


# --- Flux --------------------------------------------------------------------------------


def _flux(
    manifests: Sequence[Manifest],
    site: Site,
    source_file: str,
    folders: Mapping[str, list[Manifest]],
    facts: EngineFacts,
) -> list[Manifest]:
    by_path = {
        str(m.obj["spec"].get("path")): m
        for m in manifests
        if m.kind == "Kustomization" and m.obj.get("apiVersion") == FLUX_KUSTOMIZE_API
    }
    moved: dict[int, Manifest] = {}
    replaced: dict[str, list[Manifest]] = {}  # step Kustomization name -> its shards'
    for folder, items in folders.items():
        owner = by_path.get(flux_path(site, f"{layer_path(site, READINESS)}/{folder}"))
        groups = _groups(items, facts)
        if owner is None or folder == COMMON_FOLDER or _fits(gitops_of(site), groups, facts):
            continue
        names, in_shards = _split(folder, _pack(gitops_of(site), groups, facts))
        moved |= in_shards
        replaced[owner.name] = _shard_kustomizations(site, owner, names, _stage_source(items))
    if not replaced:
        return list(manifests)
    kept = [m for m in _replace_moved(manifests, moved) if m.name not in replaced]
    added = postprocess([k for ks in replaced.values() for k in ks], site, source_file)
    shards_of = {old: [k.name for k in ks] for old, ks in replaced.items()}
    return ordered([_depending_on_shards(m, shards_of) for m in [*kept, *added]])


def _shard_kustomizations(
    site: Site, step: Manifest, folders: Sequence[str], source: str
) -> list[Manifest]:
    """The step's Kustomization once per shard: its path the shard's, the rest as it was."""
    found = []
    for index, folder in enumerate(folders):
        name = _named([step.name, folder.rpartition("/")[2].replace(SHARD, "s")])
        spec = {
            **step.obj["spec"],
            "path": flux_path(site, f"{layer_path(site, READINESS)}/{folder}"),
        }
        meta = {"name": name, "namespace": step.obj["metadata"]["namespace"]}
        obj = {**step.obj, "metadata": meta, "spec": spec}
        note = f"shard {index + 1} of {len(folders)} of {step.name}: {folder}/"
        found.append(dataclasses.replace(step, obj=obj, source=source, notes=(*step.notes, note)))
    return found


def _depending_on_shards(manifest: Manifest, shards_of: Mapping[str, list[str]]) -> Manifest:
    """A Kustomization depending on a split step depends on every shard of it instead."""
    spec = manifest.obj.get("spec")
    if manifest.kind != "Kustomization" or not isinstance(spec, dict):
        return manifest
    depends = spec.get("dependsOn") or []
    if not any(d.get("name") in shards_of for d in depends):
        return manifest
    expanded = [
        {**d, "name": shard}
        for d in depends
        for shard in shards_of.get(str(d.get("name")), [str(d.get("name"))])
    ]
    return dataclasses.replace(
        manifest, obj={**manifest.obj, "spec": {**spec, "dependsOn": expanded}}
    )


# --- Argo CD -----------------------------------------------------------------------------


def _argocd(
    manifests: Sequence[Manifest],
    site: Site,
    source_file: str,
    folders: Mapping[str, list[Manifest]],
    facts: EngineFacts,
) -> list[Manifest]:
    name = f"{site.metadata.name}-{READINESS}"
    parent = next(
        (
            m
            for m in manifests
            if m.kind == "Application" and m.name == name and m.component != READINESS
        ),
        None,
    )
    grouped = {folder: _groups(items, facts) for folder, items in folders.items()}
    every = [g for groups in grouped.values() for g in groups]
    if parent is None or _fits(gitops_of(site), every, facts):
        return list(manifests)
    moved: dict[int, Manifest] = {}
    children: list[Manifest] = []
    for folder, groups in grouped.items():
        items = folders[folder]
        wave = max(_wave(m) for m in items)
        if folder == COMMON_FOLDER:  # what every step uses: the readiness section's
            children.append(_child(site, parent, folder, wave, READINESS_SOURCE))
            continue
        if _fits(gitops_of(site), groups, facts):
            children.append(_child(site, parent, folder, wave, _stage_source(items)))
            continue
        names, in_shards = _split(folder, _pack(gitops_of(site), groups, facts))
        moved |= in_shards
        children += [_child(site, parent, f, wave, _stage_source(items)) for f in names]
    kept = [m for m in _replace_moved(manifests, moved) if m is not parent]
    added = postprocess([_as_parent(site, parent), *children], site, source_file)
    return ordered([*kept, *added])


def _wave(m: Manifest) -> int:
    return int((m.obj["metadata"].get("annotations") or {}).get(SYNC_WAVE, "0"))


def _child(site: Site, parent: Manifest, folder: str, wave: int, source: str) -> Manifest:
    """A child Application: one folder of the readiness layer, in its step's sync wave."""
    spec = parent.obj["spec"]
    manual = site.spec.readiness.trigger == "manual"
    sync: Obj = {
        "automated": dict(_AUTOMATED_MANUAL if manual else _AUTOMATED),
        "syncOptions": list(spec["syncPolicy"]["syncOptions"]),
        "retry": RETRY,
    }
    child_spec: Obj = {
        "project": spec["project"],
        "source": {
            **{k: v for k, v in spec["source"].items() if k != "directory"},
            "path": f"{layer_path(site, READINESS)}/{folder}",
        },
        "destination": dict(spec["destination"]),
        "syncPolicy": sync,
    }
    name = _named([parent.name, _folder_suffix(folder)])
    meta: Obj = {
        "name": name,
        "namespace": ARGOCD_NAMESPACE,
        "labels": {PARENT: parent.name},
        "annotations": {SYNC_WAVE: str(wave)},
    }
    obj = {"apiVersion": parent.obj["apiVersion"], "kind": "Application", "metadata": meta}
    obj["spec"] = child_spec
    note = f"applies readiness/{folder}/ in wave {wave} of {parent.name}, after the waves before"
    return Manifest(obj, READINESS, source, notes=(note,))


def _as_parent(site: Site, parent: Manifest) -> Manifest:
    """The readiness Application reading only the child Applications atop `readiness/`."""
    spec = dict(parent.obj["spec"])
    spec["source"] = {
        **{k: v for k, v in spec["source"].items() if k != "directory"},
        "path": layer_path(site, READINESS),
    }
    if site.spec.readiness.trigger == "manual":
        # the children exist from the first sync on and follow targetRevision themselves
        end = f"argocd app delete -l {PARENT}={parent.name} -y"
        how = f"after a window, `{end}` (runs are kept) until the next sync starts one"
        spec["info"] = [*spec.get("info", []), {"name": "children", "value": how}]
    note = "readiness is split: a parent of one child Application per step shard (sync waves)"
    return dataclasses.replace(
        parent,
        obj={**parent.obj, "spec": spec},
        source=parent_source(site),
        notes=(*parent.notes, note),
    )


def parent_source(site: Site) -> str:
    """The site line whose nodes make the children: the largest pool's nodes."""
    sizes = [
        (len(pool.nodes) if pool.nodes else pool.node_count or 0, -index, index)
        for index, pool in enumerate(site.spec.node_pools)
    ]
    index = max(sizes)[2]
    field = "nodes" if site.spec.node_pools[index].nodes else "nodeCount"
    return f"/spec/nodePools/{index}/{field}"
