"""Every file of an archive is read bounded: sparse 8 GiB files are refused unread (NVC759).

Until issue #32 an 8 GiB sparse `attestation.dsse.json` or `SHA256SUMS` was read whole
before the 64 MiB cap (`verify` ended in a MemoryError, `report` took 8.4 GB). The files
here are sparse (`truncate`), so they cost no disk; the address space of the process is
capped meanwhile, so a whole read fails at once instead of filling the machine's memory.
"""

from __future__ import annotations

import os
import resource
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from memorypeak import peak_of
from reportfactory import sample_run, sample_summary

from nvcregen.cli import main
from nvcregen.core.errors import ExitCode
from nvcregen.report.archive import read_archive, read_texts
from nvcregen.report.folder import ReportError
from nvcregen.report.judgedsite import judged_site
from nvcregen.report.measuredtimes import stamped_logs
from nvcregen.results.archive import MARKER, SUMS, archived_objects, remove_leftovers
from nvcregen.results.archive import verify_archive as verify_folder
from nvcregen.results.archiveread import (
    MAX_FILE,
    MAX_SUMS,
    ArchiveFileTooLargeError,
    read_capped,
    sha256_capped,
)
from nvcregen.results.dsse import MAX_ENVELOPE
from nvcregen.results.packlogs import Section, sections
from nvcregen.retest.narrow import _inventory
from nvcregen.spec.bounded import MAX_SITE_BYTES

HUGE = 8 << 30
ENVELOPE = "attestation.dsse.json"


