"""The render gate's per-object checks on every core give exactly the serial findings."""

from __future__ import annotations

import copy
import os
from typing import Any

import pytest
from trainerfactory import example_manifests, example_text

from nvcregen.check.objectcheck import object_findings
from nvcregen.check.parallel import objects_findings
from nvcregen.core import forked
from nvcregen.emit.tree import to_tree
from nvcregen.spec.load import load_document

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
    monkeypatch.setattr(forked, "FORK_FROM", 2)  # the example is smaller than a fleet
    ran: list[bool] = []
    found = objects_findings(objects, "1.33", lambda: ran.append(True))
    assert ran == [True]  # the caller's work ran once, while the workers worked
    assert _as_tuples(found) == _as_tuples(serial)


def test_below_the_threshold_nothing_is_forked(monkeypatch: pytest.MonkeyPatch) -> None:
    objects = _objects()
    monkeypatch.setattr(forked, "FORK_FROM", len(objects) + 1)
    monkeypatch.setattr(forked, "_pool", None)  # any fork would fail
    found = objects_findings(objects, "1.33")
    assert _as_tuples(found) == _as_tuples(
        [object_findings(o, kube_version="1.33") for o in objects]
    )


def test_written_texts_are_the_same_from_workers(monkeypatch: pytest.MonkeyPatch) -> None:
    """`to_tree` dumps the objects in forked workers: the same files, in the same order."""
    doc, _ = load_document(example_text().encode(), "site.yaml")
    assert doc is not None
    manifests = list(example_manifests())
    serial = to_tree("lab", manifests, doc, "site.yaml")
    monkeypatch.setattr(forked, "FORK_FROM", 2)
    monkeypatch.setattr(forked, "_piece", _piece_in_worker)
    parallel = to_tree("lab", manifests, doc, "site.yaml")
    assert list(parallel.items()) == list(serial.items())
    assert len(parallel) == len(manifests) + 1  # and index.json


_PARENT = os.getpid()


def _piece_in_worker(indexes: list[int]) -> bytes:
    assert os.getpid() != _PARENT  # the texts really come from a forked worker
    return _ORIGINAL_PIECE(indexes)


_ORIGINAL_PIECE = forked._piece


def test_forked_map_keeps_order_does_first_here_and_runs_meanwhile_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(forked, "FORK_FROM", 10)
    where: list[int] = []

    def task(index: int) -> tuple[int, int]:
        if index == 3:
            where.append(os.getpid())  # only the one done before forking reaches here
        return index, os.getpid()

    ran: list[int] = []
    found = forked.forked_map(task, 50, first=(3,), meanwhile=lambda: ran.append(1))
    assert [i for i, _ in found] == list(range(50)) and ran == [1]
    assert found[3][1] == os.getpid() == where[0]
    assert {pid for i, pid in found if i != 3} - {os.getpid()}  # the rest ran in workers
    monkeypatch.setattr(forked, "FORK_FROM", 51)  # one under: all here
    assert {pid for _, pid in forked.forked_map(task, 50)} == {os.getpid()}


def test_equal_strings_become_one_object_and_the_data_stays_equal() -> None:
    from nvcregen.check.parallel import share_strings

    script = "".join(["echo ", "hello"])  # built, so not a constant Python shares already
    first = {"a": [script, {"b": "".join(["echo ", "hello"])}], "n": 3}
    second = ["".join(["echo ", "hello"]), {"c": None}]
    before = copy.deepcopy((first, second))
    seen: dict[str, str] = {}
    share_strings(first, seen)
    share_strings(second, seen)
    assert (first, second) == before
    assert first["a"][0] is first["a"][1]["b"] is second[0]  # type: ignore[index]
