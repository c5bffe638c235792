"""Flux's GitOps objects (`compile.gitops.engineparts.GitOpsObjects`, `OBJECTS`).

The site's Git source and a Kustomization per layer by `dependsOn` (`layer.py`, with the
checks of what Flux's source accepts); the readiness head and a Kustomization per step
(`chain.py`); a step's Kustomization once per shard (`shards.py`). The platform layer
carries nothing of Flux's: its health checks are each step's `healthCheckExprs`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from nvcregen.catalog.charts import ChartEntry
from nvcregen.catalog.engines import EngineFacts
from nvcregen.compile.gitops.steps import Step
from nvcregen.core.errors import Diagnostic
from nvcregen.core.manifest import Manifest
from nvcregen.engines.gitops.flux.chain import chain_readiness
from nvcregen.engines.gitops.flux.layer import flux_layer, flux_problems
from nvcregen.engines.gitops.flux.shards import flux_shards
from nvcregen.spec.positions import Document
from nvcregen.spec.v1alpha1 import Site


class FluxObjects:
    """Kustomizations of one Git source, a step each, ordered by dependsOn."""

    def layer(
        self,
        site: Site,
        present: list[str],
        layers: Sequence[Manifest],
        charts: Mapping[str, ChartEntry],
    ) -> list[Manifest]:
        """The site's source and a Kustomization per present layer, each after the one before."""
        return flux_layer(site, present)

    def problems(self, site: Site, doc: Document, url: str) -> list[Diagnostic]:
        """NVC341-NVC343 and NVC382: what Flux's source refuses or cannot follow of `url`."""
        return flux_problems(site, doc, url)

    def platform(self, site: Site) -> list[Manifest]:
        """Nothing: each step's Kustomization carries its own health checks."""
        return []

    def chain(
        self, site: Site, gitops: Sequence[Manifest], steps: Sequence[Step]
    ) -> list[Manifest]:
        """The readiness Kustomization the head of one Kustomization per step."""
        return chain_readiness(site, gitops, steps)

    def shards(
        self,
        manifests: Sequence[Manifest],
        site: Site,
        source_file: str,
        folders: Mapping[str, list[Manifest]],
        facts: EngineFacts,
    ) -> list[Manifest]:
        """Each step Kustomization over a unit's limit split into one per shard."""
        return flux_shards(manifests, site, source_file, folders, facts)


OBJECTS = FluxObjects()