@pytest.fixture(autouse=True)
def bounded_memory() -> Iterator[None]:
    """At most 2 GiB more address space than now: an 8 GiB read fails, never swaps."""
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    with Path("/proc/self/statm").open() as statm:
        used = int(statm.read().split()[0]) * resource.getpagesize()
    cap = used + (2 << 30)
    resource.setrlimit(resource.RLIMIT_AS, (cap if hard < 0 else min(cap, hard), hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def sparse(file: Path, size: int) -> Path:
    file.parent.mkdir(parents=True, exist_ok=True)
    with file.open("wb") as handle:
        handle.truncate(size)
    return file


def invoke(*args: str) -> Result:
    result = CliRunner().invoke(main, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(
        result.exception
    )  # never an internal error (a MemoryError was exit 70)
    return result


def public_key(tmp_path: Path) -> Path:
    key = Ed25519PrivateKey.generate().public_key()
    pem = key.public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    (tmp_path / "pub.pem").write_bytes(pem)
    return tmp_path / "pub.pem"


def test_an_8_gib_sums_is_refused_unread_by_report_and_verify(tmp_path: Path) -> None:
    run = sample_run(tmp_path / "results")
    sparse(run / SUMS, HUGE)
    expected = f"error[NVC759]: {SUMS} holds 8,589,934,592 bytes, over the 64 MiB"
    assert verify_folder(run)[0].startswith(expected)
    report = invoke("report", str(run), "--out", str(tmp_path / "page"))
    assert report.exit_code == ExitCode.INVALID and expected in report.stderr
    verify = invoke("verify", str(run), "--key", str(public_key(tmp_path)))
    assert verify.exit_code == ExitCode.DRIFT and expected in verify.output


@pytest.mark.parametrize(("size", "over"), [(MAX_SUMS, False), (MAX_SUMS + 1, True)])
def test_the_sums_cap_is_exact(tmp_path: Path, size: int, over: bool) -> None:
    run = sample_run(tmp_path / "results")
    sparse(run / SUMS, size)
    problems = verify_folder(run)
    assert any("error[NVC759]" in p for p in problems) == over
    if not over:  # read, and refused for what it holds (NUL bytes)
        assert "error[NVC720]" in problems[0]


def test_an_8_gib_envelope_is_refused_unread_by_report_and_verify(tmp_path: Path) -> None:
    run = sample_run(tmp_path / "results")
    sparse(run / ENVELOPE, HUGE)
    expected = f"error[NVC759]: {ENVELOPE} holds 8,589,934,592 bytes, over the 64 MiB"
    verify = invoke("verify", str(run), "--key", str(public_key(tmp_path)))
    assert verify.exit_code == ExitCode.DRIFT and expected in verify.output
    report = invoke("report", str(run), "--out", str(tmp_path / "page"))
    assert report.exit_code == ExitCode.OK
    assert f"signature unusable: {expected}" in report.stdout


@pytest.mark.parametrize(("size", "over"), [(MAX_ENVELOPE, False), (MAX_ENVELOPE + 1, True)])
def test_the_envelope_cap_is_exact(tmp_path: Path, size: int, over: bool) -> None:
    run = sample_run(tmp_path / "results")
    sparse(run / ENVELOPE, size)
    verify = invoke("verify", str(run), "--key", str(public_key(tmp_path)))
    assert verify.exit_code == ExitCode.DRIFT
    assert ("error[NVC759]" in verify.output) == over
    assert (f"{ENVELOPE} cannot be read" in verify.output) != over  # read: not JSON


def test_a_listed_8_gib_file_is_refused_not_hashed(tmp_path: Path) -> None:
    run = sample_run(tmp_path / "results")
    sparse(run / "summary.json", HUGE)
    problems = verify_folder(run)
    assert problems[0].startswith(
        "summary.json: error[NVC759]: summary.json holds 8,589,934,592 bytes, over the 256 MiB"
    )
    assert not [p for p in problems if "does not match" in p]
    with pytest.raises(ReportError, match=r"summary.json: error\[NVC759\]"):
        read_texts(run)


def test_an_8_gib_object_is_refused_when_read_back(tmp_path: Path) -> None:
    run = sample_run(tmp_path / "results")
    sparse(run / "objects" / "certification" / "nvcre" / "big.yaml", HUGE)
    with pytest.raises(ArchiveFileTooLargeError):
        archived_objects(run)


def test_a_huge_leftover_marker_is_not_read(tmp_path: Path) -> None:
    leftover = tmp_path / "lab" / ".undated-0123456789ab.tmp-999999999"
    sparse(leftover / MARKER, HUGE)
    assert remove_leftovers(tmp_path / "lab") == []
    assert (leftover / MARKER).exists()


def test_a_huge_judged_site_file_is_refused(tmp_path: Path) -> None:
    archive = read_archive(sample_run(tmp_path / "results"))
    site = sparse(tmp_path / "site.yaml", MAX_SITE_BYTES + 1)
    with pytest.raises(ReportError, match="is over 1 MiB, the most a site file holds"):
        judged_site(archive, site)


def test_a_huge_inventory_is_not_read_for_narrowing(tmp_path: Path) -> None:
    assert _inventory(sparse(tmp_path / "inventory.yaml", HUGE)) is None


def test_read_and_hash_stop_at_the_cap(tmp_path: Path) -> None:
    file = tmp_path / "f"
    file.write_bytes(b"x" * 10)
    assert read_capped(file, 10) == b"x" * 10
    assert sha256_capped(file, 10) == sha256_capped(file, MAX_FILE)
    for reader in (read_capped, sha256_capped):
        with pytest.raises(ArchiveFileTooLargeError, match="holds 10 bytes") as raised:
            reader(file, 9)
        assert (raised.value.size, raised.value.cap) == (10, 9)


def test_a_huge_log_gives_export_metrics_no_time_and_costs_no_memory(tmp_path: Path) -> None:
    summary = sample_summary()
    summary["logs"] = [
        {"path": "logs/nvcre/big.log", "run": "r", "round": 1},
        {"path": "logs/nvcre/small.log", "run": "r", "round": 2},
    ]
    run = sample_run(tmp_path / "results", summary=summary)
    sparse(run / "logs" / "nvcre" / "big.log", HUGE)
    stamp = "2026-10-14T12:40:00.123456789Z "
    (run / "logs" / "nvcre" / "small.log").write_text(f"{stamp}# Avg bus bandwidth : 1\n")
    assert stamped_logs(read_archive(run)) == {("r", 2)}


def test_export_metrics_keeps_no_log_text_once_read(tmp_path: Path) -> None:
    """Thirty 1 MiB logs are dated one at a time: what stays is their times, not their text
    (all of it held, the peak would pass 30 MiB; one log's bytes and text are about 2)."""
    summary = sample_summary()
    summary["logs"] = [
        {"path": f"logs/nvcre/r{n}.log", "run": "r", "round": n} for n in range(1, 31)
    ]
    run = sample_run(tmp_path / "results", summary=summary)
    (run / "logs" / "nvcre").mkdir(parents=True, exist_ok=True)
    line = "2026-10-14T12:40:00.123456789Z " + "x" * 990 + "\n"
    for n in range(1, 31):
        (run / "logs" / "nvcre" / f"r{n}.log").write_text(line * 1024)
    archive = read_archive(run)
    stamped, peak = peak_of(lambda: stamped_logs(archive))
    assert stamped == {("r", n) for n in range(1, 31)}
    assert peak < 8 << 20, f"{peak / (1 << 20):.1f} MiB"


def test_export_metrics_splits_only_a_packed_log_into_sections(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run's own log holds no pack marker: it is never split into sections (each split
    of a 1,024-node archive's logs cost as much again as reading them)."""
    summary = sample_summary()
    summary["logs"] = [
        {"path": "logs/nvcre/plain.log", "run": "r", "round": 1},
        {"path": "logs/nvcre/packed.log", "run": "p", "round": 1},
    ]
    run = sample_run(tmp_path / "results", summary=summary)
    (run / "logs" / "nvcre").mkdir(parents=True, exist_ok=True)
    stamp = "2026-10-14T12:40:00.123456789Z "
    (run / "logs" / "nvcre" / "plain.log").write_text(f"{stamp}# Avg bus bandwidth : 1\n" * 99)
    begin = "@@nvcregen-pack begin test=t node=n pod=p start=2026-10-14T12:39:00Z"
    (run / "logs" / "nvcre" / "packed.log").write_text(f"{stamp}{begin}\n{stamp}x\n")
    split: list[int] = []

    def counted(text: str) -> tuple[list[Section], list[tuple[int, str]]]:
        split.append(len(text))
        return sections(text)

    monkeypatch.setattr("nvcregen.report.measuredtimes.sections", counted)
    assert stamped_logs(read_archive(run)) == {("r", 1), ("p", 1)}
    assert len(split) == 1  # the packed log's


def test_a_file_growing_while_hashed_is_read_no_further_than_the_cap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    file = tmp_path / "f"
    file.write_bytes(b"x" * 10)
    real = os.fstat
    monkeypatch.setattr(os, "fstat", lambda fd: os.stat_result((*real(fd)[:6], 5, *real(fd)[7:])))
    with pytest.raises(ArchiveFileTooLargeError, match="holds 6 bytes"):
        sha256_capped(file, 5)
