"""Readiness steps split into shards one GitOps unit can hold (issue 33; pure).

Argo CD and Flux each apply a folder as one unit, and a unit holds at most what
`catalog/engines.yaml` allows (objects, manifests, the status its engine writes; measured
as `nvcregen.replay.units` measures them, on the objects as written). A step whose folder
would cross a limit is split, in file order, into `shard-00/`, `shard-01/`, ... of its
folder, each filled greedily up to every limit (at a limit is within it), a run and its
prebuilt Workload always in the same shard (Kueue adopts the Workload by name; one applied
by a later unit would find the run admitted under a Workload Kueue made itself).

Each engine's package splits its own units (`engines/gitops/<engine>/shards.py`):

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

from collections.abc import Sequence

from nvcregen.catalog.engines import EngineFacts
from nvcregen.compile.gitops.engineparts import objects_of
from nvcregen.compile.gitops.shardpack import readiness_folders
from nvcregen.core.manifest import Manifest
from nvcregen.engineapi.registry import gitops_of
from nvcregen.spec.v1alpha1 import Site


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
    folders = readiness_folders(manifests)
    return objects_of(gitops_of(site)).shards(manifests, site, source_file, folders, facts)
