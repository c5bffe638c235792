"""Medians over rounds, each figure on its own, from a real two-node all-reduce."""

from __future__ import annotations

from pathlib import Path

from nvcregen.kinds.nccl.medians import summarize
from nvcregen.kinds.nccl.models import NcclRun
from nvcregen.kinds.nccl.reader import parse_nccl

ROOT = Path(__file__).resolve().parents[4]
LOGS = ROOT / "tests" / "fixtures" / "real-logs" / "nccl-tests"
TWO_NODE = LOGS / "allreduce-2node-16xH100-oci-roce-nccl2.21.5-container.txt"
GIB_ROW = "1073741824     268435456     float     sum      -1   4511.2  238.02  446.28"
GIB = 1 << 30


def round_with(busbw: str, *, time: str = "4511.2", algbw: str = "238.02") -> str:
    """The real log with its 1 GiB out-of-place figures replaced."""
    text = TWO_NODE.read_text()
    assert GIB_ROW in text
    changed = f"1073741824     268435456     float     sum      -1   {time}  {algbw}  {busbw}"
    return text.replace(GIB_ROW, changed)


def three_rounds() -> list[NcclRun]:
    return [
        run
        for i, busbw in enumerate(("363.76", "427.58", "452.28"))
        for run in parse_nccl(round_with(busbw), f"round-{i}.txt")
    ]


def test_three_rounds_at_one_gib() -> None:
    (row,) = summarize(three_rounds(), at=GIB)
    assert (row.collective, row.size_bytes, row.rounds) == ("all_reduce", GIB, 3)
    assert row.median_busbw_gbs == 427.58
    assert row.spread == (452.28 - 363.76) / 427.58
    assert (row.median_algbw_gbs, row.median_time_us) == (238.02, 4511.2)


def test_every_size_seen_in_several_rounds() -> None:
    rows = summarize(three_rounds())
    assert [r.size_bytes for r in rows] == [GIB << k for k in range(5)]
    assert all(r.rounds == 3 for r in rows)
    assert rows[1].spread == 0.0
    assert rows[1].median_busbw_gbs == 456.22


def test_medians_are_taken_per_figure() -> None:
    """The median time comes from one round and the median bus bandwidth from another."""
    texts = [
        round_with("400.00", time="1000.0", algbw="10.00"),
        round_with("300.00", time="3000.0", algbw="30.00"),
        round_with("200.00", time="2000.0", algbw="20.00"),
    ]
    runs = [run for i, t in enumerate(texts) for run in parse_nccl(t, f"r{i}")]
    (row,) = summarize(runs, at=GIB)
    assert (row.median_busbw_gbs, row.median_time_us, row.median_algbw_gbs) == (300.0, 2000.0, 20.0)
    assert row.spread == (400.0 - 200.0) / 300.0


def test_failed_runs_and_single_rounds_do_not_count() -> None:
    failed = round_with("100.00").replace(
        "Out of bounds values : 0 OK", "Out of bounds values : 3 FAILED"
    )
    runs = parse_nccl(failed, "bad") + parse_nccl(round_with("427.58"), "good")
    assert runs[0].status == "failed"
    assert summarize(runs) == []
    runs += parse_nccl(round_with("452.28"), "good-2")
    (row,) = summarize(runs, at=GIB)
    assert (row.rounds, row.median_busbw_gbs) == (2, (427.58 + 452.28) / 2)


def test_rows_of_one_size_in_one_run_are_averaged_first() -> None:
    text = round_with("400.00")
    lines = text.splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if line.lstrip().startswith("1073741824"))
    lines.insert(at + 1, lines[at].replace("400.00", "500.00"))  # a second -N cycle
    runs = parse_nccl("".join(lines), "cycles") + parse_nccl(round_with("300.00"), "plain")
    (row,) = summarize(runs, at=GIB)
    assert (row.rounds, row.median_busbw_gbs) == (2, (450.0 + 300.0) / 2)


def test_zero_median_has_no_spread() -> None:
    runs = [run for i in range(2) for run in parse_nccl(round_with("0.00"), f"zero-{i}")]
    (row,) = summarize(runs, at=GIB)
    assert (row.median_busbw_gbs, row.spread) == (0.0, None)
