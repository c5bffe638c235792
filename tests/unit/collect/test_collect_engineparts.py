"""`collect` asks a readiness engine for its own collector (issue 35 item 3): trainer mode
collects its pod logs itself, NVCRE's results are its objects."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import cast

import pytest

from nvcregen.cluster.client import Cluster
from nvcregen.collect import collector
from nvcregen.collect.engineparts import is_node_logs, is_own_collector, node_logs, own_collector
from nvcregen.collect.model import CollectOptions
from nvcregen.core.labels import TEST
from nvcregen.engineapi.registry import READINESS
from nvcregen.results.select import SiteObjects

ROOT = Path(__file__).resolve().parents[3]


def test_trainer_mode_collects_itself_and_nvcre_mode_leaves_it_to_collect() -> None:
    owns = {name: own_collector(engine) is not None for name, engine in READINESS.items()}
    assert owns == {"nvcre": False, "trainer": True}
    found = own_collector(READINESS["trainer"])
    assert type(found).__module__ == "nvcregen.engines.readiness.trainer.collect"
    # the engines whose results are pod logs are those that collect themselves
    assert all(owns[name] is engine.writes_runs for name, engine in READINESS.items())


def test_only_an_object_with_a_collect_method_is_a_collector() -> None:
    class Collects:
        def collect(self, loaded: object, options: object, key: object) -> object:
            return None

    assert is_own_collector(Collects())
    assert not is_own_collector(object())


def test_nvcre_reads_the_node_health_logs_of_the_runs_it_makes_trainer_mode_none() -> None:
    readers = {name: node_logs(engine) for name, engine in READINESS.items()}
    assert readers["trainer"] is None
    found = readers["nvcre"]
    assert found is not None and is_node_logs(found)
    assert type(found).__module__ == "nvcregen.engines.readiness.nvcre.collect"
    assert not is_node_logs(object())


def test_an_engine_without_node_health_runs_reads_no_log(monkeypatch: pytest.MonkeyPatch) -> None:
    loaded = collector.load_site_file(ROOT, "h20-3e-lab")
    monkeypatch.setattr(collector, "node_logs", lambda _: None)
    unused = cast("Cluster", None)  # never reached: nothing is read
    options = CollectOptions("h20-3e-lab", root=ROOT)
    found = collector._cluster_node_health_logs(loaded, unused, SiteObjects(), options)
    assert found == ([], [])


def test_nvcre_dates_each_node_health_test_by_its_oldest_workloadrun_from_the_objects_alone() -> (
    None
):
    """`runs_created` asks nothing of the site: what it reads is the site's objects."""

    def owner(kind: str, test: str, created: str) -> dict[str, object]:
        meta = {"labels": {TEST: test}, "creationTimestamp": created}
        return {"kind": kind, "metadata": meta}

    owners = [
        owner("WorkloadRun", "node-health", "2026-10-14T12:05:00+00:00"),
        owner("WorkloadRun", "node-health", "2026-10-14T12:00:00+00:00"),  # the oldest
        owner("TrainJob", "node-health", "2026-10-14T11:00:00+00:00"),  # not a WorkloadRun
        owner("WorkloadRun", "dcgm-diag", "2026-10-14T10:00:00+00:00"),  # not asked for
        owner("WorkloadRun", "node-burn", "not a time"),  # no bound
    ]
    reader = node_logs(READINESS["nvcre"])
    assert reader is not None
    found = reader.runs_created(owners, ["node-health", "node-burn"])
    assert found == {"node-health": datetime(2026, 10, 14, 12, 0, tzinfo=UTC)}
