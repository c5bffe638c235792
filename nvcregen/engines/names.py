"""The GitOps engines' names, importing nothing: for command-line choices.

The command line's choices are read when it is built, and `nvcregen --version` loads no
model; the registry holds the engines themselves, and a test keeps the two lists the same.
"""

from __future__ import annotations

GITOPS_NAMES = ("argocd", "flux")  # `spec.gitops.engine`, in `init --gitops`'s order
DEFAULT_GITOPS_NAME = GITOPS_NAMES[0]  # what `init` writes unless told
