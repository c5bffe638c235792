"""Every readiness and GitOps engine, registered once; the layers find a site's here."""

from __future__ import annotations

from nvcregen.engines.gitops.argocd.engine import ArgoCd
from nvcregen.engines.gitops.flux.engine import Flux
from nvcregen.engines.names import DEFAULT_GITOPS_NAME
from nvcregen.engines.protocol import GitOpsEngine, ReadinessEngine
from nvcregen.engines.readiness.nvcre.engine import Nvcre
from nvcregen.engines.readiness.trainer.engine import Trainer
from nvcregen.spec.v1alpha1 import Site

ARGOCD = ArgoCd()  # the engine whose objects `replay/argocd.py` replays
FLUX = Flux()  # the engine whose objects `replay/flux.py` replays
GITOPS: dict[str, GitOpsEngine] = {e.name: e for e in (ARGOCD, FLUX)}
READINESS: dict[str, ReadinessEngine] = {e.name: e for e in (Nvcre(), Trainer())}
DEFAULT_GITOPS = DEFAULT_GITOPS_NAME  # what `init` writes unless told
DEFAULT_READINESS = Nvcre.name  # a site that names no readiness engine


def gitops_engine(name: str) -> GitOpsEngine:
    """The GitOps engine of that name.

    Raises:
        ValueError: No such engine (the site schema refuses it first).

    """
    found = GITOPS.get(name)
    if found is None:
        raise ValueError(f"GitOps engine {name!r} is not one of {sorted(GITOPS)}")
    return found


def readiness_engine(name: str) -> ReadinessEngine:
    """The readiness engine of that name.

    Raises:
        ValueError: No such engine (the site schema refuses it first).

    """
    found = READINESS.get(name)
    if found is None:
        raise ValueError(f"readiness engine {name!r} is not one of {sorted(READINESS)}")
    return found


def gitops_of(site: Site) -> GitOpsEngine:
    """The site's GitOps engine (`spec.gitops.engine`)."""
    return gitops_engine(site.spec.gitops.engine)


def readiness_of(site: Site) -> ReadinessEngine:
    """The site's readiness engine (`spec.readiness.engine`)."""
    return readiness_engine(site.spec.readiness.engine)
