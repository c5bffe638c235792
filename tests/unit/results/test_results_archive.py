"""The archive: deterministic run ids, exact objects, SHA256SUMS, atomic and never overwritten."""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from nvcregen.results.archive import (
    archived_objects,
    build_archive,
    object_path,
    run_id,
    verify_archive,
    write_archive,
)

STATUS = Path(__file__).resolve().parents[2] / "fixtures" / "collect" / "status"
TEXTS = {
    "summary.json": "{}\n",
    "bandwidth.csv": "x\n",
    "verdicts.json": "{}\n",
    "provenance.json": "{}\n",
}


def objects() -> list[dict[str, Any]]:
    return [json.loads(p.read_text()) for p in sorted(STATUS.glob("*.json"))]


def test_run_id_is_the_latest_time_and_a_hash_of_site_and_objects() -> None:
    first = run_id(objects(), "a" * 64)
    assert first == run_id(list(reversed(objects())), "a" * 64)  # order does not matter
    stamp, digest = first.split("-")
    assert stamp == "20261014T130100Z"  # the snapshot's completion time is the latest
    assert len(digest) == 12
    assert run_id(objects(), "b" * 64) != first  # another site file, another run
    changed = objects()
    changed[0]["metadata"]["resourceVersion"] = "99999"
    assert run_id(changed, "a" * 64) != first  # another state, another run


def test_run_id_without_timestamps_is_undated() -> None:
    obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}
    assert run_id([obj], "a" * 64).startswith("undated-")


def test_objects_go_to_one_file_each_by_kind_namespace_and_name() -> None:
    obj = json.loads((STATUS / "bandwidth-final.json").read_text())
    assert object_path(obj) == f"objects/bandwidthmeasurement/nvcre/{obj['metadata']['name']}.yaml"
    cluster_scoped = {
        "apiVersion": "nvcre.nvidia.com/v1alpha1",
        "kind": "LogProfile",
        "metadata": {"name": "p"},
    }
    assert object_path(cluster_scoped) == "objects/logprofile/_cluster/p.yaml"


def test_two_objects_on_one_path_are_refused() -> None:
    obj = objects()[0]
    with pytest.raises(ValueError, match="two objects are"):
        build_archive("r", [obj, obj], TEXTS)


def test_an_archive_reads_back_exactly_and_verifies_with_sha256sum(tmp_path: Path) -> None:
    archive = build_archive("20261014T130100Z-abc", objects(), TEXTS)
    written = write_archive(tmp_path / "lab", archive)
    assert (written.state, written.verified) == ("written", True)
    assert written.path == tmp_path / "lab" / "20261014T130100Z-abc"
    assert archived_objects(written.path) == sorted(objects(), key=object_path)
    done = subprocess.run(
        ["sha256sum", "--check", "--strict", "SHA256SUMS"],
        cwd=written.path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert sorted(p.name for p in (tmp_path / "lab").iterdir()) == [
        "20261014T130100Z-abc"
    ]  # no temporary left


def test_an_existing_archive_is_never_overwritten(tmp_path: Path) -> None:
    first = write_archive(tmp_path, build_archive("run", objects(), TEXTS))
    summary = first.path / "summary.json"
    before = summary.read_bytes()
    again = write_archive(
        tmp_path, build_archive("run", objects(), {**TEXTS, "summary.json": "{changed}\n"})
    )
    assert (again.state, again.verified) == ("exists", True)
    assert summary.read_bytes() == before


def test_a_changed_file_does_not_verify(tmp_path: Path) -> None:
    written = write_archive(tmp_path, build_archive("run", objects(), TEXTS))
    victim = written.path / object_path(objects()[0])
    victim.write_text(victim.read_text().replace("427.58", "527.58"))
    assert verify_archive(written.path) == [
        f"{object_path(objects()[0])} does not match its sha256 in SHA256SUMS"
    ]


def test_an_extra_or_missing_file_does_not_verify(tmp_path: Path) -> None:
    written = write_archive(tmp_path, build_archive("run", objects(), TEXTS))
    (written.path / "notes.txt").write_text("added later")
    (written.path / "bandwidth.csv").unlink()
    assert verify_archive(written.path) == [
        "bandwidth.csv is listed in SHA256SUMS but missing",
        "notes.txt is not listed in SHA256SUMS",
    ]


def test_an_archive_without_sums_does_not_verify(tmp_path: Path) -> None:
    written = write_archive(tmp_path, build_archive("run", objects(), TEXTS))
    (written.path / "SHA256SUMS").unlink()
    assert verify_archive(written.path)[0].startswith("SHA256SUMS cannot be read")


def test_sums_cover_every_file_but_themselves() -> None:
    archive = build_archive("run", objects(), TEXTS)
    lines = archive.files["SHA256SUMS"].decode().splitlines()
    listed = {line.split("  ", 1)[1]: line.split("  ", 1)[0] for line in lines}
    assert set(listed) == set(archive.files) - {"SHA256SUMS"}
    assert listed["summary.json"] == hashlib.sha256(b"{}\n").hexdigest()
