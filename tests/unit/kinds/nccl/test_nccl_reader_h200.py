"""Real nccl-tests logs from one H200 (tests/fixtures/nccl-h200-1gpu/, issue #15).

Made by tools/nccl_calibrate.sh with the catalog's arguments (`-b 8 -e 16G -f 2 -n 100
-N 10`, `-g 1`) and NCCL_DEBUG=INFO, NCCL 2.28.9; see the fixture folder's README.md.
Each log must be read with no loss: every result row, the summary, the NCCL version, and
no network transport (one GPU: NCCL picks Socket at init and never uses it).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from nvcregen.kinds.nccl.files import ingest_nccl
from nvcregen.kinds.nccl.medians import summarize
from nvcregen.kinds.nccl.models import NcclRun
from nvcregen.kinds.nccl.reader import parse_nccl
from nvcregen.kinds.nccl.table import is_row

ROOT = Path(__file__).resolve().parents[4]
H200 = ROOT / "tests" / "fixtures" / "nccl-h200-1gpu"
GIB = 1 << 30
CYCLES = 10
SIZES = [8 << k for k in range(32)]  # -b 8 -e 16G -f 2: 8 B .. 16 GiB, 32 sizes

# collective -> (first size, out-of-place time and algbw of the last row of the log)
EXPECTED = {
    "all_reduce": (8, 7997.0, 2148.29),
    # 8 B is 2 floats; all_gather rounds its count down to a multiple of 4 per rank: 0 B
    "all_gather": (0, 7997.2, 2148.23),
    "alltoall": (8, 8935.9, 1922.57),
}


def run_of(collective: str) -> NcclRun:
    path = H200 / f"{collective}_perf.log"
    runs = parse_nccl(path.read_bytes().decode("utf-8"), path.name)
    assert len(runs) == 1
    return runs[0]


@pytest.mark.parametrize("collective", sorted(EXPECTED))
def test_run_is_read_whole(collective: str) -> None:
    run = run_of(collective)
    assert (run.collective, run.status, run.errors) == (collective, "ok", ())
    assert (run.transports, run.gdrdma) == ((), False)
    assert run.nccl_versions == ("2.28.9+cuda13.0",)
    assert run.avg_busbw_gbs == 0.0  # `# Avg bus bandwidth    : 0 `: busbw is 0 with one rank


@pytest.mark.parametrize("collective", sorted(EXPECTED))
def test_every_row_of_every_cycle(collective: str) -> None:
    run = run_of(collective)
    text = (H200 / f"{collective}_perf.log").read_text()
    assert len(run.rows) == sum(is_row(line) for line in text.splitlines()) == 32 * CYCLES
    first, last_time, last_algbw = EXPECTED[collective]
    sizes = [first, *SIZES[1:]]
    assert [row.size_bytes for row in run.rows] == sizes * CYCLES
    assert (run.rows[0].size_bytes, run.rows[-1].size_bytes) == (first, 16 * GIB)
    last = run.rows[-1]
    assert (last.out_of_place.time_us, last.out_of_place.algbw_gbs) == (last_time, last_algbw)
    assert last.out_of_place.busbw_gbs == last.in_place.busbw_gbs == 0.0
    assert all(row.type == "float" and row.out_of_place.wrong == 0 for row in run.rows)


def test_wide_in_place_algbw_and_na_wrong() -> None:
    reduce_last = run_of("all_reduce").rows[-1]
    assert (reduce_last.redop, reduce_last.in_place.algbw_gbs) == ("sum", 34384495.20)
    alltoall = run_of("alltoall")
    assert {row.redop for row in alltoall.rows} == {"none"}
    assert all(row.in_place.wrong is None for row in alltoall.rows)  # in-place: N/A


def test_ingest_files_and_summary() -> None:
    paths = [H200 / f"{c}_perf.log" for c in sorted(EXPECTED)]
    result = ingest_nccl(paths)
    assert result.diagnostics == ()
    assert [run.collective for run in result.runs] == sorted(EXPECTED)
    # One file per collective is one round each: no median over rounds yet.
    assert result.summary == ()
    twice = summarize([run_of("all_reduce"), run_of("all_reduce")], at=GIB)
    assert len(twice) == 1 and twice[0].rounds == 2
    assert twice[0].median_busbw_gbs == 0.0
    assert twice[0].median_algbw_gbs == pytest.approx(2122.52, abs=1.0)  # mean of 10 cycles
