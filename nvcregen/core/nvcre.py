"""NVCRE's API: the group and version of what `compile` writes and `collect` reads back."""

from __future__ import annotations

NVCRE_GROUP = "nvcre.nvidia.com"
NVCRE_VERSION = "v1alpha1"
NVCRE_API = f"{NVCRE_GROUP}/{NVCRE_VERSION}"
"""The API group, its version, and the apiVersion of every NVCRE object."""
