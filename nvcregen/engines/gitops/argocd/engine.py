"""Argo CD as a GitOps engine (`spec.gitops.engine: argocd`)."""

from __future__ import annotations

from nvcregen.catalog.engines import EngineFacts
from nvcregen.engineapi.protocol import GitOpsEngine


class ArgoCd(GitOpsEngine):
    """Applications under the site's parent, ordered by sync waves and a final gate."""

    name = "argocd"
    title = "Argo CD"
    unit_kind = "Application"
    unit_path = "/spec/source/path"
    kustomizations = False
    final_gate = True
    suspended_job_current = False
    repo_url = None

    def status_bytes(self, objects: int, inventory_bytes: int, facts: EngineFacts) -> int:
        """An Application lists every resource it applies in its status."""
        return objects * facts.argocd_status_per_resource

    def pull_notes(self, repository: str, digest: str | None) -> tuple[str, ...]:
        """By digest as an OCI source, else by version from a Helm OCI repository."""
        if digest:
            return ("Argo CD pulls it by digest as an OCI source (Argo CD 3.1 or later)",)
        return (
            f"Argo CD resolves {repository} as a Helm OCI repository and pulls by "
            "version; register it (enableOCI) if your Argo CD requires that",
        )


ENGINE = ArgoCd()
