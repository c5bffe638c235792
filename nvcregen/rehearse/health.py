"""The health a GitOps engine reads from a live object: the verdicts every engine gives.

Each engine computes it its own way, in its package (`engines/gitops/<engine>/
livehealth.py`, asked through `gitopsplay.GitOpsPlayer.health`): Argo CD with the site's
own Lua checks, Flux with a Kustomization's `healthCheckExprs` and its own Job reader.
Each verdict is one of `HEALTHY`, `FAILED` or `WAITING` (with the engine's own words).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Verdict = Literal["healthy", "failed", "waiting"]
HEALTHY: Verdict = "healthy"
FAILED: Verdict = "failed"
WAITING: Verdict = "waiting"


@dataclass(frozen=True)
class Health:
    """One object's health: the verdict and the engine's status and message."""

    verdict: Verdict
    status: str
    message: str = ""
