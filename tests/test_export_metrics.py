"""`nvcregen export metrics`: OpenMetrics that the real promtool backfills, read back whole."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner
from reportfactory import sample_run, sample_summary

from nvcregen.cli import main
from nvcregen.report.archive import read_archive
from nvcregen.report.metrics import seconds

pytestmark = pytest.mark.slow
TIMES = {1: "2026-10-14T12:10:00Z", 2: "2026-10-14T12:40:00Z", 3: "2026-10-14T13:01:00Z"}
DUMPED = re.compile(r"^\{__name__=\"(?P<name>\w+)\", (?P<labels>.*)\} (?P<value>\S+) (?P<ms>\d+)$")


def archive_with_times(results: Path) -> Path:
    """The sample run, its rounds given completion times as summary.json records them."""
    summary = sample_summary()
    summary["finished_at"] = "2026-10-14T13:05:00Z"
    summary["runs"][0]["bandwidth"] = [
        {"ref": {"kind": "TrainJob", "name": f"nccl-all-reduce-group-0-{n}-job-bw"},
         "group": "group-0", "iteration": n, "finality": "final", "completion_time": t}
        for n, t in TIMES.items()
    ]  # fmt: skip
    return sample_run(results, summary=summary)


def promtool() -> str:
    found = shutil.which("promtool")
    assert found, "promtool is missing: tools/system-deps.sh installs it (make test)"
    return found


def dump(text: str, tmp: Path) -> dict[tuple[str, tuple[tuple[str, str], ...]], tuple[float, int]]:
    """Backfill with `promtool tsdb create-blocks-from openmetrics`, then `promtool tsdb dump`."""
    source, db = tmp / "metrics.om", tmp / "tsdb"
    source.write_text(text, encoding="utf-8")
    subprocess.run([promtool(), "tsdb", "create-blocks-from", "openmetrics", str(source), str(db)],
                   check=True, capture_output=True)  # fmt: skip
    (db / "wal").mkdir(exist_ok=True)  # promtool 2.42's dump opens a WAL
    out = subprocess.run([promtool(), "tsdb", "dump", str(db)], check=True, capture_output=True)
    series = {}
    for line in out.stdout.decode().splitlines():
        match = DUMPED.match(line)
        assert match is not None, line
        labels = tuple(re.findall(r'(\w+)="([^"]*)"', match["labels"]))
        series[(match["name"], labels)] = (float(match["value"]), int(match["ms"]))
    return series


def test_backfilled_series_match_the_archive(tmp_path: Path) -> None:
    run = archive_with_times(tmp_path / "results")
    result = CliRunner().invoke(main, ["export", "metrics", str(run), "--cluster", "lab-east"])
    assert result.exit_code == 0, result.output
    assert result.stdout.endswith("# EOF\n")
    series = dump(result.stdout, tmp_path)
    archive = read_archive(run)
    final = [r for r in archive.bandwidth if r.finality == "final"]
    expected = {}
    for row in final:
        labels = {
            "cluster": "lab-east", "group": row.group, "round": str(row.round),
            "run": archive.summary.run_id, "scope": row.scope, "site": "edge-lab",
            "size": str(row.size_bytes), "stage": row.stage, "test": row.test,
            "time_from": "objects", "transport": ",".join(row.transports),
        }  # fmt: skip
        ms = int(seconds(TIMES[row.round or 0]) * 1000)
        key = tuple(sorted(labels.items()))
        expected[("nvcregen_nccl_busbw_gbs", key)] = (row.busbw, ms)
        expected[("nvcregen_nccl_algbw_gbs", key)] = (row.algbw, ms)
    per_round = {k: v for k, v in series.items() if not k[0].endswith("median_gbs")}
    assert per_round == expected
    assert len(final) == 9  # rounds 1 and 2 over IB, 3 over Socket; provisional round 4 out
    ib_median = {
        dict(k[1])["size"]: v
        for k, v in series.items()
        if k[0] == "nvcregen_nccl_busbw_median_gbs" and dict(k[1])["transport"] == "IB"
    }
    assert ib_median[str(1 << 30)] == ((363.76 + 427.58) / 2, int(seconds(TIMES[2]) * 1000))


def test_the_same_archive_gives_the_same_bytes(tmp_path: Path) -> None:
    run = archive_with_times(tmp_path / "results")
    first = CliRunner().invoke(main, ["export", "metrics", str(run), "--cluster", "c"]).stdout
    again = CliRunner().invoke(main, ["export", "metrics", str(run), "--cluster", "c"]).stdout
    assert first == again
    assert 'nvcregen_nccl_busbw_gbs{cluster="c",group="group-0",round="4"' not in first
