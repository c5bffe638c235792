"""Tampered archives are refused as strictly as `sha256sum -c --strict` (issue #14, item 6).

Each tampering below is one `verify_archive` let through before: a duplicate line whose
first copy is wrong, listed files or SHA256SUMS that are symbolic links to identical
bytes outside the run, unlisted links and FIFOs. A property test then tampers at random.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reportfactory import sample_run

from nvcregen.report.folder import ReportError, locate, verified_run, verify
from nvcregen.results.archive import SUMS, build_archive, write_archive


def _outside(run: Path, name: str) -> Path:
    """A copy of one of the run's files outside it, with identical bytes."""
    copy = run.parent.parent / f"outside-{name.replace('/', '-')}"
    shutil.copyfile(run / name, copy)
    return copy


def duplicate_line_first_wrong(run: Path) -> None:
    lines = (run / SUMS).read_text().splitlines()
    first = next(i for i, line in enumerate(lines) if line.endswith("  verdicts.json"))
    lines.insert(first, f"{'0' * 64}  verdicts.json")
    (run / SUMS).write_text("\n".join(lines) + "\n")


def listed_file_is_a_link_out(run: Path) -> None:
    copy = _outside(run, "verdicts.json")
    (run / "verdicts.json").unlink()
    (run / "verdicts.json").symlink_to(copy)


def sums_is_a_link_out(run: Path) -> None:
    copy = _outside(run, SUMS)
    (run / SUMS).unlink()
    (run / SUMS).symlink_to(copy)


def unlisted_link(run: Path) -> None:
    (run / "objects" / "elsewhere").symlink_to("/")


def unlisted_fifo(run: Path) -> None:
    os.mkfifo(run / "objects" / "pipe")


def folder_link(run: Path) -> None:
    moved = run.parent.parent / "moved-objects"
    shutil.move(run / "objects", moved)
    (run / "objects").symlink_to(moved)


TAMPERS: list[tuple[Callable[[Path], None], str]] = [
    (duplicate_line_first_wrong, "lists verdicts.json a second time"),
    (listed_file_is_a_link_out, "verdicts.json is a symbolic link, not a regular file"),
    (sums_is_a_link_out, "SHA256SUMS is a symbolic link, not a regular file"),
    (unlisted_link, "objects/elsewhere is a symbolic link"),
    (unlisted_fifo, "objects/pipe is a FIFO"),
    (folder_link, "objects is a symbolic link"),
]


@pytest.mark.parametrize(("tamper", "problem"), TAMPERS, ids=[t.__name__ for t, _ in TAMPERS])
def test_a_tampered_archive_is_refused(
    tmp_path: Path, tamper: Callable[[Path], None], problem: str
) -> None:
    run = sample_run(tmp_path)
    tamper(run)
    assert any(problem in p for p in verify(run)), verify(run)
    with pytest.raises(ReportError, match="does not verify"):
        verified_run(run)


def test_sha256sum_agrees_about_the_duplicate_line(tmp_path: Path) -> None:
    run = sample_run(tmp_path)
    duplicate_line_first_wrong(run)
    done = subprocess.run(
        ["sha256sum", "-c", "--strict", "--quiet", SUMS], cwd=run, capture_output=True, check=False
    )
    assert done.returncode != 0


def test_a_linked_run_folder_is_not_one_of_the_sites_runs(tmp_path: Path) -> None:
    real = sample_run(tmp_path / "a", "20261014T130100Z-000000000001")
    site = sample_run(tmp_path / "b", "20261014T120000Z-000000000002").parent
    (site / "20991231T000000Z-ffffffffffff").symlink_to(real, target_is_directory=True)
    assert locate(site).run.name == "20261014T120000Z-000000000002"


FILES = st.dictionaries(
    st.sampled_from(["a.txt", "b/c.txt", "b/d.txt", "e/f/g.txt"]),
    st.binary(max_size=64),
    min_size=1,
)
MUTATIONS = st.sampled_from(
    ["flip", "add", "remove", "duplicate", "link", "fifo", "relink-sums", "dot-path"]
)


def _mutate(run: Path, how: str, victim: str) -> None:
    sums = run / SUMS
    if how == "flip":
        data = (run / victim).read_bytes()
        (run / victim).write_bytes(bytes([data[0] ^ 1]) + data[1:] if data else b"x")
    elif how == "add":
        (run / "b" / "new.txt").parent.mkdir(exist_ok=True)
        (run / "b" / "new.txt").write_bytes(b"")
    elif how == "remove":
        (run / victim).unlink()
    elif how == "duplicate":
        sums.write_text(f"{hashlib.sha256(b'other').hexdigest()}  {victim}\n" + sums.read_text())
    elif how == "link":
        copy = run.parent / "copy"
        shutil.copyfile(run / victim, copy)
        (run / victim).unlink()
        (run / victim).symlink_to(copy)
    elif how == "fifo":
        os.mkfifo(run / "fifo")
    elif how == "relink-sums":
        shutil.copyfile(sums, run.parent / "sums")
        sums.unlink()
        sums.symlink_to(run.parent / "sums")
    else:
        sums.write_text(sums.read_text().replace(f"  {victim}", f"  ./{victim}"))


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(files=FILES, how=MUTATIONS, pick=st.integers(min_value=0))
def test_any_tampering_is_refused(
    tmp_path_factory: pytest.TempPathFactory, files: dict[str, bytes], how: str, pick: int
) -> None:
    """Property: an archive verifies as written, and no longer after any one tampering."""
    site = tmp_path_factory.mktemp("site")
    texts = dict.fromkeys(
        ("summary.json", "bandwidth.csv", "verdicts.json", "provenance.json"), "{}\n"
    )
    written = write_archive(site, build_archive("undated-0123456789ab", [], texts, files))
    assert written.verified, written.problems
    victims = sorted(files)
    _mutate(written.path, how, victims[pick % len(victims)])
    assert verify(written.path), how
