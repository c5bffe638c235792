"""The fleet-size part of `make bench`: one site with 64, 256 and 1,024 named nodes.

The shipped trainer-mode site grown to N named nodes (`tools/fleetsite.py`) is rendered,
its tree checked and its plan printed, each by the real command line in a subprocess,
timed and with its peak memory (the child's maximum resident set). Each figure is shown
against the same command on the smallest fleet, measured in the same run, and with the
growth exponent between sizes, log(t2/t1) / log(n2/n1): 1 is linear, 2 quadratic.
Goals (issue #22): each command on the largest fleet within 24 times its time on the
smallest, under 30 seconds and under 1 GB. The NVCRE-mode site is measured on the
smallest and largest fleet too, without goals.
"""

from __future__ import annotations

import functools
import math
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from tools.fleetsite import Engine, write_fleet_site

SIZES = (64, 256, 1024)
COMMANDS = ("render", "check", "plan")
GROWTH_GOAL = 24.0  # the largest fleet against the smallest (16x the nodes)
SECONDS_GOAL = 30.0
MEMORY_GOAL = 1 << 30  # bytes
LARGEST_REPEAT = 2  # runs of each command on the largest fleet (the rest: --repeat)


@dataclass(frozen=True)
class Sample:
    """One command on one fleet: best wall time of its repeats, CPU time, peak memory.

    The CPU time (the child's user and system time) is shown beside the wall time: on a
    shared machine it moves less with other people's load.
    """

    seconds: float
    peak_bytes: int
    cpu_seconds: float = 0.0


def measured(cwd: Path, *args: str) -> Sample:
    """Run `nvcregen ARGS` in `cwd`; its wall time and the child's peak resident set."""
    start = time.perf_counter()
    child = subprocess.Popen(
        [sys.executable, "-m", "nvcregen", *args],
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    assert child.stderr is not None
    errors = child.stderr.read()
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode not in {0, 1}:
        raise SystemExit(f"nvcregen {' '.join(args)} failed:\n{errors.decode()}")
    scale = 1 if sys.platform == "darwin" else 1024  # ru_maxrss: bytes on macOS, else KiB
    return Sample(seconds, usage.ru_maxrss * scale, usage.ru_utime + usage.ru_stime)


def fleet_samples(
    work: Path, engine: Engine, sizes: tuple[int, ...], repeat: int
) -> dict[tuple[str, int], Sample]:
    """Each command on each fleet size, best of `repeat` (at most two for the largest).

    The best, as `timeit` takes it: on a shared machine other load only ever adds time,
    and one run of the largest fleet has been seen to take half again as long as the
    next (its CPU time too).
    """
    found: dict[tuple[str, int], Sample] = {}
    for nodes in sizes:
        folder = work / f"{engine}-{nodes}"
        site = write_fleet_site(folder, nodes, engine).relative_to(folder).as_posix()
        times = repeat if nodes < max(sizes) else min(repeat, LARGEST_REPEAT)

        runs: dict[str, Callable[[], Sample]] = {
            "render": functools.partial(_render, folder, iter(range(1, times + 1))),
            "check": functools.partial(measured, folder, "check", "out-1"),
            "plan": functools.partial(measured, folder, "plan", site),
        }
        for command in COMMANDS:
            samples = [runs[command]() for _ in range(times)]
            best = min(samples, key=lambda s: s.seconds)
            found[(command, nodes)] = Sample(
                best.seconds, max(s.peak_bytes for s in samples), best.cpu_seconds
            )
    return found  # the folders go with `work`, after every measurement


def _render(folder: Path, numbers: Iterator[int]) -> Sample:
    """A render that writes every file: into a folder of its own, `out-<next number>/`.

    Nothing is deleted between measurements: ext4 skips the inodes of files deleted in
    the last minutes when it allocates new ones (`recently_deleted`), so creating 40,000
    files right after removing as many costs several times more kernel time than into a
    quiet filesystem; a bench that removed its previous tree would time its own cleanup.
    """
    return measured(folder, "render", "--out", f"out-{next(numbers)}")


def exponent(nodes: tuple[int, int], seconds: tuple[float, float]) -> float:
    """The growth exponent between two sizes: 1 linear, 2 quadratic."""
    return math.log(seconds[1] / seconds[0]) / math.log(nodes[1] / nodes[0])


def report(engine: Engine, samples: dict[tuple[str, int], Sample], *, goals: bool) -> bool:
    """Print one table of `samples`; whether every goal was met (True without goals)."""
    sizes = sorted({n for _, n in samples})
    base, top = sizes[0], sizes[-1]
    print(f"\nfleet: sites/{engine} site with N named nodes (the ratio is against {base} nodes)")
    print(
        f"{'command':8} {'nodes':>6} {'seconds':>9} {'cpu s':>7} {'peak MB':>8} {'ratio':>8} "
        f"{'exp.':>6}  goal"
    )
    met = True
    for command in COMMANDS:
        for index, nodes in enumerate(sizes):
            sample = samples[(command, nodes)]
            ratio = sample.seconds / samples[(command, base)].seconds
            growth = f"{'':6}"
            if index:
                before = sizes[index - 1]
                step = (samples[(command, before)].seconds, sample.seconds)
                growth = f"{exponent((before, nodes), step):6.2f}"
            mark = ""
            if goals and nodes == top:
                ok = (
                    ratio <= GROWTH_GOAL
                    and sample.seconds < SECONDS_GOAL
                    and sample.peak_bytes < MEMORY_GOAL
                )
                met &= ok
                mark = f"<= {GROWTH_GOAL:g}x, < {SECONDS_GOAL:g} s, < {MEMORY_GOAL >> 20} MB " + (
                    "ok" if ok else "MISSED"
                )
            print(
                f"{command:8} {nodes:6} {sample.seconds:9.2f} {sample.cpu_seconds:7.2f} "
                f"{sample.peak_bytes / 2**20:8.0f} "
                f"{ratio:7.2f}x {growth}  {mark}"
            )
    return met


def run_fleet(work: Path, sizes: tuple[int, ...] = SIZES, repeat: int = 3) -> bool:
    """Measure and print the fleet tables; whether the trainer-mode goals were met."""
    trainer = fleet_samples(work, "trainer", sizes, repeat)
    met = report("trainer", trainer, goals=True)
    ends = (sizes[0], sizes[-1]) if len(sizes) > 1 else sizes
    report("nvcre", fleet_samples(work, "nvcre", ends, repeat), goals=False)
    verdict = "ok" if met else "MISSED"
    print(
        f"issue #22: {sizes[-1]} named nodes render, check and plan within {GROWTH_GOAL:g}x "
        f"{sizes[0]} nodes, under {SECONDS_GOAL:g} s and {MEMORY_GOAL >> 20} MB: {verdict}"
    )
    return met


def main() -> None:
    """`python -m tools.bench_fleet [--sizes 64,256,1024] [--repeat 3]`: the fleet part alone."""
    import argparse
    import tempfile

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)))
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="nvcregen-bench-fleet-"))
    try:
        run_fleet(work, tuple(int(s) for s in args.sizes.split(",")), args.repeat)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
