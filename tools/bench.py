"""`make bench`: time nvcregen on a synthetic fleet and print ratios against baselines.

Every figure is measured in the same run on the same machine, so only the ratios are
meaningful; absolute seconds depend on the machine. Goals:

- `render` of N sites costs at most 60x one site (start-up amortised);
- a no-op `render --check` of the N sites costs at most 5% of rendering them (the
  input-hash cache skips sites whose inputs and files are unchanged; issue #10);
- `nvcregen --version` imports neither the kubernetes client nor Helm;
- `nvcregen check` of the fleet's tree runs at most 2x the time it takes libyaml
  merely to parse the same files (the parse floor; issue #10);
- the plan check (the replay in the render gate and `check`) costs at most 10% of
  compiling the same sites (`tools/bench_plan.py`);
- one hostile log line of 4 MB costs the readers at most 8x one of 1 MB: linear, not
  quadratic (`tools/bench_lines.py`; issue #20).
- render, check and plan of one site with 1,024 named nodes cost at most 24x the same
  site with 64 nodes, under 30 s and 1 GB each (`tools/bench_fleet.py`; issue #22).
- the trainer copy rehearsed on the twin at 16 and 64 nodes (more with
  `--rehearse-sizes` or NVCREGEN_BENCH_REHEARSE): wall time, the twin's start, Kueue's
  admissions per second and `as_planned` against 16 nodes (`tools/bench_rehearse.py`;
  issue #34; one line saying so when the twin is not built).
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import yaml

from tools import bench_lines
from tools.bench_fleet import SIZES
from tools.bench_plan import PLAN_GOAL, measure

ROOT = Path(__file__).resolve().parent.parent
_NAME = re.compile(r"^(  name|  cluster): (\S+)$", re.MULTILINE)
_PATH = re.compile(r"^(    path): out/(\S+)$", re.MULTILINE)


RENDER_GOAL = 60.0  # render of N sites, against one site
NOOP_GOAL = 0.05  # no-op render --check, against rendering the same sites
CHECK_GOAL = 2.0  # check, against libyaml parsing the same files


def _verdict(ratio: float, goal: float) -> str:
    return "ok" if ratio <= goal else "MISSED"


def _mark(ratio: float, goal: float | None) -> str:
    return "" if goal is None else f"<= {goal:g}x {_verdict(ratio, goal)}"


def make_fleet(target: Path, count: int) -> list[Path]:
    """Clone the example sites under new names until there are `count` sites."""
    sources = sorted((ROOT / "sites").glob("*.yaml"))
    (target / "sites").mkdir(parents=True)
    made = []
    for index in range(count):
        source = sources[index % len(sources)]
        suffix = f"-{index:03d}"
        text = _NAME.sub(rf"\1: \2{suffix}", source.read_text())
        text = _PATH.sub(rf"\1: out/\2{suffix}", text)
        path = target / "sites" / f"{source.stem[:24]}{suffix}.yaml"
        path.write_text(text)
        made.append(path)
    return made


def timed(action: Callable[[], object], repeat: int = 3) -> float:
    """Best wall time of `repeat` runs, in seconds."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        best = min(best, time.perf_counter() - start)
    return best


def timed_together(actions: list[Callable[[], object]], repeat: int = 5) -> list[float]:
    """Best wall time of each action, the actions run in turn `repeat` times.

    For a ratio of two timings on a shared machine: taking turns exposes both to the
    same passing load, and the best of several runs is the least disturbed one.
    """
    best = [float("inf")] * len(actions)
    for _ in range(repeat):
        for index, action in enumerate(actions):
            start = time.perf_counter()
            action()
            best[index] = min(best[index], time.perf_counter() - start)
    return best


def nvcregen(cwd: Path, *args: str) -> None:
    """Run the real command line in a subprocess, as a user or CI would."""
    result = subprocess.run(
        [sys.executable, "-m", "nvcregen", *args], cwd=cwd, capture_output=True, check=False
    )
    if result.returncode not in {0, 1}:
        raise SystemExit(f"nvcregen {' '.join(args)} failed:\n{result.stderr.decode()}")


HEAVY = ("kubernetes", "urllib3", "helm_python", "jsonschema", "pydantic", "ruamel")
_PROBE = f"""
import sys
import nvcregen.cli
try:
    nvcregen.cli.main(["--version"])
except SystemExit:
    pass
print(" ".join(sorted({{m.split(".")[0] for m in sys.modules}} & set({HEAVY!r}))))
"""


def heavy_imports() -> str:
    """The heavy packages `nvcregen --version` imports (none is the goal)."""
    done = subprocess.run(
        [sys.executable, "-c", _PROBE], capture_output=True, text=True, check=True
    )
    return done.stdout.splitlines()[-1].strip()


