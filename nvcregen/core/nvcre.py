"""NVCRE's API: the group and version of what `compile` writes and `collect` reads back."""

from __future__ import annotations

NVCRE_GROUP = "nvcre.nvidia.com"
NVCRE_VERSION = "v1alpha1"
NVCRE_API = f"{NVCRE_GROUP}/{NVCRE_VERSION}"
"""The API group, its version, and the apiVersion of every NVCRE object."""

# The longest names nvcregen gives NVCRE's own objects: NVCRE appends its suffixes to make
# the Workflows it runs (the engine's layer writes them; the alerts match those Workflows).
CERTIFICATION_NAME_MAX = 40
WORKLOADRUN_NAME_MAX = 52
