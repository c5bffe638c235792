"""`export metrics` on archives collected from saved logs (issue #21), through real promtool.

Logs saved without timestamps and without dated objects used to give `0 samples` and
exit 0. Every final round now takes its time from the objects, else its log's
timestamps, else the archive's collection time, says which in `time_from`, and
promtool backfills exactly the archive's numbers. Nothing to export is an error.
"""

from __future__ import annotations

import csv
import os
from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner
from oncallfactory import site_text, write_logs
from test_export_metrics import dump

from nvcregen.cli import main
from nvcregen.report.metrics import seconds

pytestmark = pytest.mark.slow
SITE = "h20-3e-four"
SUMS_TIME = "2026-11-02T08:30:00Z"


def collect(tmp: Path, stamp_logs: bool = False, *extra: str) -> Path:
    """An archive collected from the four-node site's saved logs (no object has a time)."""
    site = tmp / "site.yaml"
    site.write_text(site_text(), encoding="utf-8")
    saved = write_logs(tmp / "saved", site_text())
    if stamp_logs:  # as `kubectl logs --timestamps` saves them: each log ends at its minute
        for n, log in enumerate(sorted(saved.rglob("*.log"))):
            stamp = f"2026-10-14T{10 + n // 60:02d}:{n % 60:02d}:07.123456789Z"
            lines = log.read_text().splitlines()
            log.write_text("".join(f"{stamp} {line}\n" for line in lines))
    args = ["collect", "--site", str(site), "--from", str(saved), "--out", str(tmp / "r")]
    result = CliRunner().invoke(main, [*args, *extra])
    assert result.exit_code == 0, result.output
    (run,) = (tmp / "r" / SITE).iterdir()
    return run


def final_rows(run: Path) -> list[dict[str, str]]:
    with (run / "bandwidth.csv").open() as handle:
        return [r for r in csv.DictReader(handle) if r["finality"] == "final"]


def per_round(
    series: dict[tuple[str, tuple[tuple[str, str], ...]], tuple[float, int]],
) -> dict[tuple[str, str, str, str, str], tuple[float, int, str]]:
    """The backfilled busbw series by (stage, test, group, round, size): value, ms, source."""
    found = {}
    for (name, labels), (value, ms) in series.items():
        if name == "nvcregen_nccl_busbw_gbs":
            d = dict(labels)
            key = (d["stage"], d["test"], d["group"], d["round"], d["size"])
            found[key] = (value, ms, d["time_from"])
    return found


def export(run: Path, out: Path) -> str:
    result = CliRunner().invoke(main, ["export", "metrics", str(run), "--out", str(out)])
    assert result.exit_code == 0, result.output
    return result.stderr


def test_undated_logs_take_the_collection_time_and_promtool_reads_back_the_archive(
    tmp_path: Path,
) -> None:
    run = collect(tmp_path)
    when = seconds(SUMS_TIME)
    os.utime(run / "SHA256SUMS", (when, when))  # when the archive was written
    said = export(run, tmp_path / "m.om")
    rows = final_rows(run)
    assert len(rows) > 100
    assert said == (
        f"wrote {tmp_path / 'm.om'}: {2 * len(rows) + _medians(rows)} samples; times:"
        f" {len(rows)} rows at the archive's collection time {SUMS_TIME}"
        " (neither objects nor logs date them: not when they were measured)\n"
    )
    series = per_round(dump((tmp_path / "m.om").read_text(), tmp_path))
    expected = {
        (r["stage"], r["test"], r["group"], r["round"], r["size_bytes"]): (
            float(r["busbw_gbs"]),
            int(when * 1000),
            "collection",
        )
        for r in rows
    }
    assert series == expected


def _medians(rows: list[dict[str, str]]) -> int:
    """How many median series: one per stage, test, group, size and transport."""
    return len({(r["stage"], r["test"], r["group"], r["size_bytes"], r["transport"]) for r in rows})


