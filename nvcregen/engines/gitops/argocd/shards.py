"""Argo CD's shards: the readiness Application a parent of a child Application per shard.

See `compile/gitops/shards.py`; the objects are measured and packed by
`compile/gitops/shardpack.py`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

from nvcregen.catalog.engines import EngineFacts
from nvcregen.compile.gitops.common import layer_path
from nvcregen.compile.gitops.shardpack import (
    READINESS_SOURCE,
    fits,
    folder_suffix,
    pack,
    replace_moved,
    shard_name,
    sized_groups,
    split,
    stage_source,
)
from nvcregen.compile.gitops.steps import COMMON_FOLDER, SYNC_WAVE
from nvcregen.compile.gitops.steps import COMPONENT as READINESS
from nvcregen.compile.postprocess import ordered, postprocess
from nvcregen.core.labels import PARENT
from nvcregen.core.manifest import Manifest, Obj
from nvcregen.engineapi.registry import gitops_of
from nvcregen.engines.gitops.argocd.layer import ARGOCD_NAMESPACE, RETRY
from nvcregen.spec.v1alpha1 import Site

# The parent Application's children sync themselves (trigger: on-sync prunes and heals as
# the unsplit readiness Application does; manual only applies what a new commit changes).
_AUTOMATED = {"prune": True, "selfHeal": True}
_AUTOMATED_MANUAL = {"prune": False, "selfHeal": False}


def argocd_shards(
    manifests: Sequence[Manifest],
    site: Site,
    source_file: str,
    folders: Mapping[str, list[Manifest]],
    facts: EngineFacts,
) -> list[Manifest]:
    """The objects, the readiness Application split once it would cross a unit's limit.

    It becomes a parent of one child Application per step (per shard of a split step).
    """
    name = f"{site.metadata.name}-{READINESS}"
    parent = next(
        (
            m
            for m in manifests
            if m.kind == "Application" and m.name == name and m.component != READINESS
        ),
        None,
    )
    grouped = {folder: sized_groups(items, facts) for folder, items in folders.items()}
    engine = gitops_of(site)
    every = [g for groups in grouped.values() for g in groups]
    if parent is None or fits(engine, every, facts):
        return list(manifests)
    moved: dict[int, Manifest] = {}
    children: list[Manifest] = []
    for folder, groups in grouped.items():
        items = folders[folder]
        wave = max(_wave(m) for m in items)
        if folder == COMMON_FOLDER:  # what every step uses: the readiness section's
            children.append(_child(site, parent, folder, wave, READINESS_SOURCE))
            continue
        if fits(engine, groups, facts):
            children.append(_child(site, parent, folder, wave, stage_source(items)))
            continue
        names, in_shards = split(folder, pack(engine, groups, facts))
        moved |= in_shards
        children += [_child(site, parent, f, wave, stage_source(items)) for f in names]
    kept = [m for m in replace_moved(manifests, moved) if m is not parent]
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
    name = shard_name([parent.name, folder_suffix(folder)])
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