def parse_floor(files: list[Path]) -> None:
    """Parse every file with libyaml and nothing else: the least any checker must do."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    for file in files:
        yaml.load(file.read_bytes(), Loader=loader)


def main() -> None:
    """Build the fleet, time each scenario, print a table of ratios."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sites", type=int, default=100)
    parser.add_argument("--check-objects", type=int, default=4000)
    parser.add_argument(
        "--fleet-sizes",
        default=",".join(map(str, SIZES)),
        help="node counts of the fleet-size benchmark, comma-separated ('' to skip it)",
    )
    parser.add_argument(
        "--rehearse-sizes",
        default=None,
        help="node counts of the rehearsal benchmark (default: $NVCREGEN_BENCH_REHEARSE "
        "or 16,64; '' to skip it)",
    )
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="nvcregen-bench-"))
    try:
        _run(work, args.sites, args.check_objects)
        if args.fleet_sizes:
            # In a small process of its own: a child's peak memory (ru_maxrss) starts at
            # the peak of the process that spawned it, and this one has compiled 100
            # sites by now (it showed 170 MB for every small fleet).
            sys.stdout.flush()
            fleet = [sys.executable, "-m", "tools.bench_fleet", "--sizes", args.fleet_sizes]
            subprocess.run(fleet, cwd=ROOT, check=True)  # a crash fails `make bench`
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print()
    bench_lines.main()
    if args.rehearse_sizes != "":
        sys.stdout.flush()
        sized = [] if args.rehearse_sizes is None else ["--sizes", args.rehearse_sizes]
        rehearsal = [sys.executable, "-m", "tools.bench_rehearse", *sized]
        subprocess.run(rehearsal, cwd=ROOT, check=True)  # a crash fails `make bench`


def _check_tree(work: Path, per_site: float, objects: int) -> list[Path]:
    """Render a fleet large enough for a check of about `objects` objects."""
    big = work / "big"
    make_fleet(big, max(1, round(objects / per_site)))
    nvcregen(big, "render", "--out", "out")
    return sorted((big / "out").rglob("*.yaml"))


def _run(work: Path, count: int, objects: int) -> None:
    fleet = make_fleet(work / "fleet", count)
    here = work / "fleet"
    one = timed(lambda: nvcregen(here, "render", str(fleet[0]), "--out", "one"))
    render_all = timed(lambda: nvcregen(here, "render", "--out", "out"), repeat=1)
    noop = timed(lambda: nvcregen(here, "render", "--check", "--out", "out"))
    python = timed(lambda: subprocess.run([sys.executable, "-c", "pass"], check=True))
    startup = timed(lambda: nvcregen(here, "--version"))
    per_site = len(list((here / "out").rglob("*.yaml"))) / count
    files = _check_tree(work, per_site, objects)
    floor, check = timed_together(
        [lambda: parse_floor(files), lambda: nvcregen(work / "big", "check", "out")]
    )
    compiled, replayed = measure(fleet, here)
    rows = [
        ("render 1 site (baseline)", one, 1.0, None),
        (f"render {count} sites", render_all, render_all / one, RENDER_GOAL),
        (f"render --check {count} sites, nothing changed", noop, noop / render_all, NOOP_GOAL),
        ("python -c pass (baseline)", python, 1.0, None),
        ("nvcregen --version", startup, startup / python, None),
        (f"parse {len(files)} objects with libyaml (baseline)", floor, 1.0, None),
        (f"check {len(files)} objects", check, check / floor, CHECK_GOAL),
        (f"compile {count} sites in process (baseline)", compiled, 1.0, None),
        (f"plan check (replay) of {count} sites", replayed, replayed / compiled, PLAN_GOAL),
    ]
    print(f"{'scenario':52} {'seconds':>9} {'ratio':>8} {'goal':>7}")
    for label, seconds, ratio, goal in rows:
        print(f"{label:52} {seconds:9.3f} {ratio:7.2f}x {_mark(ratio, goal)}")
    print(f"check rate: {len(files) / check:.0f} objects/s")
    print(
        f"issue #10: no-op render --check = {noop / render_all:.1%} of render "
        f"(goal <= {NOOP_GOAL:.0%}) {_verdict(noop / render_all, NOOP_GOAL)}; "
        f"check = {check / floor:.2f}x the parse floor (goal <= {CHECK_GOAL:g}x) "
        f"{_verdict(check / floor, CHECK_GOAL)}"
    )
    heavy = heavy_imports()
    lazy = f"imports {heavy}: MISSED" if heavy else "imports none of " + ", ".join(HEAVY) + ": ok"
    print(f"nvcregen --version {lazy}")


if __name__ == "__main__":
    main()
