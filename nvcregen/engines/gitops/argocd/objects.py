"""Argo CD's GitOps objects (`compile.gitops.engineparts.GitOpsObjects`, `OBJECTS`).

An AppProject, an Application per layer and the parent `<site>-gitops` (`layer.py`); the
readiness Application split into children once it would cross a unit's limit
(`shards.py`); its Lua health checks carried by the platform layer (`health.py`). Its
steps need nothing more: the runs' sync waves and the final gate order them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from nvcregen.catalog.charts import ChartEntry
from nvcregen.catalog.engines import EngineFacts
from nvcregen.compile.gitops.steps import Step
from nvcregen.core.errors import Diagnostic
from nvcregen.core.manifest import Manifest
from nvcregen.engines.gitops.argocd.health import argocd_health_config
from nvcregen.engines.gitops.argocd.layer import argocd_layer
from nvcregen.engines.gitops.argocd.shards import argocd_shards
from nvcregen.spec.positions import Document
from nvcregen.spec.v1alpha1 import Site


class ArgoCdObjects:
    """Applications in sync waves under the site's parent."""

    def layer(
        self,
        site: Site,
        present: list[str],
        layers: Sequence[Manifest],
        charts: Mapping[str, ChartEntry],
    ) -> list[Manifest]:
        """The AppProject, an Application per present layer, and the parent applying them."""
        return argocd_layer(site, present, layers, charts)

    def problems(self, site: Site, doc: Document, url: str) -> list[Diagnostic]:
        """None: an Application's source takes any repository URL Git does."""
        return []

    def platform(self, site: Site) -> list[Manifest]:
        """The partial `argocd-cm` of the health checks, unless the site installs its own.

        Without it Argo CD's waves wait for nothing (`gitops.healthChecks: existing` says
        the cluster's argocd-cm holds them already).
        """
        return [argocd_health_config()] if site.spec.gitops.health_checks == "install" else []

    def chain(
        self, site: Site, gitops: Sequence[Manifest], steps: Sequence[Step]
    ) -> list[Manifest]:
        """Unchanged: the runs' sync waves and the final gate order the steps."""
        return list(gitops)

    def shards(
        self,
        manifests: Sequence[Manifest],
        site: Site,
        source_file: str,
        folders: Mapping[str, list[Manifest]],
        facts: EngineFacts,
    ) -> list[Manifest]:
        """The readiness Application a parent of child Applications, once it is too large."""
        return argocd_shards(manifests, site, source_file, folders, facts)


OBJECTS = ArgoCdObjects()
