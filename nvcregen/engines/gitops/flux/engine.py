"""Flux as a GitOps engine (`spec.gitops.engine: flux`)."""

from __future__ import annotations

import re

from nvcregen.catalog.engines import EngineFacts
from nvcregen.engineapi.protocol import GitOpsEngine


class Flux(GitOpsEngine):
    """Kustomizations of one Git source, a step each, ordered by dependsOn."""

    name = "flux"
    title = "Flux"
    unit_kind = "Kustomization"
    unit_path = "/spec/path"
    kustomizations = True
    final_gate = False
    suspended_job_current = True
    repo_url = re.compile(r"^(http|https|ssh)://.*$")  # GitRepository spec.url

    def status_bytes(self, objects: int, inventory_bytes: int, facts: EngineFacts) -> int:
        """A Kustomization's status is its inventory, an entry per object it applies."""
        return inventory_bytes


ENGINE = Flux()
