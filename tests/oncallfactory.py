"""A four-node trainer-mode site and its saved logs, for the on-call tests (issue #13).

The site is `sites/h20-3e-trainer.yaml` with four nodes (node-a .. node-d) and a budget
that fits them: single-node runs on each node, two-node runs on (a, b) and (c, d). Every
NCCL log is printed as nccl-tests prints it (`ncclprint.py`) with the group's hosts in
its device list and NCCL's own transport lines; every DCGM log is NVIDIA's captured
`dcgmi diag -j` of DCGM 3.1.0 (all PASS) between the lines nvcregen's script prints
before it (its node, pod and start time) and after it (issue #31: one log is evidence
for one run at most, so no two logs are the same bytes). `busbw(stage, test, nodes)` chooses each
group's bus bandwidth at 1 GiB, so a test states which group fails and how. No two
logs have the same table, as no two real runs do (issue #31: a repeated table is a
copy): the 2 GiB row of each log that would repeat another's is a little lower.
"""

from __future__ import annotations

import re
import zlib
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from trainerfactory import compiled, example_text

from nvcregen.emit.canonical import dump_yaml
from nvcregen.kinds.nccl import printer as ncclprint

ROOT = Path(__file__).resolve().parent.parent
REAL = ROOT / "tests" / "fixtures" / "real-logs"
DCGM_JSON = REAL / "dcgm" / "dcgm-3.1.0-diag-json-with-warning-prefix-and-nulls.txt"
NODES = ("node-a", "node-b", "node-c", "node-d")
GIB = 1 << 30
COLLECTIVES = {
    "nccl-all-reduce": "all_reduce",
    "nccl-all-gather": "all_gather",
    "nccl-alltoall": "alltoall",
    "nccl-all-reduce-tcp": "all_reduce",
}
DEBUG = {
    "IB": (
        "{host}:1274:1274 [0] NCCL INFO NCCL version 2.27.3+cuda12.9",
        "{host}:1274:1290 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_1:1/RoCE [RO];"
        " OOB eth0:10.0.0.1<0>",
        "{host}:1274:1290 [0] NCCL INFO Using network IB",
    ),
    "Socket": (
        "{host}:1274:1274 [0] NCCL INFO NCCL version 2.27.3+cuda12.9",
        "{host}:1274:1290 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>",
        "{host}:1274:1290 [0] NCCL INFO Using network Socket",
    ),
}
Obj = dict[str, Any]
Busbw = Callable[[str, str, tuple[str, ...]], float]


def site_text(nodes: tuple[str, ...] = NODES) -> str:
    """The example trainer-mode site with `nodes` and a budget for them."""
    text = example_text().replace("nodes: [node-a, node-b]", f"nodes: [{', '.join(nodes)}]")
    text = text.replace("gpuHours: 180", "gpuHours: 4000").replace("deadline: 12h", "deadline: 96h")
    return text.replace("name: h20-3e-trainer", "name: h20-3e-four", 1)


def healthy(stage: str, test: str, nodes: tuple[str, ...]) -> float:
    """Every group at the field report's figures: 465 GB/s in a node, 452 across, TCP 2.25.

    All-to-all across the nodes' eight 200 Gb/s NICs is held to its ceiling (46.9 GB/s
    times the field report's calibration): 45 GB/s.
    """
    if test.endswith("-tcp"):
        return 2.25
    if test == "nccl-alltoall" and len(nodes) > 1:
        return 45.0
    return 465.0 if len(nodes) == 1 else 452.28


def group_nodes(obj: Obj, test_nodes: tuple[str, ...], per_job: int) -> tuple[str, ...]:
    """The nodes of a TrainJob's group, from its `-g<index>` name."""
    match = re.search(r"-g(\d+)$", obj["metadata"]["name"])
    assert match is not None
    start = int(match[1]) * per_job
    return test_nodes[start : start + per_job]


def nccl_text(
    obj: Obj,
    nodes: tuple[str, ...],
    busbw: Busbw,
    seen: Counter[object],
    hosts: tuple[str, ...] = (),
) -> str:
    """A launcher log of one round of one group, as the TrainJob prints it.

    `seen` counts the tables written so far, so that this one repeats none of them;
    `hosts` name the ranks' hosts when they are not the nodes (a packed run's pod).
    """
    labels = obj["metadata"]["labels"]
    stage, test = labels["nvcregen.io/stage"], labels["nvcregen.io/test"]
    collective = COLLECTIVES[test]
    value = busbw(stage, test, nodes)
    nranks = 8 * len(nodes)
    table = (value, ncclprint.FACTORS[collective](nranks))
    lower = max(value * 0.0003, 0.02) * seen[table]  # GB/s off the 2 GiB row
    seen[table] += 1
    rows = [
        ncclprint.Row(size, ncclprint.time_for(size, at, collective, nranks),
                      ncclprint.time_for(size, at * 0.998, collective, nranks))
        for size, at in ((GIB, value), (2 * GIB, value - lower))
    ]  # fmt: skip
    expected = obj["metadata"].get("annotations", {}).get("nvcregen.io/expected-transport")
    body = ncclprint.run(collective, list(hosts or nodes), 8, rows)
    debug = [line.format(host=(hosts or nodes)[0]) for line in DEBUG.get(expected or "", ())]
    return "\n".join([*body[:19], *debug, *body[19:]]) + "\n"


def dcgm_log(job: str, node: str, seconds: int = 312) -> str:
    """A passing DCGM Job's log, as its pod prints it on `node`.

    The script's begin line (the node, the pod `<job>-<suffix>` and the start time, which
    differ from pod to pod), the captured JSON, then the script's exit line. Every run
    takes `seconds` (issue #31's follow-up: healthy runs of the same length are no copies,
    their begin lines differ).
    """
    crc = zlib.crc32(job.encode())
    pod = f"{job}-{crc % 36**5:05x}"[: len(job) + 6]
    start = f"2026-12-03T{10 + crc % 12:02d}:{crc // 12 % 60:02d}:{crc // 720 % 60:02d}Z"
    begin = f"@@nvcregen-dcgm begin node={node} pod={pod} start={start}\n"
    trailer = f"nvcregen: dcgmi diag --run 1 exit=0 seconds={seconds}\n"
    return begin + DCGM_JSON.read_text(encoding="utf-8") + trailer


def write_logs(folder: Path, text: str, busbw: Busbw = healthy) -> Path:
    """Write `folder/logs/<ns>/<name>.log` for every TrainJob and Job, and the objects."""
    objects = [m.obj for m in compiled(text) if m.kind in {"TrainJob", "Job"}]
    names = re.search(r"nodes: \[([^\]]*)\]", text)
    assert names is not None
    nodes = tuple(n.strip() for n in names[1].split(","))
    seen: Counter[object] = Counter()
    for obj in objects:
        meta = obj["metadata"]
        path = folder / "logs" / meta["namespace"] / f"{meta['name']}.log"
        path.parent.mkdir(parents=True, exist_ok=True)
        if obj["kind"] == "Job":
            node = meta["annotations"]["nvcregen.io/nodes"]
            path.write_text(dcgm_log(meta["name"], node), encoding="utf-8")
            continue
        per_job = 1 if meta["labels"]["nvcregen.io/stage"] == "single-node" else 2
        path.write_text(
            nccl_text(obj, group_nodes(obj, nodes, per_job), busbw, seen), encoding="utf-8"
        )
    listing = dump_yaml({"apiVersion": "v1", "kind": "List", "items": objects})
    (folder / "objects.yaml").write_text(listing, encoding="utf-8")
    return folder
