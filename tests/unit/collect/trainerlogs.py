"""A saved-logs folder for the trainer-mode example site, built from real outputs.

Every TrainJob and Job of `sites/h20-3e-trainer.yaml` (as compiled) gets a log made from
the real fixtures in tests/fixtures/real-logs/:

- NCCL: the OCI two-node all-reduce (RoCE, NCCL 2.21.5). That capture has no NCCL_DEBUG
  lines, so RDMA tests get NCCL's own `NET/IB` device and connection lines prepended
  (as the TrainJobs' NCCL_DEBUG=INFO prints them), the TCP baseline `NET/Socket` ones,
  intra-node tests none. The 1 GiB busbw of round r is `BUSBW[r - 1]` in every test, so
  the field report's 363.76 / 427.58 / 452.28 GB/s rounds are what verdicts see. The
  capture ran on two OCI H100 hosts; each log is made to show what the planned run
  prints on the site's H20-3e nodes, so that its evidence binds to the plan: the hosts
  are the group's planned nodes (as the pods of a host-network run name them), the
  devices `NVIDIA H20-3e`, a one-node test keeps the first host's 8 ranks, and tests
  the links carry less of (all-to-all across nodes, TCP) are scaled under their ceiling.
  No two logs have the same table, as no two real runs do (issue #31: a repeated table
  is a copy): the 2 GiB busbw of the run's k-th log is k hundredths of a GB/s lower.
- DCGM: NVIDIA's captured `dcgmi diag -j` of DCGM 3.1.0 (every test PASS) between the
  lines nvcregen's script prints, the first naming the Job's node and its own pod and
  start time (issue #31: no two logs are the same bytes).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from oncallfactory import dcgm_log
from trainerfactory import example_manifests

from nvcregen.emit.canonical import dump_yaml

ROOT = Path(__file__).resolve().parents[3]
REAL = ROOT / "tests" / "fixtures" / "real-logs"
OCI = REAL / "nccl-tests" / "allreduce-2node-16xH100-oci-roce-nccl2.21.5-container.txt"
GIB_ROW = "1073741824     268435456     float     sum      -1   4511.2  238.02  446.28"
BUSBW = ("363.76", "427.58", "452.28")
IB_LINES = (
    "node-a:1274:1274 [0] NCCL INFO NCCL version 2.21.5+cuda12.4\n"
    "node-a:1274:1274 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_1:1/RoCE ; "
    "OOB eth0:10.0.0.1<0>\n"
    "node-a:1274:1290 [0] NCCL INFO Channel 00/0 : 8[0] -> 0[0] [receive] via NET/IB/0/GDRDMA\n"
)
SOCKET_LINES = (
    "node-a:1274:1274 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>\n"
    "node-a:1274:1274 [0] NCCL INFO Using network Socket\n"
)
Obj = dict[str, Any]
LogText = Callable[[Obj], str]


def runs() -> list[Obj]:
    """The example site's TrainJobs and Jobs, as rendered."""
    return [m.obj for m in example_manifests() if m.kind in {"TrainJob", "Job"}]


def labels(obj: Obj) -> dict[str, str]:
    """An object's labels."""
    found: dict[str, str] = obj["metadata"]["labels"]
    return found


def nccl_log(obj: Obj, debug: str = "") -> str:
    """The real two-node all-reduce log as the run `obj` prints it, NCCL lines first.

    Its 1 GiB busbw is that of the run's round; hosts, devices, ranks and scale are the
    planned run's (see the module's docstring).
    """
    round_ = int(labels(obj)["nvcregen.io/round"])
    text = OCI.read_text(encoding="utf-8")
    varied = text.replace(GIB_ROW, GIB_ROW.replace("446.28", BUSBW[round_ - 1]))
    assert varied != text
    return debug + planned_run(varied, obj)


def planned_run(text: str, obj: Obj) -> str:
    """The capture as the planned run of `obj` prints it: its nodes, H20-3e, its ranks."""
    found = labels(obj)
    one_node = found["nvcregen.io/stage"] == "single-node"
    group = int(obj["metadata"]["name"].rsplit("-g", 1)[1])
    first, second = (NODES[group], "") if one_node else NODES
    lines = []
    for line in text.splitlines(keepends=True):
        if one_node and "inst-yyyyy-h100-ol89 device" in line:
            continue  # one node runs 8 ranks
        renamed = line.replace("inst-xxxxx-h100-ol89", first)
        renamed = renamed.replace("inst-yyyyy-h100-ol89", second)
        lines.append(renamed.replace("NVIDIA H100 80GB HBM3", "NVIDIA H20-3e"))
    scale = SCALE.get(found["nvcregen.io/test"], 1.0) if not one_node else 1.0
    k = [o["metadata"]["name"] for o in runs()].index(obj["metadata"]["name"])
    return "".join(_unique(_scaled(line, scale), k) for line in lines)


NODES = ("node-a", "node-b")  # the example site's nodes
SCALE = {"nccl-alltoall": 0.1, "nccl-all-reduce-tcp": 0.005}  # under 59.4 and 393.8 GB/s


def _scaled(line: str, scale: float) -> str:
    """A result row with its bandwidths times `scale` (times kept: only the numbers move)."""
    cells = line.split()
    if scale == 1.0 or len(cells) != 13 or not cells[0].isdigit():
        return line
    for i in (6, 7, 10, 11):
        cells[i] = f"{float(cells[i]) * scale:.2f}"
    return "  " + "  ".join(cells) + "\n"


def _unique(line: str, k: int) -> str:
    """The 2 GiB row with its out-of-place busbw k hundredths of a GB/s lower."""
    cells = line.split()
    if len(cells) != 13 or cells[0] != "2147483648" or k == 0:
        return line
    cells[7] = f"{float(cells[7]) - 0.01 * k:.2f}"
    return "  " + "  ".join(cells) + "\n"


def default_log(obj: Obj) -> str:
    """What each run's log holds when all went well."""
    if obj["kind"] == "Job":
        meta = obj["metadata"]
        return dcgm_log(meta["name"], meta["annotations"]["nvcregen.io/nodes"])
    expected = obj["metadata"].get("annotations", {}).get("nvcregen.io/expected-transport")
    debug = {"IB": IB_LINES, "Socket": SOCKET_LINES}.get(expected or "", "")
    return nccl_log(obj, debug)


def write_saved_logs(
    folder: Path,
    log: LogText = default_log,
    *,
    export: bool = True,
    keep: Callable[[Obj], bool] = lambda _: True,
) -> Path:
    """Write `folder/logs/<namespace>/<name>.log` per run (and the objects, if `export`)."""
    for obj in runs():
        if not keep(obj):
            continue
        meta = obj["metadata"]
        path = folder / "logs" / meta["namespace"] / f"{meta['name']}.log"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(log(obj), encoding="utf-8")
    if export:
        items = [obj for obj in runs() if keep(obj)]
        text = dump_yaml({"apiVersion": "v1", "kind": "List", "items": items})
        (folder / "objects.yaml").write_text(text, encoding="utf-8")
    return folder


def is_two_node_all_reduce(obj: Obj) -> bool:
    """Whether a run is a round of the RoCE two-node all-reduce."""
    found = labels(obj)
    return (found["nvcregen.io/stage"], found["nvcregen.io/test"]) == (
        "two-node",
        "nccl-all-reduce",
    )
