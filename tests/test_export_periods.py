"""Issue #37: `export metrics` over periods of `readiness.periodic`, through real promtool.

Each period's samples at their own measured times (a packed section's), labelled with the
period and the node, so a backfill holds a node's period-over-period series: two periods,
two samples at two times. Runs of another site, one run or period twice, a tampered run,
and two samples of one series at one time (promtool would keep one of them silently) are
refused, nothing written.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from oncallfactory import healthy
from periodicfactory import periodic_text, write_period_logs
from reportfactory import sample_run
from test_export_metrics import promtool

from nvcregen.cli import main
from nvcregen.collect.collector import collect
from nvcregen.collect.model import CollectOptions
from nvcregen.report.metrics import seconds
from nvcregen.results.logplace import period_of

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[1]
SITE = "h20-3e-trainer"
WEEK = 7 * 24 * 60  # minutes
FIRST = 29_412_000  # a period's scheduled minute since the epoch (2025-12-03T00:00Z)
GIB = str(1 << 30)
DUMPED = re.compile(r"^\{__name__=\"(?P<name>\w+)\", (?P<labels>.*)\} (?P<value>\S+) (?P<ms>\d+)$")
Series = tuple[str, tuple[tuple[str, str], ...]]


def slow_on(node: str, factor: float) -> Any:
    """node's single-node NCCL tests measure `factor` of a healthy node's bandwidth."""

    def busbw(stage: str, test: str, nodes: tuple[str, ...]) -> float:
        figure = healthy(stage, test, nodes)
        return figure * factor if stage == "single-node" and nodes == (node,) else figure

    return busbw


def period(tmp: Path, minutes: int, busbw: Any = healthy, edit: Any = None) -> Path:
    """Collect the period at `minutes` (its logs edited by `edit`) into tmp/results."""
    site = tmp / "site.yaml"
    site.write_text(periodic_text(), encoding="utf-8")
    saved = tmp / f"saved-{minutes}"
    write_period_logs(saved, periodic_text(), minutes, busbw)
    if edit is not None:
        edit(saved)
    options = CollectOptions(str(site), tmp / "results", ROOT, from_dir=saved, period="latest")
    return collect(options).archive.path


def export(*args: Path | str) -> Any:
    return CliRunner().invoke(main, ["export", "metrics", *map(str, args)])


def dump_all(text: str, tmp: Path) -> list[tuple[Series, float, int]]:
    """Every sample promtool backfills from `text`, in the order `promtool tsdb dump` lists."""
    source, db = tmp / "metrics.om", tmp / "tsdb"
    shutil.rmtree(db, ignore_errors=True)
    source.write_text(text, encoding="utf-8")
    subprocess.run([promtool(), "tsdb", "create-blocks-from", "openmetrics", str(source), str(db)],
                   check=True, capture_output=True)  # fmt: skip
    (db / "wal").mkdir(exist_ok=True)  # promtool 2.42's dump opens a WAL
    out = subprocess.run([promtool(), "tsdb", "dump", str(db)], check=True, capture_output=True)
    found = []
    for line in out.stdout.decode().splitlines():
        match = DUMPED.match(line)
        assert match is not None, line
        labels = tuple(re.findall(r'(\w+)="([^"]*)"', match["labels"]))
        found.append(((match["name"], labels), float(match["value"]), int(match["ms"])))
    return found


def samples_in(text: str) -> int:
    return sum(1 for line in text.splitlines() if line and not line.startswith("#"))


def test_two_periods_of_a_node_are_two_samples_at_their_own_times(tmp_path: Path) -> None:
    first = period(tmp_path, FIRST)
    second = period(tmp_path, FIRST + WEEK, slow_on("node-a", 0.8))
    result = export(first, second, "--cluster", "lab")
    assert result.exit_code == 0, result.output
    assert "times: 24 rows at their packed sections' start times" in result.stderr
    found = dump_all(result.stdout, tmp_path)
    assert len(found) == samples_in(result.stdout)  # promtool kept every sample
    times: dict[Series, list[int]] = {}
    for series, _, ms in found:
        times.setdefault(series, []).append(ms)
    assert all(t == sorted(set(t)) for t in times.values())  # in time order, each once
    node_a = sorted(
        (dict(labels)["period"], value, ms)
        for (name, labels), value, ms in found
        if name == "nvcregen_nccl_busbw_gbs"
        and dict(labels)["nodes"] == "node-a"
        and dict(labels)["test"] == "nccl-all-reduce"
        and dict(labels)["size"] == GIB
    )
    # a week apart, each at its period's section start (the pack's first test: +0 s)
    assert node_a == [
        (str(FIRST), 465.0, FIRST * 60_000),
        (str(FIRST + WEEK), 465.0 * 0.8, (FIRST + WEEK) * 60_000),
    ]
    gather = {
        ms
        for (name, labels), _, ms in found
        if dict(labels).get("test") == "nccl-all-gather" and dict(labels)["period"] == str(FIRST)
    }
    assert gather == {FIRST * 60_000 + 300_000}  # its own section, 5 minutes in, not the Job's
    assert {dict(labels)["time_from"] for (_, labels), _, _ in found} == {"section"}
    assert {dict(labels)["run"] for (_, labels), _, _ in found} == {first.name, second.name}


def test_sections_with_kubectl_timestamps_take_their_last_one(tmp_path: Path) -> None:
    """Logs saved with `kubectl logs --timestamps`: each section at its own last line."""
    start = FIRST * 60

    def stamp(saved: Path) -> None:
        for log in (saved / "logs").rglob("*.log"):
            lines = log.read_text(encoding="utf-8").splitlines()
            when = [f"2025-12-03T00:{n // 60:02d}:{n % 60:02d}.5Z" for n in range(len(lines))]
            log.write_text("".join(f"{w} {line}\n" for w, line in zip(when, lines, strict=True)))

    run = period(tmp_path, FIRST, edit=stamp)
    result = export(run, "--cluster", "lab")
    assert result.exit_code == 0, result.output
    found = dump_all(result.stdout, tmp_path)
    lines = nccl_log(run, "node-a").read_text(encoding="utf-8").splitlines()
    ends = [n for n, line in enumerate(lines) if " @@nvcregen-pack end test=nccl-" in line]
    assert len(ends) == 3
    own = {
        ms
        for (name, labels), _, ms in found
        if name == "nvcregen_nccl_busbw_gbs" and dict(labels)["nodes"] == "node-a"
    }
    assert own == {(start + n - 1) * 1000 for n in ends}  # each section's last line, whole s
    assert {dict(labels)["time_from"] for (_, labels), _, _ in found} == {"logs"}


def nccl_log(folder: Path, node: str) -> Path:
    """The pod log of `node` in the period's NCCL pack."""
    (log,) = [
        p
        for p in (folder / "logs").rglob("*.log")
        if f"begin test=nccl-all-reduce node={node} " in p.read_text(encoding="utf-8")
    ]
    return log


