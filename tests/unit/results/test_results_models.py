"""Parsing recorded NVCRE statuses: finality, decimal strings, node results, report exports."""

from __future__ import annotations

import base64
import copy
import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from nvcregen.kubeschema.registry import default_registry
from nvcregen.results.models import (
    Finality,
    GoodputComponents,
    ResultError,
    parse_bandwidth,
    parse_goodput,
)
from nvcregen.results.payloads import (
    Verification,
    failed_nodes,
    report_export,
    succeeded_nodes,
)

STATUS = Path(__file__).resolve().parents[2] / "fixtures" / "collect" / "status"
GIB = 1 << 30


def load(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((STATUS / name).read_text(encoding="utf-8"))
    return data


@pytest.mark.parametrize("name", sorted(p.name for p in STATUS.glob("*.json")))
def test_recorded_objects_follow_the_crd_schemas(name: str) -> None:
    obj = load(name)
    if obj["kind"] == "Workflow":
        pytest.skip("the Workflow CRD is not vendored")
    # `status.transport` is recorded by NVCRE after 0.7.0 only; the 0.7.0 CRD lacks it.
    (obj.get("status") or {}).pop("transport", None)
    assert default_registry().validate(obj) == []


def test_a_final_bandwidth_has_every_size_as_floats() -> None:
    measurement = parse_bandwidth(load("bandwidth-final.json"))
    assert measurement.finality is Finality.FINAL
    assert measurement.reason == "JobSucceeded"
    assert [r.size_bytes for r in measurement.rows] == [1 << 20, 64 << 20, GIB]
    row = measurement.at(GIB)
    assert row is not None
    assert (row.bus_bw, row.alg_bw, row.samples) == (427.58, 228.04, 10)
    assert measurement.job.endswith("group-0-2-job")
    assert measurement.owners == ("uid-wf-2",)
    assert measurement.transports == ()


@pytest.mark.parametrize(
    ("name", "finality", "reason"),
    [
        ("bandwidth-measuring.json", Finality.PROVISIONAL, "Measuring"),
        ("bandwidth-no-data.json", Finality.PROVISIONAL, "NoDataCollected"),
        ("bandwidth-final-read-pending.json", Finality.PROVISIONAL, "FinalReadPending"),
        ("bandwidth-job-failed.json", Finality.NOT_EVALUATED, "JobFailed"),
    ],
)
def test_only_job_succeeded_is_final(name: str, finality: Finality, reason: str) -> None:
    measurement = parse_bandwidth(load(name))
    assert (measurement.finality, measurement.reason) == (finality, reason)


def test_complete_with_an_unknown_reason_is_provisional() -> None:
    obj = load("bandwidth-final.json")
    obj["status"]["conditions"][1]["reason"] = "LogsUnavailable"
    assert parse_bandwidth(obj).finality is Finality.PROVISIONAL
    obj["status"]["conditions"][1]["reason"] = "SomethingNew"
    assert parse_bandwidth(obj).finality is Finality.PROVISIONAL


def test_no_conditions_is_provisional() -> None:
    obj = load("bandwidth-final.json")
    del obj["status"]["conditions"]
    measurement = parse_bandwidth(obj)
    assert (measurement.finality, measurement.reason) == (Finality.PROVISIONAL, "NotComplete")


def test_recorded_transports_are_kept() -> None:
    assert parse_bandwidth(load("bandwidth-socket.json")).transports == ("Socket",)


@pytest.mark.parametrize("bad", ["fast", "NaN", "inf", True, None])
def test_a_bandwidth_that_is_no_finite_number_is_an_error_not_a_zero(bad: object) -> None:
    obj = load("bandwidth-final.json")
    obj["status"]["results"][2]["busBW"] = bad
    with pytest.raises(ResultError, match=r"status\.results\[2\]\.busBW") as caught:
        parse_bandwidth(obj)
    assert (caught.value.field, caught.value.value) == ("status.results[2].busBW", bad)


def test_goodput_is_final_once_complete_and_keeps_its_components() -> None:
    measurement = parse_goodput(load("goodput-frozen.json"))
    assert measurement.finality is Finality.FINAL
    assert measurement.ratio == pytest.approx(0.942373)
    assert measurement.components.training == 1000.0
    assert measurement.components.lost_work == 20.0
    assert measurement.components.ratio() == pytest.approx(0.942373)
    assert measurement.avg_tflops_per_gpu == 295.0
    assert measurement.interruptions == 1


def test_goodput_ratio_leaves_rescheduling_out_of_the_denominator() -> None:
    parts = GoodputComponents(
        training=1000, lost_work=0, resume=0, reschedule=100, checkpoint_save=0
    )
    assert parts.ratio() == pytest.approx(900 / 900)
    parts = GoodputComponents(
        training=1000, lost_work=50, resume=0, reschedule=100, checkpoint_save=0
    )
    assert parts.ratio() == pytest.approx(850 / 900)
    assert GoodputComponents(training=1000).ratio() is None


def test_a_goodput_still_measuring_is_provisional() -> None:
    obj = load("goodput-frozen.json")
    obj["status"]["conditions"] = [{"type": "Measuring", "status": "True", "reason": "JobRunning"}]
    assert parse_goodput(obj).finality is Finality.PROVISIONAL


def test_failed_nodes_are_decoded_from_gzip_json() -> None:
    nodes = failed_nodes(load("configmap-failed-nodes.json"))
    assert [(n.name, n.reason) for n in nodes] == [
        ("node-b", "ThresholdViolation"),
        ("node-d", "HardwareFailureDetected"),
    ]
    assert nodes[1].message == "Xid 79 on GPU 3"


def test_succeeded_nodes_are_decoded_from_gzip_csv() -> None:
    assert succeeded_nodes(load("configmap-succeeded-nodes.json")) == ("node-a", "node-c")
    assert failed_nodes(load("configmap-succeeded-nodes.json")) == ()


def test_a_corrupt_node_payload_is_an_error() -> None:
    cm = load("configmap-failed-nodes.json")
    cm["binaryData"]["failed-nodes.json.gz"] = base64.b64encode(b"not gzip").decode()
    with pytest.raises(ResultError, match="not base64 gzip"):
        failed_nodes(cm)
    cm["binaryData"]["failed-nodes.json.gz"] = base64.b64encode(
        gzip.compress(b'[{"x": 1}]')
    ).decode()
    with pytest.raises(ResultError, match=r"failed-nodes\.json\.gz"):
        failed_nodes(cm)


def test_a_report_export_verifies_against_its_snapshot() -> None:
    result = report_export(load("reportexport.json"), load("configmap-snapshot.json"))
    assert result.verification is Verification.VERIFIED
    assert result.detail == "report result PASSED"
    assert result.source == "lab-two-node-0002"


def test_a_tampered_snapshot_does_not_verify() -> None:
    snapshot = load("configmap-snapshot.json")
    body = gzip.decompress(base64.b64decode(snapshot["binaryData"]["report.json.gz"]))
    tampered = body.replace(b"PASSED", b"FAILED")
    snapshot["binaryData"]["report.json.gz"] = base64.b64encode(gzip.compress(tampered)).decode()
    result = report_export(load("reportexport.json"), snapshot)
    assert result.verification is Verification.MISMATCH
    assert "sha256 of the snapshot is" in result.detail


def test_a_wrong_payload_size_does_not_verify() -> None:
    export = load("reportexport.json")
    export["status"]["payloadBytes"] += 1
    result = report_export(export, load("configmap-snapshot.json"))
    assert result.verification is Verification.MISMATCH


def test_a_missing_snapshot_or_digest_is_not_verified() -> None:
    export = load("reportexport.json")
    assert report_export(export, None).verification is Verification.NO_SNAPSHOT
    waiting = copy.deepcopy(export)
    waiting["status"] = {"phase": "WaitingForResult"}
    result = report_export(waiting, None)
    assert result.verification is Verification.NOT_READY
    assert "WaitingForResult" in result.detail
