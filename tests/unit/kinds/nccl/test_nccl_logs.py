"""The nccl kind's trainer-mode log reader (`kinds/nccl/logs.py`), found by results by name."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from nvcregen.kinds.nccl import logs
from nvcregen.results.kindlogs import log_reader_of
from nvcregen.results.models import BandwidthRow

REAL = Path(__file__).resolve().parents[3] / "fixtures" / "real-logs" / "nccl-tests"
OCI = REAL / "allreduce-2node-16xH100-oci-roce-nccl2.21.5-container.txt"
BASE: dict[str, Any] = {"path": "logs/nvcre/l-r1-g0.log", "sha256": "x", "stage": "s",
                        "test": "nccl-all-reduce", "run": "l-r1-g0", "round": 1, "group": "g0",
                        "nodes": ("a", "b")}  # fmt: skip


def rows_of(text: str) -> tuple[BandwidthRow, ...]:
    measured = logs.read_nccl(text, BASE).measured
    assert measured is not None
    return measured.rows


def test_results_finds_its_reader_in_its_package() -> None:
    assert log_reader_of("nccl") is logs.READER


def test_a_launcher_log_is_its_record_and_what_it_measured() -> None:
    read = logs.read_nccl(OCI.read_text(), BASE)
    assert (read.record.kind, read.record.status) == ("nccl", "ok")
    assert read.record.models == ("NVIDIA H100 80GB HBM3",) and len(read.record.hosts) == 2
    measured = read.measured
    assert measured is not None and measured.test_type == "all_reduce"
    assert len(measured.ranks) == 16 and {r.host for r in measured.ranks} == set(read.record.hosts)
    sizes = [row.size_bytes for row in measured.rows]
    assert sizes == sorted(set(sizes)) and sizes[-1] == 16 * 2**30
    assert all(row.samples >= 1 and row.bus_bw >= 0 for row in measured.rows)


def test_rows_of_one_size_are_averaged_as_ingest_and_nvcre_average_them() -> None:
    text = OCI.read_text()
    line = next(t for t in text.splitlines() if t.strip().startswith("1073741824 "))
    twice = text.replace(line, f"{line}\n{line.replace('446.', '346.')}", 1)
    (row,) = [r for r in rows_of(twice) if r.size_bytes == 2**30]
    (once,) = [r for r in rows_of(text) if r.size_bytes == 2**30]
    assert row.samples == 2 and once.samples == 1
    assert float(row.bus_bw) < float(once.bus_bw)


def test_a_log_that_is_no_nccl_tests_output_is_no_data_measuring_nothing() -> None:
    read = logs.read_nccl("hello\n", BASE)
    assert read.record.status == "no-data" and read.measured is None
    assert read.record.errors and "not nccl-tests output" in read.record.errors[0]


def test_a_log_of_thousands_of_unreadable_rows_names_64_and_counts_the_rest() -> None:
    """As every other kind's record (`kindlogs.capped`): the archive's record stays small."""
    lines = OCI.read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if line.strip()[:1].isdigit())
    bad = [f"  {1000 + i}  {i}  float  sum  -1  x{i}  y  z  0  1  2  3  0" for i in range(5000)]
    record = logs.read_nccl("\n".join([*lines[:at], *bad, *lines[at:]]), BASE).record
    assert len(record.errors) == 65 and record.errors[-1] == "and 4936 more"
    assert record.errors[0].startswith("unreadable row:")
