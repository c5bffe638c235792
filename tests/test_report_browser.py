"""The report page in a real headless browser (Debian's chromium), not just as text.

Two archives are rendered: the report tests' sample (written with the documented
layout) and one `nvcregen collect --from DIR` writes from collect's own lab fixture,
changed so a round ran over Socket, one is still measuring and a node was excluded.
Chromium takes a screenshot (checked pixel by pixel for the verdict colors and the
plot lines) and dumps the DOM it built (checked for the plots and the verdict table).
Without chromium these tests fail, saying how to install it: they are never skipped.
"""

from __future__ import annotations

import shutil
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from pngpixels import read_png
from reportfactory import ROOT, lab_module, sample_run

from nvcregen.cli import main
from nvcregen.core.errors import ExitCode

pytestmark = pytest.mark.slow

WIDTH, HEIGHT = 1280, 2600  # the page opens with its node verdicts, then the plots
RED, GREEN, BLUE, WHITE = (0xCF, 0x22, 0x2E), (0x1A, 0x7F, 0x37), (0x00, 0x72, 0xB2), (255,) * 3
TWO_NODE = "lab-two-node-0002-communication-nccl-all-reduce"


def chromium() -> str:
    """The chromium binary, or a test failure telling how to install it."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        pytest.fail(
            "chromium is not installed, and the report must be checked in a real browser:"
            " run `apt-get update && apt-get install -y chromium` (Debian; .ci/run does this)"
        )
    return found


def browse(page: Path, tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [
        chromium(),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        f"--user-data-dir={tmp / 'chromium-profile'}",
        f"--window-size={WIDTH},{HEIGHT}",
        *args,
        page.resolve().as_uri(),
    ]
    return subprocess.run(command, capture_output=True, text=True, timeout=180, check=False)


def screenshot(page: Path, tmp: Path) -> Counter[tuple[int, int, int]]:
    """Take a screenshot of the page; return how often each color appears in it."""
    png = tmp / "page.png"
    done = browse(page, tmp, f"--screenshot={png}")
    assert png.is_file(), done.stderr[-2000:]
    assert png.stat().st_size > 20_000, "the screenshot is nearly empty"
    image = read_png(png)
    assert (image.width, image.height) == (WIDTH, HEIGHT)
    colors: Counter[tuple[int, int, int]] = Counter()
    for row in image.rows():
        colors.update(row)
    return colors


def dom(page: Path, tmp: Path) -> str:
    done = browse(page, tmp, "--dump-dom")
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.rstrip().endswith("</body></html>"), done.stdout[-200:]
    return done.stdout


def report(results: Path, out: Path) -> Path:
    result = CliRunner().invoke(main, ["report", str(results), "--out", str(out)])
    assert result.exit_code == ExitCode.OK, result.output
    return out / "index.html"


def test_the_sample_report_renders_with_its_plots_and_verdicts(tmp_path: Path) -> None:
    page = report(sample_run(tmp_path / "results"), tmp_path / "report")
    colors = screenshot(page, tmp_path)
    total = WIDTH * HEIGHT
    assert colors[WHITE] < 0.97 * total, "the page looks blank"
    assert colors[RED] > 500, "no fail badge or failed threshold in red"
    assert colors[GREEN] > 200, "no pass badge in green"
    assert colors[BLUE] > 500, "no median line drawn"
    assert len(colors) > 500, "too few colors for text, tables and plots"
    text = dom(page, tmp_path)
    assert text.count('<svg class="chart"') == 4
    assert text.count('<polyline class="series median"') == 4
    assert text.count('class="threshold"') == 2  # the IB charts only: not over Socket rounds
    assert 'id="verdict-table"' in text
    assert "<script" not in text  # the archive's `<script>` stayed text
    assert "node-&lt;b&gt;: &lt;script&gt;" in text


def lab_objects() -> list[dict[str, Any]]:
    """collect's lab state, with a round over Socket, one still measuring, a node excluded."""
    lab = lab_module()
    objects: list[dict[str, Any]] = lab.lab_state()
    for number, transport in ((1, "IB"), (2, "Socket"), (3, "IB")):
        found = lab.find(objects, "BandwidthMeasurement", f"{TWO_NODE}-group-0-{number}-job-bw")
        found["status"]["transport"] = [transport]
    measuring = lab.find(objects, "BandwidthMeasurement", f"{TWO_NODE}-group-0-3-job-bw")
    measuring["status"]["conditions"] = [lab.condition("Measuring", "True", "JobRunning")]
    workflow = lab.find(objects, "Workflow", TWO_NODE)["status"]["orchestration"]
    workflow["excludedNodes"] = ["node-c"]
    workflow["exclusionReason"] = "NodeNotReady: <b>cordoned</b>"
    return objects


def test_an_archive_written_by_collect_renders(tmp_path: Path) -> None:
    export = lab_module().write_export(tmp_path / "export", lab_objects())
    site = ROOT / "tests" / "fixtures" / "collect" / "site.yaml"
    results = tmp_path / "results"
    args = ["collect", "--site", str(site), "--from", str(export), "--out", str(results)]
    collected = CliRunner().invoke(main, args)
    assert collected.exit_code == ExitCode.DRIFT, collected.output  # a threshold fails
    page = report(results / "lab", tmp_path / "report")
    colors = screenshot(page, tmp_path)
    assert colors[RED] > 500 and colors[GREEN] > 200 and colors[BLUE] > 500
    text = dom(page, tmp_path)
    # all-reduce on one node, on two over IB and over Socket; the TCP baseline
    assert text.count('<svg class="chart"') == 4
    assert "expected IB (RDMA), but the rounds ran over Socket" in text
    assert 'class="series provisional"' in text  # round 3, still measuring
    assert "NodeNotReady: &lt;b&gt;cordoned&lt;/b&gt;" in text
    summary = (tmp_path / "report" / "summary.md").read_text(encoding="utf-8")
    assert summary.startswith("## Readiness of lab: ❌ fail\n")
    assert "| node-c | excluded | two-node / nccl-all-reduce |" in summary
