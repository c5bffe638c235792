"""The Kueue Configuration a rendered site installs Kueue with, read from its platform layer.

nvcregen renders it into Kueue's chart values (`managerConfig.
controllerManagerConfigYaml`), of the release named `kueue`, installed by the site's
GitOps engine (an Argo CD Application's `source.helm.valuesObject`, a Flux HelmRelease's
`spec.values`: each engine's `ChartReference.release_values` reads its own). The twin starts Kueue
from it (its integrations, `waitForPodsReady`, client and controller settings; where
Kueue listens is the twin's). None when the tree installs no Kueue (an existing one).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import yaml

from nvcregen.compile.platform.helmref import chart_references
from nvcregen.replay.model import TreeObject

RELEASE = "kueue"


def _values(item: TreeObject) -> Mapping[str, Any] | None:
    for reference in chart_references():
        found = reference.release_values(item.obj)
        if found is not None and found[0] == RELEASE:
            return found[1] if isinstance(found[1], dict) else None
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
