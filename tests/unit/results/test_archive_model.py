"""The archive's one model (issue #35, item 4): written by collect, read by every reader,
published as schemas/archive.v1alpha1.json.

Every archive a test collects is also checked against the shipped schema by the
`archiveschemas` plugin (tests/archiveschemas.py); these tests name the schema's own
promises and the model's.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from archiveschemas import schema_errors
from click.testing import CliRunner
from reportfactory import sample_files, sample_summary

from nvcregen.cli import main
from nvcregen.report.folder import measured_at
from nvcregen.results.archivemodel import (
    ArchiveFileError,
    BandwidthCsvRow,
    LogDigest,
    ProvenanceFile,
    SiteRef,
    SummaryFile,
    bandwidth_text,
    file_text,
    read_bandwidth_csv,
    read_json_file,
)
from nvcregen.results.archiveschema import archive_json_schema, archive_json_schema_text
from nvcregen.results.logrecords import LogRecord

ROOT = Path(__file__).resolve().parents[3]
SHIPPED = ROOT / "schemas" / "archive.v1alpha1.json"
REFRESH = "nvcregen schema --archive > schemas/archive.v1alpha1.json"


def test_the_shipped_schema_is_the_generated_one() -> None:
    shipped = SHIPPED.read_text(encoding="utf-8")
    assert json.loads(shipped) == archive_json_schema(), f"out of date; refresh: `{REFRESH}`"
    assert shipped == archive_json_schema_text(), f"formatting differs; refresh: `{REFRESH}`"


def test_nvcregen_schema_archive_prints_it_and_one_schema_at_a_time() -> None:
    result = CliRunner().invoke(main, ["schema", "--archive"])
    assert result.exit_code == 0
    assert result.output == SHIPPED.read_text(encoding="utf-8")
    both = CliRunner().invoke(main, ["schema", "--archive", "--catalog"])
    assert both.exit_code == 2
    assert "--catalog and --archive name two schemas: give one" in both.output


def test_the_schema_names_each_file_and_closes_every_object() -> None:
    schema = json.loads(SHIPPED.read_text(encoding="utf-8"))
    assert schema["anyOf"] == [
        {"$ref": "#/$defs/SummaryFile"},
        {"$ref": "#/$defs/Verdicts"},
        {"$ref": "#/$defs/ProvenanceFile"},
    ]
    summary = schema["$defs"]["SummaryFile"]
    assert summary["required"] == ["run_id", "site", "verdict"]
    assert "logs" in summary["properties"]  # present when read, never required
    assert all(
        d.get("additionalProperties") is False
        for d in schema["$defs"].values()
        if "properties" in d
    )
    row = schema["$defs"]["BandwidthRow"]["properties"]
    assert row["alg_bw"] == {"minimum": 0, "type": "number"}  # pydantic's `ge`, in JSON Schema


def test_a_key_collect_never_writes_or_a_missing_one_does_not_fit(tmp_path: Path) -> None:
    files = {name: text.encode() for name, text in sample_files().items()}
    assert schema_errors(files) == []  # the test factory writes with the model too
    summary = json.loads(files["summary.json"]) | {"extra": 1}
    del summary["run_id"]
    errors = schema_errors({**files, "summary.json": json.dumps(summary).encode()})
    assert errors == [
        "summary.json: $: Additional properties are not allowed ('extra' was unexpected)",
        "summary.json: $: 'run_id' is a required property",
    ]


def test_keys_of_one_engine_are_written_only_when_set() -> None:
    site = SiteRef(name="lab")
    assert "logs" not in json.loads(file_text(ProvenanceFile(site=site)))
    given = ProvenanceFile(site=site, logs=(LogDigest(path="logs/a.log", sha256="00"),))
    assert json.loads(file_text(given))["logs"] == [{"path": "logs/a.log", "sha256": "00"}]
    empty = json.loads(file_text(ProvenanceFile(site=site, gpu_models=())))
    assert empty["gpu_models"] == [] and "cuda_drivers" not in empty
    summary = SummaryFile.model_validate(sample_summary())
    assert "logs" not in json.loads(file_text(summary))
    read = summary.model_copy(update={"logs": (LogRecord(path="logs/a.log"),)})
    assert json.loads(file_text(read))["logs"][0]["path"] == "logs/a.log"
    assert (
        json.loads(file_text(SummaryFile.model_validate(sample_summary() | {"logs": []})))["logs"]
        == []
    )  # read from an archive that had it: kept


def test_an_archive_of_earlier_readers_keys_only_still_reads() -> None:
    """Keys the report's own models defaulted before issue #35 still default."""
    summary = sample_summary()
    summary["runs"][0]["bandwidth"] = [{"ref": {"name": "x"}, "group": "g"}]
    summary["logs"] = [{"path": "logs/x.log", "run": "x"}]
    read = read_json_file(SummaryFile, json.dumps(summary))
    (measured,) = read.runs[0].bandwidth
    assert (measured.ref.name, measured.ref.kind, str(measured.finality)) == (
        "x",
        "",
        "provisional",
    )
    assert read.logs[0].round == 0


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{not json", "error[NVC716]: not JSON"),
        ("[" * 100_000 + "]" * 100_000, "error[NVC714]: nested too deeply to be read"),
        ('{"site": "s", "run_id": ' + "9" * 5000 + "}", "error[NVC713]: cannot be decoded"),
        ('{"site": "s", "run_id": "r", "verdict": "maybe"}', "verdict: Input should be 'pass'"),
        ('{"site": "s", "run_id": "r", "verdict": "pass", "runs": [{}]}', "runs.0.stage: Field"),
    ],
)
def test_a_file_that_is_not_what_collect_writes_is_refused(text: str, message: str) -> None:
    with pytest.raises(ArchiveFileError) as raised:
        read_json_file(SummaryFile, text)
    assert str(raised.value).startswith(message)


def test_bandwidth_rows_round_trip_as_collect_writes_them() -> None:
    row = BandwidthCsvRow(
        stage="s", scope="intra-node", test="t", group="g,1", round=None, measurement="m",
        finality="final", reason="JobSucceeded", size_bytes=1024, algbw=1.5, busbw=2.0,
        samples=7, transports=("IB", "Socket"),
    )  # fmt: skip
    text = bandwidth_text([row])
    assert (
        text.splitlines()[1] == 's,intra-node,t,"g,1",,m,final,JobSucceeded,1024,,1.5,2,7,IB;Socket'
    )
    assert read_bandwidth_csv(text) == (row,)
    with pytest.raises(ArchiveFileError, match=r"bandwidth.csv line 2: error\[NVC713\]"):
        read_bandwidth_csv(text.replace(",1024,", f",{'9' * 5000},"))
    with pytest.raises(ArchiveFileError, match=r"line 2: .*not a bandwidth: 'inf'"):
        read_bandwidth_csv(text.replace(",1.5,", ",inf,"))


def test_a_run_is_ordered_by_summary_json_facts_even_when_the_rest_is_broken(
    tmp_path: Path,
) -> None:
    """Locating runs (report, history, verify) reads the run id and finish time through
    the model's RunFacts alone: a broken key elsewhere is the report's to refuse."""
    summary = sample_summary() | {"finished_at": "2026-10-14T08:00:00Z", "runs": "broken"}
    (tmp_path / "summary.json").write_text(json.dumps(summary), encoding="utf-8")
    assert measured_at(tmp_path) == "2026-10-14T08:00:00Z"
    (tmp_path / "summary.json").write_text('{"finished_at": 5}', encoding="utf-8")
    assert measured_at(tmp_path) is None  # not a time: the folder's name is not dated either