def test_a_section_time_no_test_could_have_falls_back_to_the_objects(tmp_path: Path) -> None:
    """A start after the run finished (2099), or no date at all (month 13): the Job's."""

    def misdate(saved: Path) -> None:
        for node, wrong in (("node-a", "2099-01-01T00:00:00Z"), ("node-b", "2025-13-03T00:00:00Z")):
            log = nccl_log(saved, node)
            text = log.read_text(encoding="utf-8")
            text = re.sub(r"(begin test=nccl-all-reduce .*start=)\S+", rf"\g<1>{wrong}", text)
            log.write_text(text, encoding="utf-8")

    run = period(tmp_path, FIRST, edit=misdate)
    result = export(run, "--cluster", "lab")
    assert result.exit_code == 0, result.output
    found = dump_all(result.stdout, tmp_path)
    reduce = {
        (dict(labels)["nodes"], dict(labels)["time_from"], ms)
        for (name, labels), _, ms in found
        if name == "nvcregen_nccl_busbw_gbs" and dict(labels)["test"] == "nccl-all-reduce"
    }
    done = FIRST * 60_000 + 1_800_000  # the period's Job completed 30 minutes in
    assert reduce == {("node-a", "objects", done), ("node-b", "objects", done)}


def test_runs_of_another_site_one_run_twice_or_one_period_twice_are_refused(
    tmp_path: Path,
) -> None:
    first = period(tmp_path, FIRST)
    other = sample_run(tmp_path / "other")  # a run of site edge-lab
    out = tmp_path / "m.om"
    mixed = export(first, other, "--out", out)
    assert mixed.exit_code == 2
    assert mixed.stderr == (
        f"nvcregen: error[NVC782]: {other} is a run of site 'edge-lab', {first} of"
        f" '{SITE}': one export holds the runs of one site; nothing written (hint: give the"
        " runs of one site folder)\n"
    )
    twice = export(first, first.parent, "--out", out)  # the site folder: its newest, `first`
    assert twice.exit_code == 2
    assert f"error[NVC756]: {first} and {first} hold the same run {first.name}" in twice.stderr
    # the same period collected again without its Jobs: another run, the same period
    again = tmp_path / "again"
    shutil.copytree(tmp_path / f"saved-{FIRST}", again)
    (again / "objects.yaml").unlink()
    options = CollectOptions(
        str(tmp_path / "site.yaml"), tmp_path / "r2", ROOT, from_dir=again, period=str(FIRST)
    )
    copy = collect(options).archive.path
    assert copy.name != first.name
    both = export(first, copy, "--out", out)
    assert both.exit_code == 2
    assert both.stderr.startswith(
        f"nvcregen: error[NVC785]: period {FIRST} is in both {first} and {copy} (collected twice)"
    )
    assert not out.exists()