def test_timestamped_logs_give_each_round_its_own_time(tmp_path: Path) -> None:
    run = collect(tmp_path, stamp_logs=True)
    said = export(run, tmp_path / "m.om")
    rows = final_rows(run)
    assert f"times: {len(rows)} rows at their logs' timestamps\n" in said
    series = per_round(dump((tmp_path / "m.om").read_text(), tmp_path))
    assert {source for _, _, source in series.values()} == {"logs"}
    times = {ms for _, ms, _ in series.values()}
    assert len(times) > 10  # one per log, not one for the archive
    assert all(datetime.fromtimestamp(ms / 1000, UTC).strftime("%S") == "07" for ms in times)
    assert {k: v for k, (v, _, _) in series.items()} == {
        (r["stage"], r["test"], r["group"], r["round"], r["size_bytes"]): float(r["busbw_gbs"])
        for r in rows
    }


def test_a_signed_archive_uses_its_signed_collection_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from test_signed_archives import write_key

    private, _ = write_key(tmp_path, "k")
    monkeypatch.setenv("SOURCE_DATE_EPOCH", str(int(seconds("2026-11-05T01:02:03Z"))))
    run = collect(tmp_path, False, "--sign-key", str(private))
    said = export(run, tmp_path / "m.om")
    assert "at the archive's collection time 2026-11-05T01:02:03Z" in said
    text = (tmp_path / "m.om").read_text()
    assert f" {seconds('2026-11-05T01:02:03Z'):.3f}\n" in text


def test_nothing_to_export_is_an_error_and_writes_nothing(tmp_path: Path) -> None:
    site = tmp_path / "site.yaml"
    site.write_text(site_text(), encoding="utf-8")
    saved = write_logs(tmp_path / "saved", site_text())
    for log in saved.rglob("*.log"):
        if "dcgm" not in log.name:
            log.unlink()  # only the DCGM diagnostics were saved
    args = ["collect", "--site", str(site), "--from", str(saved), "--out", str(tmp_path / "r")]
    CliRunner().invoke(main, args)
    (run,) = (tmp_path / "r" / SITE).iterdir()
    out = tmp_path / "m.om"
    result = CliRunner().invoke(main, ["export", "metrics", str(run), "--out", str(out)])
    assert result.exit_code == 2
    assert result.stderr == (
        f"nvcregen: nothing to export from {run}: no final NCCL bandwidth round"
        " (0 bandwidth.csv rows, none final): no NCCL test ran; nothing written\n"
    )
    assert not out.exists()


def test_undated_runs_exported_together_each_take_their_own_collection_time(
    tmp_path: Path,
) -> None:
    (tmp_path / "a").mkdir()
    first = collect(tmp_path / "a")
    saved = write_logs(tmp_path / "b" / "saved", site_text())
    log = sorted(saved.rglob("*.log"))[0]
    log.write_text(log.read_text() + "# read again\n")  # other bytes: another run
    args = ["--site", str(tmp_path / "a" / "site.yaml"), "--from", str(saved)]
    CliRunner().invoke(main, ["collect", *args, "--out", str(tmp_path / "b" / "r")])
    (second,) = (tmp_path / "b" / "r" / SITE).iterdir()
    later = "2026-11-09T08:30:00Z"
    for run, when in ((first, SUMS_TIME), (second, later)):
        os.utime(run / "SHA256SUMS", (seconds(when), seconds(when)))
    result = CliRunner().invoke(main, ["export", "metrics", str(first), str(second)])
    assert result.exit_code == 0, result.output
    rows = len(final_rows(first)) + len(final_rows(second))
    assert result.stderr.endswith(
        f"times: {rows} rows at the archives' collection times {SUMS_TIME}, {later}"
        " (neither objects nor logs date them: not when they were measured)\n"
    )
    runs: dict[str, set[int]] = {}
    for (_, labels), (_, ms) in dump(result.stdout, tmp_path).items():
        runs.setdefault(dict(labels)["run"], set()).add(ms)
    assert runs == {
        first.name: {int(seconds(SUMS_TIME) * 1000)},
        second.name: {int(seconds(later) * 1000)},
    }
