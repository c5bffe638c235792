"""The Kueue Configuration a rendered site installs Kueue with, read from its platform layer.

nvcregen renders it into Kueue's chart values (`managerConfig.
controllerManagerConfigYaml`): in an Argo CD Application's `source.helm.valuesObject`, or
a Flux HelmRelease's `spec.values`, of the release named `kueue`. The twin starts Kueue
from it (its integrations, `waitForPodsReady`, client and controller settings; where
Kueue listens is the twin's). None when the tree installs no Kueue (an existing one).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import yaml

from nvcregen.replay.model import TreeObject

RELEASE = "kueue"


def _values(item: TreeObject) -> Mapping[str, Any] | None:
    if item.kind == "Application" and item.group == "argoproj.io":
        helm = (item.spec.get("source") or {}).get("helm") or {}
        if helm.get("releaseName") == RELEASE:
            values = helm.get("valuesObject")
            return values if isinstance(values, dict) else None
    if item.kind == "HelmRelease" and item.spec.get("releaseName") == RELEASE:
        values = item.spec.get("values")
        return values if isinstance(values, dict) else None
    return None


def kueue_configuration(objects: Iterable[TreeObject]) -> dict[str, Any] | None:
    """The Configuration of the tree's Kueue release; None when there is none."""
    for item in objects:
        values = _values(item)
        if values is None:
            continue
        text = (values.get("managerConfig") or {}).get("controllerManagerConfigYaml")
        if isinstance(text, str):
            loaded = yaml.safe_load(text)
            if isinstance(loaded, dict):
                return loaded
    return None
