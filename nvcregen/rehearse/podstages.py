"""kwok's pod stages for a rehearsal: each run's pods complete after its planned duration.

kwok's general pod stages (created, Ready, complete) wait 1-6 s each; a rendered object
cannot change that (a kwok annotation on its pod template would make its prebuilt Workload
differ from its job). So the stages change instead: every pod stage's default delay and
jitter are divided by the speed (`manifests.faster_stage`), and `pod-complete` is split:
one copy per (stage, test) of the plan, selecting the pods labelled with them
(`nvcregen.io/stage`, `nvcregen.io/test`, which every readiness pod template carries) and
completing them after the test's expected duration (the physics model's) divided by the
speed, without jitter; the general one keeps the pods without a test label.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from nvcregen.core import labels
from nvcregen.rehearse.manifests import faster_stage, kwok_stages, yaml_documents

COMPLETE = "pod-complete"


def _label(key: str) -> str:
    return f'.metadata.labels["{key}"]'


def complete_stage_of(general: Mapping[str, Any], stage: str, test: str, ms: int) -> dict[str, Any]:
    """A copy of kwok's `pod-complete` for the pods of one (stage, test): after `ms`."""
    found = copy.deepcopy(dict(general))
    found["metadata"] = {"name": f"{COMPLETE}-{stage}-{test}"}
    spec = found["spec"]
    spec["selector"]["matchExpressions"] = [
        *spec["selector"]["matchExpressions"],
        {"key": _label(labels.STAGE), "operator": "In", "values": [stage]},
        {"key": _label(labels.TEST), "operator": "In", "values": [test]},
    ]
    spec["delay"] = {"durationMilliseconds": max(ms, 0)}
    return found


def rehearsal_stages(
    manifests: Path, expected_ms: Mapping[tuple[str, str], int], speed: float
) -> list[dict[str, Any]]:
    """Every kwok stage of a rehearsal (see the module's docstring), node stages first."""
    stages: list[dict[str, Any]] = []
    for path in kwok_stages(manifests):
        for document in yaml_documents(path):
            stages += _split(faster_stage(document, speed), expected_ms, speed)
    return stages


def _split(
    stage: dict[str, Any], expected_ms: Mapping[tuple[str, str], int], speed: float
) -> Iterable[dict[str, Any]]:
    if stage.get("metadata", {}).get("name") != COMPLETE:
        return [stage]
    general = copy.deepcopy(stage)
    general["spec"]["selector"]["matchExpressions"].append(
        {"key": _label(labels.TEST), "operator": "DoesNotExist"}
    )
    copies = [
        complete_stage_of(stage, name, test, int(ms / speed))
        for (name, test), ms in sorted(expected_ms.items())
    ]
    return [general, *copies]
