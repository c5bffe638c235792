"""Argo CD as the replay models it: its Applications' waves (`nvcregen.replay.argocd`)."""

from __future__ import annotations

from collections.abc import Sequence

from nvcregen.plan.facts import PlanFacts
from nvcregen.replay.argocd import applications, argocd_gating, health_checks, waves_only
from nvcregen.replay.gating import Gating
from nvcregen.replay.gitopsmodel import Held
from nvcregen.replay.model import Run, TreeObject


class ArgoCdModel:
    """Argo CD as the replay models it (`replay.gitopsmodel.GitOpsModel`)."""

    worker_steps = None  # an Application's wave holds no worker of a limited pool

    def units(self, objects: Sequence[TreeObject], root: str) -> list[Held]:
        """Each Application reading the site's folder, with its subfolders if it recurses."""
        return applications(objects, root)

    def gating(
        self,
        objects: Sequence[TreeObject],
        runs: Sequence[Run],
        units: Sequence[Held],
        facts: PlanFacts,
    ) -> Gating:
        """Steps per Application and wave, held to the tree's health checks."""
        checks = None if facts.external_health_checks else health_checks(objects)
        return argocd_gating(objects, runs, units, checks)

    def bare(self, objects: Sequence[TreeObject], runs: Sequence[Run]) -> Gating | None:
        """Waves as one Application with every check would run them."""
        return waves_only(objects, runs)


MODEL = ArgoCdModel()