def test_a_tampered_run_is_refused(tmp_path: Path) -> None:
    first = period(tmp_path, FIRST)
    second = period(tmp_path, FIRST + WEEK)
    csv = second / "bandwidth.csv"
    csv.write_text(csv.read_text().replace(",465,", ",999,", 1))
    result = export(first, second, "--out", tmp_path / "m.om")
    assert result.exit_code == 2
    assert f"nvcregen: {second} does not verify against its SHA256SUMS" in result.stderr
    assert not (tmp_path / "m.om").exists()


def test_two_samples_of_one_series_at_one_time_are_refused_promtool_would_drop_one(
    tmp_path: Path,
) -> None:
    """An archive whose bandwidth.csv holds a row twice (its sums made to match): promtool
    keeps one sample of a series at one time and drops the other unsaid, as it drops one
    out of time order; export refuses instead of writing what promtool would lose."""
    run = period(tmp_path, FIRST)
    csv = run / "bandwidth.csv"
    rows = csv.read_text().splitlines()
    twin = rows[1].replace(",465,", ",400,")
    csv.write_text("\n".join([*rows, twin]) + "\n")
    sums = [
        f"{hashlib.sha256((run / p).read_bytes()).hexdigest()}  {p}"
        for p in (line.split("  ", 1)[1] for line in (run / "SHA256SUMS").read_text().splitlines())
    ]
    (run / "SHA256SUMS").write_text("\n".join(sums) + "\n")
    result = export(run, "--cluster", "lab")
    assert result.exit_code == 2
    assert "error[NVC784]: two samples of nvcregen_nccl_algbw_gbs{" in result.stderr
    assert "bandwidth.csv holds one measurement twice" in result.stderr
    one = '{a="1"}'
    at = FIRST * 60
    for lines in (
        [f"m{one} 465.0 {at}.000", f"m{one} 400.0 {at}.000"],  # one time twice
        [f"m{one} 465.0 {at + 60}.000", f"m{one} 400.0 {at}.000"],
    ):  # out of order
        text = "\n".join(["# HELP m x.", "# TYPE m gauge", *lines, "# EOF"]) + "\n"
        assert len(dump_all(text, tmp_path)) == 1  # fmt: skip


def test_period_of_reads_a_periodic_jobs_name_only() -> None:
    job = "single-node-periodic-1-85d7a47a-c0-29412000"
    assert period_of(job) == "29412000"
    assert period_of(f"{job}-1-2897b") == ""  # its pod
    assert period_of("single-node-pack-1-0123abcd-r2-c0") == ""  # a one-shot pack's Job
    assert period_of("single-node-nccl-all-reduce-0123abcd-r1-g0") == ""
    assert seconds("2025-12-03T00:00:00Z") == FIRST * 60
    with pytest.raises(ValueError, match="not an RFC 3339 time"):
        seconds("2025-13-03T00:00:00Z")
