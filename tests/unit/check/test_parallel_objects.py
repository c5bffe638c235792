"""The render gate's per-object checks on every core give exactly the serial findings."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from trainerfactory import example_manifests

from nvcregen.check import parallel
from nvcregen.check.objectcheck import object_findings
from nvcregen.check.parallel import objects_findings

TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def _objects() -> list[dict[str, Any]]:
    """The example's objects four times over, three of them broken in different ways."""
    found = [copy.deepcopy(m.obj) for m in example_manifests() for _ in range(4)]
    workload = next(o for o in found if o["kind"] == "Workload")
    workload["spec"]["podSets"][0]["count"] = -1
    job = next(o for o in found if o["kind"] == "Job")
    job["spec"]["template"]["spec"]["containers"][0]["env"] = [{"name": "T", "value": TOKEN}]
    found[-1]["metadata"]["name"] = "Not_A_Name"
    return found


def _as_tuples(found: list[list[Any]]) -> list[list[tuple[str, str, str, str, str]]]:
    return [[(f.pointer, f.code, f.message, f.severity.value, f.hint) for f in fs] for fs in found]


def test_forked_workers_find_what_one_process_finds(monkeypatch: pytest.MonkeyPatch) -> None:
    objects = _objects()
    serial = [object_findings(o, kube_version="1.33") for o in objects]
    assert sum(1 for fs in serial if fs) >= 3  # the three broken objects at least
    monkeypatch.setattr(parallel, "PARALLEL_FROM", 2)  # the example is smaller than a fleet
    ran: list[bool] = []
    forked = objects_findings(objects, "1.33", lambda: ran.append(True))
    assert ran == [True]  # the caller's work ran once, while the workers worked
    assert _as_tuples(forked) == _as_tuples(serial)


def test_below_the_threshold_nothing_is_forked(monkeypatch: pytest.MonkeyPatch) -> None:
    objects = _objects()
    monkeypatch.setattr(parallel, "PARALLEL_FROM", len(objects) + 1)
    monkeypatch.setattr(parallel, "ProcessPoolExecutor", None)  # any fork would fail
    found = objects_findings(objects, "1.33")
    assert _as_tuples(found) == _as_tuples(
        [object_findings(o, kube_version="1.33") for o in objects]
    )
