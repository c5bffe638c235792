"""Flux's shards: a split step's Kustomization once per shard, its dependants on every one.

See `compile/gitops/shards.py`; the objects are measured and packed by
`compile/gitops/shardpack.py`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

from nvcregen.catalog.engines import EngineFacts
from nvcregen.compile.gitops.common import layer_path
from nvcregen.compile.gitops.shardpack import (
    SHARD,
    fits,
    pack,
    replace_moved,
    shard_name,
    sized_groups,
    split,
    stage_source,
)
from nvcregen.compile.gitops.steps import COMMON_FOLDER
from nvcregen.compile.gitops.steps import COMPONENT as READINESS
from nvcregen.compile.postprocess import ordered, postprocess
from nvcregen.core.manifest import Manifest
from nvcregen.engineapi.registry import gitops_of
from nvcregen.engines.gitops.flux.layer import FLUX_KUSTOMIZE_API, flux_path
from nvcregen.spec.v1alpha1 import Site


def flux_shards(
    manifests: Sequence[Manifest],
    site: Site,
    source_file: str,
    folders: Mapping[str, list[Manifest]],
    facts: EngineFacts,
) -> list[Manifest]:
    """The objects, each step Kustomization over a unit's limit split into one per shard.

    A Kustomization depending on a split step depends on every shard of it instead.
    """
    by_path = {
        str(m.obj["spec"].get("path")): m
        for m in manifests
        if m.kind == "Kustomization" and m.obj.get("apiVersion") == FLUX_KUSTOMIZE_API
    }
    engine = gitops_of(site)
    moved: dict[int, Manifest] = {}
    replaced: dict[str, list[Manifest]] = {}  # step Kustomization name -> its shards'
    for folder, items in folders.items():
        owner = by_path.get(flux_path(site, f"{layer_path(site, READINESS)}/{folder}"))
        groups = sized_groups(items, facts)
        if owner is None or folder == COMMON_FOLDER or fits(engine, groups, facts):
            continue
        names, in_shards = split(folder, pack(engine, groups, facts))
        moved |= in_shards
        replaced[owner.name] = _shard_kustomizations(site, owner, names, stage_source(items))
    if not replaced:
        return list(manifests)
    kept = [m for m in replace_moved(manifests, moved) if m.name not in replaced]
    added = postprocess([k for ks in replaced.values() for k in ks], site, source_file)
    shards_of = {old: [k.name for k in ks] for old, ks in replaced.items()}
    return ordered([_depending_on_shards(m, shards_of) for m in [*kept, *added]])


def _shard_kustomizations(
    site: Site, step: Manifest, folders: Sequence[str], source: str
) -> list[Manifest]:
    """The step's Kustomization once per shard: its path the shard's, the rest as it was."""
    found = []
    for index, folder in enumerate(folders):
        name = shard_name([step.name, folder.rpartition("/")[2].replace(SHARD, "s")])
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
