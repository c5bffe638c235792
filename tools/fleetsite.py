"""A shipped example site grown to N named nodes: the fleet of `make bench` and of tests.

`fleet_site(n)` copies `sites/h20-3e-trainer.yaml` (trainer mode: TrainJobs and Jobs, one
per node or pair of nodes) and `fleet_site(n, engine="nvcre")` copies
`sites/h20-3e-lab.yaml` (NVCRE mode: Certifications and WorkloadRuns), naming the nodes
`gpu-0000`... and widening the window with the pool so the site still validates: every
node may run a job at once, and the GPU-hour budget grows with the nodes. Everything else
(tests, stages, rounds, thresholds) is the shipped site's, so a size is the only
difference between two fleets.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Literal

ROOT = Path(__file__).resolve().parent.parent
Engine = Literal["trainer", "nvcre"]
Packing = Literal["packed", "perRun"]
SOURCES: dict[Engine, str] = {"trainer": "h20-3e-trainer", "nvcre": "h20-3e-lab"}
_NODES = "nodes: [node-a, node-b]"
_PACKING = "packing: packed"
_WINDOW = "window: {maxConcurrentJobs: 2, deadline: 16h, gpuHours: 260, retests: 1}"
MAX_CONCURRENT = 1024  # readiness.window.maxConcurrentJobs's maximum
GPU_HOURS_PER_NODE = 130  # the shipped site's worst case is about 126 GPU-hours a node


def node_names(count: int) -> list[str]:
    """The fleet's node names, in order: gpu-0000, gpu-0001, ..."""
    return [f"gpu-{index:04d}" for index in range(count)]


def fleet_site(count: int, engine: Engine = "trainer", packing: Packing | None = None) -> str:
    """The text of the shipped site of `engine` with `count` named nodes (at least 2).

    `packing` replaces the trainer site's `readiness.packing` (shipped: `packed`); `perRun`
    gives today's per-run output at fleet size, for the tests that measure it.
    """
    if count < 2:
        raise ValueError(f"a fleet needs at least 2 nodes for its inter-node stage, not {count}")
    text = (ROOT / "sites" / f"{SOURCES[engine]}.yaml").read_text(encoding="utf-8")
    waves = -(-count // MAX_CONCURRENT)  # past 1,024 nodes, jobs wait their turn: more time
    window = (  # every node at once, up to the schema's 1,024 jobs
        f"window: {{maxConcurrentJobs: {min(count, MAX_CONCURRENT)}, deadline: {16 * waves}h, "
        f"gpuHours: {GPU_HOURS_PER_NODE * count}, retests: 1}}"
    )
    edits = [(_NODES, f"nodes: [{', '.join(node_names(count))}]"), (_WINDOW, window)]
    if packing is not None:
        edits.append((_PACKING, f"packing: {packing}"))
    for old, new in edits:
        if text.count(old) != 1:
            raise ValueError(f"sites/{SOURCES[engine]}.yaml no longer holds {old!r} once")
        text = text.replace(old, new)
    return text


def write_fleet_site(
    folder: Path, count: int, engine: Engine = "trainer", packing: Packing | None = None
) -> Path:
    """Write `fleet_site` as `folder/sites/<source>.yaml`, the layout render finds."""
    path = folder / "sites" / f"{SOURCES[engine]}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(fleet_site(count, engine, packing), encoding="utf-8")
    return path


def main() -> None:
    """Write a fleet site: `python -m tools.fleetsite 1024 /tmp/fleet [--engine nvcre]`."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("nodes", type=int)
    parser.add_argument("folder", type=Path)
    parser.add_argument("--engine", choices=sorted(SOURCES), default="trainer")
    parser.add_argument("--packing", choices=["packed", "perRun"], default=None)
    args = parser.parse_args()
    print(write_fleet_site(args.folder, args.nodes, args.engine, args.packing))


if __name__ == "__main__":
    main()
