"""A Kueue Workload checked with each distinct container list once (pure).

A prebuilt Workload repeats its run's containers (`nvcregen.compile.queue.prebuilt`), and
every run of a test has the same ones, so a fleet's Workloads hold a few distinct
container lists thousands of times. What the checks say of a container list does not
depend on what surrounds it: its schema is a sub-schema of its own, the Workload CRD has
no CEL rule on a pod template, and the policies read each string by itself. So the gate
checks a Workload as a *skeleton* (every pod set's `containers` emptied, `initContainers`
left out) and each container list in a *probe*, a minimal Workload of one pod set that
holds it, once per distinct list; a probe's findings inside the list are moved to each
pod set that has it. The Workload CRD's CEL rules all bind above the pod templates and
never read them (`templates_unread`), so they run on the skeleton without its templates.
"""

from __future__ import annotations

import dataclasses
import functools
import json
from collections.abc import Mapping
from typing import Any

from nvcregen.check.findings import Finding
from nvcregen.kubeschema.registry import default_registry

API_PREFIX = "kueue.x-k8s.io/"
LISTS = ("containers", "initContainers")
_PROBE_SET = "/spec/podSets/0/"


def split_containers(obj: Mapping[str, Any]) -> tuple[dict[str, Any], list[tuple[int, str]]] | None:
    """(skeleton, [(pod set index, key of its lists)]) of a Workload; None for anything else.

    None too when the pod sets are not shaped as the schema says (the whole object is then
    checked as it is, and the schema says what is wrong).
    """
    if obj.get("kind") != "Workload" or not str(obj.get("apiVersion", "")).startswith(API_PREFIX):
        return None
    spec = obj.get("spec")
    pod_sets = spec.get("podSets") if isinstance(spec, Mapping) else None
    if not isinstance(pod_sets, list):
        return None
    skeletons: list[Any] = []
    lists: list[tuple[int, str]] = []
    for index, pod_set in enumerate(pod_sets):
        pod = _pod_spec(pod_set)
        if pod is None or not all(isinstance(pod.get(k, []), list) for k in LISTS):
            return None
        template = pod_set["template"]
        emptied = {k: v for k, v in pod.items() if k != "initContainers"} | {"containers": []}
        skeletons.append({**pod_set, "template": {**template, "spec": emptied}})
        held = {k: pod[k] for k in LISTS if k in pod}
        try:
            lists.append((index, json.dumps(held, sort_keys=True, separators=(",", ":"))))
        except (TypeError, ValueError):  # not JSON (a key that is no string): checked whole
            return None
    assert isinstance(spec, Mapping)
    return {**obj, "spec": {**spec, "podSets": skeletons}}, lists


def _pod_spec(pod_set: Any) -> Mapping[str, Any] | None:
    if not isinstance(pod_set, Mapping) or not isinstance(pod_set.get("template"), Mapping):
        return None
    pod = pod_set["template"].get("spec")
    return pod if isinstance(pod, Mapping) else None


def probe(key: str) -> dict[str, Any]:
    """A minimal Workload whose one pod set holds the container lists of `key`."""
    return {
        "apiVersion": f"{API_PREFIX}v1beta2",
        "kind": "Workload",
        "metadata": {"name": "probe", "namespace": "probe"},
        "spec": {
            "queueName": "probe",
            "podSets": [{"name": "main", "count": 1, "template": {"spec": json.loads(key)}}],
        },
    }


def in_containers(finding: Finding) -> bool:
    """Whether a probe's finding is about its container lists (not the probe around them)."""
    return any(
        finding.pointer == f"{_PROBE_SET}template/spec/{k}"
        or finding.pointer.startswith(f"{_PROBE_SET}template/spec/{k}/")
        for k in LISTS
    )


def moved(finding: Finding, index: int) -> Finding:
    """A probe's finding, at the same place in pod set `index`."""
    pointer = f"/spec/podSets/{index}/" + finding.pointer.removeprefix(_PROBE_SET)
    return dataclasses.replace(finding, pointer=pointer)


def cel_view(skeleton: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The skeleton without pod templates, for its CEL rules; None when a rule reads them."""
    if not templates_unread(str(skeleton.get("apiVersion", ""))):
        return None
    spec = skeleton["spec"]
    pod_sets = [{k: v for k, v in p.items() if k != "template"} for p in spec["podSets"]]
    return {**skeleton, "spec": {**spec, "podSets": pod_sets}}


@functools.cache
def templates_unread(api_version: str) -> bool:
    """Whether no CEL rule of the Workload CRD binds in or mentions a pod template."""
    rules = default_registry().cel_rules(api_version, "Workload")
    return not any(
        "/template" in rule.pointer_in_schema
        or "template" in rule.rule
        or "template" in (rule.message_expression or "")
        for rule in rules
    )
