"""The fleet-size part of `make bench`: one site with 64, 1,024 and 4,096 named nodes.

Objects (issue #33): the shipped trainer-mode and NVCRE-mode sites grown to N named
nodes (`tools/fleetsite.py`) are compiled in this process, and for each size the table
gives the readiness objects, the Kueue workloads among them (TrainJob, Job, JobSet), the
largest GitOps unit (objects, manifests) and objects per node, and whether every unit is
within what its engine holds (`catalog/engines.yaml`, NVC677). Objects per node must not
grow with the fleet; a site over a unit limit is refused by render.

Times (issues #22 and #33): each site (trainer mode packs its runs, and splits a step
its GitOps engine could not hold into shards) is rendered, its tree
checked and its plan printed, each by the real command line in a subprocess, timed and
with its peak memory (the child's maximum resident set). Each figure is shown against the
same command on the smallest fleet, measured in the same run, and with the growth
exponent between sizes, log(t2/t1) / log(n2/n1): 1 is linear, 2 quadratic. Goals: each
command on 1,024 nodes within 24 times its time on 64, under 30 seconds and under 1 GB;
for the trainer site (issue #33) at 1,024 nodes at most 4,096 readiness objects and 2,048
workloads, every unit within its engine's limits, objects per node not growing with the
fleet, and render, check and plan each under 10 seconds.
"""

from __future__ import annotations

import functools
import itertools
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

SIZES = (64, 1024, 4096)
GOAL_NODES = 1024  # issue #22's goals hold at this size (16x the smallest)
WORKLOAD_KINDS = frozenset({"TrainJob", "Job", "JobSet"})
COMMANDS = ("render", "check", "plan")
GROWTH_GOAL = 24.0  # the largest fleet against the smallest (16x the nodes)
SECONDS_GOAL = 30.0
MEMORY_GOAL = 1 << 30  # bytes
LARGEST_REPEAT = 2  # runs of each command on the largest fleet (the rest: --repeat)
ENGINES: tuple[Engine, ...] = ("trainer", "nvcre")
OBJECTS_GOAL = 4096  # issue #33: a 1,024-node trainer copy's readiness objects at most
WORKLOADS_GOAL = 2048  # and the Kueue workloads among them
FLEET_SECONDS_GOAL = 10.0  # render, check and plan of that copy each


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
    if child.returncode != 0:  # a command that found problems is not the one to time
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
            if goals and nodes == min(top, GOAL_NODES):
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
    """Measure and print the fleet tables; whether the timing and object goals were met."""
    counts = {engine: {n: object_counts(engine, n) for n in sizes} for engine in ENGINES}
    for engine in ENGINES:
        report_objects(engine, counts[engine])
    met = True
    for engine in ENGINES:
        timed = fleet_samples(work, engine, sizes, repeat)
        met &= report(engine, timed, goals=True)
        if engine == "trainer":
            met &= fleet_goals(counts[engine], timed)
    verdict = "ok" if met else "MISSED"
    print(
        f"issue #22: {GOAL_NODES} named nodes render, check and plan within {GROWTH_GOAL:g}x "
        f"{sizes[0]} nodes, under {SECONDS_GOAL:g} s and {MEMORY_GOAL >> 20} MB: {verdict}"
    )
    return met


def fleet_goals(counts: dict[int, Objects], timed: dict[tuple[str, int], Sample]) -> bool:
    """Issue #33 on the trainer site: its objects, units and times at 1,024 nodes."""
    at = counts.get(GOAL_NODES)
    if at is None:
        return True
    sizes = sorted(counts)
    per_node = [counts[n].readiness / n for n in sizes]
    checks = {
        f"readiness objects {at.readiness} <= {OBJECTS_GOAL}": at.readiness <= OBJECTS_GOAL,
        f"workloads {at.workloads} <= {WORKLOADS_GOAL}": at.workloads <= WORKLOADS_GOAL,
        f"every unit within its engine's limits ({at.largest_objects} objects the most)": (
            not at.refused
        ),
        "objects per node not growing (" + ", ".join(f"{p:.2f}" for p in per_node) + ")": all(
            b <= a * 1.001 for a, b in itertools.pairwise(per_node)
        ),
    }
    for command in COMMANDS:
        seconds = timed[(command, GOAL_NODES)].seconds
        checks[f"{command} {seconds:.1f} s < {FLEET_SECONDS_GOAL:g} s"] = (
            seconds < FLEET_SECONDS_GOAL
        )
    for what, ok in checks.items():
        print(f"issue #33 at {GOAL_NODES} nodes: {what}: {'ok' if ok else 'MISSED'}")
    return all(checks.values())


@dataclass(frozen=True)
class Objects:
    """What a fleet site compiles to: readiness objects, workloads, its largest unit."""

    readiness: int
    workloads: int
    largest_objects: int
    largest_bytes: int
    refused: bool


def object_counts(engine: Engine, nodes: int) -> Objects:
    """Compile the fleet site of `engine` with `nodes` nodes in this process and count."""
    from nvcregen.catalog.engines import engine_facts
    from nvcregen.catalog.load import load_catalog
    from nvcregen.chain.pipeline import Built, Options, build_site
    from nvcregen.emit.naming import manifest_path
    from nvcregen.replay.model import TreeObject
    from nvcregen.replay.units import gitops_units, unit_problems
    from tools.fleetsite import fleet_site

    built = build_site(
        fleet_site(nodes, engine).encode(), "sites/f.yaml", load_catalog(), Options()
    )
    assert isinstance(built, Built), getattr(built, "diagnostics", None)
    objects = [TreeObject(p, p, m.obj) for m in built.manifests for p in [manifest_path(m)]]
    readiness = [o for o in objects if o.path.startswith("readiness/")]
    facts = engine_facts()
    units = gitops_units(objects, built.plan.facts.root, facts)
    largest = max(units, key=lambda u: (u.objects, u.manifest_bytes))
    return Objects(
        len(readiness),
        sum(o.kind in WORKLOAD_KINDS for o in readiness),
        largest.objects,
        largest.manifest_bytes,
        bool(unit_problems(units, facts)),
    )


def report_objects(engine: Engine, counts: dict[int, Objects]) -> None:
    """Print how a fleet's objects grow with its nodes (issue #33)."""
    print(f"\nobjects: sites/{engine} site with N named nodes (objects per node must not grow)")
    print(
        f"{'nodes':>6} {'readiness':>10} {'workloads':>10} {'per node':>9} "
        f"{'largest unit':>13} {'MiB':>7}  render"
    )
    for nodes, c in sorted(counts.items()):
        print(
            f"{nodes:6} {c.readiness:10,} {c.workloads:10,} {c.readiness / nodes:9.2f} "
            f"{c.largest_objects:13,} {c.largest_bytes / 2**20:7.1f}  "
            + ("refused: a unit over its engine's limit (NVC677)" if c.refused else "accepted")
        )


def main() -> None:
    """`python -m tools.bench_fleet [--sizes 64,1024,4096] [--repeat 3]`: the fleet part alone."""
    import argparse
    import tempfile

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)))
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="nvcregen-bench-fleet-"))
    try:
        met = run_fleet(work, tuple(int(s) for s in args.sizes.split(",")), args.repeat)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if not met:
        raise SystemExit(1)  # a goal MISSED fails `make bench`, as its table says


if __name__ == "__main__":
    main()
