"""The engines' names, importing nothing: for command-line choices and defaults.

The command line's choices are read when it is built, and `nvcregen --version` loads no
model; the registry holds the engines themselves, and a test keeps the lists the same.
"""

from __future__ import annotations

GITOPS_NAMES = ("argocd", "flux")  # `spec.gitops.engine`, in `init --gitops`'s order
DEFAULT_GITOPS_NAME = GITOPS_NAMES[0]  # what `init` writes unless told
READINESS_NAMES = ("nvcre", "trainer")  # `spec.readiness.engine`
DEFAULT_READINESS_NAME = READINESS_NAMES[0]  # a site that names no readiness engine
