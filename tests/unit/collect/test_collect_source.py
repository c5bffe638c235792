"""`--from DIR`: exported lists and single objects, read exactly as written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from labstate import find, lab_state, write_export

from nvcregen.collect.source import SourceError, read_folder
from nvcregen.results.liveobjects import key_of


def test_lists_typed_lists_multi_document_files_and_singles_are_read(tmp_path: Path) -> None:
    objects = lab_state()
    snapshot = read_folder(write_export(tmp_path / "export", objects))
    assert sorted(map(key_of, snapshot.objects)) == sorted(map(key_of, objects))
    assert snapshot.origin == "folder export"  # no absolute path of this machine
    workflow = next(o for o in snapshot.objects if o["kind"] == "Workflow")
    assert workflow["apiVersion"] == "nvcre.nvidia.com/v1alpha1"  # filled in from WorkflowList
    as_read = {key_of(o): o for o in snapshot.objects}
    for obj in objects:
        assert as_read[key_of(obj)] == obj  # exactly as exported


def test_unquoted_timestamps_stay_the_strings_they_are(tmp_path: Path) -> None:
    (tmp_path / "cm.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  namespace: nvcre\n"
        "  creationTimestamp: 2026-10-14T08:00:00Z\ndata:\n  day: 2026-10-14\n"
    )
    (obj,) = read_folder(tmp_path).objects
    assert obj["metadata"]["creationTimestamp"] == "2026-10-14T08:00:00Z"
    assert obj["data"]["day"] == "2026-10-14"


def test_an_empty_folder_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("no objects here")
    with pytest.raises(SourceError, match=r"no \.yaml, \.yml or \.json files"):
        read_folder(tmp_path)


def test_every_bad_file_is_reported(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text("kind: [unclosed\n")
    (tmp_path / "b.json").write_text("{not json")
    (tmp_path / "c.yaml").write_text("just: a mapping\n")
    with pytest.raises(SourceError) as raised:
        read_folder(tmp_path)
    problems = raised.value.problems
    assert [p.split(":")[0] for p in problems] == ["a.yaml", "b.json", "c.yaml (document 1)"]
    assert "not a Kubernetes object" in problems[2]


def test_one_object_twice_is_fine_but_two_versions_of_it_are_not(tmp_path: Path) -> None:
    cert = find(lab_state(), "Certification", "lab-two-node-0002")
    (tmp_path / "one.json").write_text(json.dumps(cert))
    (tmp_path / "two.json").write_text(json.dumps(cert))
    assert len(read_folder(tmp_path).objects) == 1
    cert["status"]["categoryStatuses"][0]["status"] = "Failed"
    (tmp_path / "two.json").write_text(json.dumps(cert))
    with pytest.raises(
        SourceError,
        match=r"two\.json \(document 1\): Certification nvcre/lab-two-node-0002 differs",
    ):
        read_folder(tmp_path)
