"""The rehearsal part of `make bench`: the trainer copy rehearsed on the twin, by size.

The shipped trainer site grown to N named nodes (`tools/fleetsite.py`) is rehearsed by
the real command line (`nvcregen rehearse --format json --speed 1000`), one size at a
time: its wall time, the twin's start, Kueue's admissions per second (within each step:
the runs admitted after the first over the span from the first admission to the last,
summed over the steps) and `as_planned`, each against the smallest size, measured in the
same run (the bench's style: only the ratios carry over to another machine). Skipped with
one line when the twin is not built (`make controlplane twin`). Sizes: 16 and 64 nodes;
`--sizes` or NVCREGEN_BENCH_REHEARSE (e.g. `16,64,256,1024`) for more
(docs/design/0019-twin.md, "At fleet size", gives the times measured here).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tools.fleetsite import write_fleet_site

SIZES = (16, 64)
ENV = "NVCREGEN_BENCH_REHEARSE"
SPEED = 1000.0
TIMEOUT_S = 7200.0  # the rehearsal's own --timeout: long enough for 1,024 nodes here


@dataclass(frozen=True)
class Rehearsed:
    """One size rehearsed: what the bench prints of it."""

    nodes: int
    wall_s: float
    twin_s: float
    runs: int
    admitted: int
    admissions_per_s: float
    as_planned: bool


def admission_rate(report: Mapping[str, Any]) -> tuple[int, float]:
    """Runs admitted, and admissions per second within the steps of a rehearsal's JSON.

    Per step, the runs admitted after its first over the time from its first admission
    to its last (the gaps between steps are the plan's gating, not Kueue's pace); 0.0
    when no step admitted two runs at distinct times. Fields of the wrong type count as
    none (the report is read back from a subprocess).
    """
    admitted, later, span = 0, 0, 0.0
    steps = report.get("steps")
    for step in steps if isinstance(steps, list) else []:
        observed = step.get("observed") if isinstance(step, dict) else None
        if not isinstance(observed, dict):
            continue
        count, first, last = (
            observed.get(k) for k in ("admitted", "first_admission_s", "last_admission_s")
        )
        if not isinstance(count, int) or isinstance(count, bool):
            continue
        admitted += count
        if not (isinstance(first, int | float) and isinstance(last, int | float)):
            continue
        if count > 1 and last > first:
            later, span = later + count - 1, span + (last - first)
    return admitted, (later / span if span > 0 else 0.0)


def rehearse(work: Path, nodes: int, speed: float = SPEED) -> Rehearsed:
    """Write the `nodes`-node copy under `work` and rehearse it; its figures.

    Raises:
        SystemExit: When the command fails (exit 2: bad input, or the twin cannot run).

    """
    site = write_fleet_site(work / f"fleet-{nodes}", nodes)
    began = time.perf_counter()
    command = [sys.executable, "-m", "nvcregen", "rehearse", str(site), "--format", "json"]
    done = subprocess.run(
        [*command, "--speed", f"{speed:g}", "--timeout", f"{TIMEOUT_S:g}"],
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - began
    if done.returncode not in {0, 1}:
        raise SystemExit(f"nvcregen rehearse ({nodes} nodes) failed:\n{done.stderr[-2000:]}")
    report = json.loads(done.stdout)
    admitted, rate = admission_rate(report)
    return Rehearsed(
        nodes,
        wall,
        float(report.get("twin_start_s") or 0.0),
        int(report.get("runs") or 0),
        admitted,
        rate,
        report.get("as_planned") is True,
    )


def table(rows: Sequence[Rehearsed]) -> list[str]:
    """The bench's lines: each size's figures and its ratios against the smallest."""
    base = rows[0]
    lines = [
        f"{'nodes':>6} {'runs':>5} {'wall s':>8} {'ratio':>7} {'twin s':>7} {'ratio':>7} "
        f"{'adm/s':>6} {'ratio':>7}  as_planned"
    ]
    for row in rows:
        rate = row.admissions_per_s / base.admissions_per_s if base.admissions_per_s else 0.0
        lines.append(
            f"{row.nodes:>6} {row.runs:>5} {row.wall_s:8.1f} {row.wall_s / base.wall_s:6.2f}x "
            f"{row.twin_s:7.1f} {row.twin_s / base.twin_s if base.twin_s else 0.0:6.2f}x "
            f"{row.admissions_per_s:6.2f} {rate:6.2f}x  "
            f"{'yes' if row.as_planned else 'NO'} ({row.admitted}/{row.runs} admitted)"
        )
    return lines


def sizes(given: str | None) -> tuple[int, ...]:
    """The sizes to rehearse: `--sizes`, else NVCREGEN_BENCH_REHEARSE, else SIZES."""
    text = given if given is not None else os.environ.get(ENV, "")
    return tuple(int(part) for part in text.split(",") if part.strip()) if text else SIZES


def main(argv: Sequence[str] | None = None) -> None:
    """`python -m tools.bench_rehearse [--sizes 16,64,256]`: the rehearsal part alone."""
    from nvcregen.rehearse.locate import missing

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default=None, help=f"node counts (default: ${ENV} or 16,64)")
    parser.add_argument("--speed", type=float, default=SPEED)
    args = parser.parse_args(argv)
    print(f"\nrehearsal of the trainer copy on the twin (pods at {args.speed:g}x)")
    reason = missing()
    if reason:
        print(f"skipped: {reason}")
        return
    work = Path(tempfile.mkdtemp(prefix="nvcregen-bench-rehearse-"))
    rows: list[Rehearsed] = []
    try:
        for count in sizes(args.sizes):
            rows.append(rehearse(work, count, args.speed))
            sys.stdout.flush()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("\n".join(table(rows)))


if __name__ == "__main__":
    main()
