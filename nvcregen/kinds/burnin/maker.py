"""The burnin kind's log: DCGM targeted stress on every GPU, as its script prints it (pure).

What `templates/burn-in.sh.j2` prints on a node, read back by `collect` with
`logs.py` (`reader.py`, judged by `judge.py`): the
begin line naming node, pod and start (`reader.MARK`); one `@@nvcregen-gpu index=N
uuid=GPU-...` line a GPU, as the script makes them from `nvidia-smi`, each UUID a hash of
the node and the index (a GPU keeps its UUID from round to round); `dcgmi diag --run
targeted_stress --json --verbose` in DCGM's JSON layout (`dcgmdiagprint.py`'s: the deployment
checks, then the stress test, one result a GPU); the script's exit line.

A healthy GPU holds the catalog's target for the pool's model: its result passes with
`GPU N relative stress level<TAB>X` (the plugin's verbose average, DCGM's format string)
at the target plus 0-0.4 % by a hash of the pod, round and GPU (never past the model's
datasheet peak), so each round of a node prints figures of its own (and its begin line
its own pod and start: no two rounds' logs are the same bytes, NVC741). A failing node's GPU
0 peaks at a tenth of its floor (0.95 of the target): DCGM fails it with its own words
(`Max stress level of X did not reach desired stress level of Y for GPU 0`) and exits 1,
and collect fails node and GPU (NVC768), the GPU named by its UUID too.
"""

from __future__ import annotations

import hashlib
import json
import zlib

from nvcregen.kinds.burnin.kind import KIND as BURNIN
from nvcregen.kinds.burnin.params import BurnInParams
from nvcregen.kinds.burnin.reader import MARK, UUID_MARK
from nvcregen.plan.model import TestUnit
from nvcregen.rehearse.dcgmdiagprint import DEPLOYMENT, dcgm_version
from nvcregen.rehearse.printer import (
    FAILED_RC,
    FAILING_SHARE,
    Maker,
    Output,
    Printer,
    Section,
    stamp,
)

TEST = "Targeted Stress"  # DCGM 3.x's and 4.x's JSON name of the plugin
JITTER = 5  # a healthy GPU's average: the target plus 0-4 thousandths of it
AVERAGE = "GPU {gpu} relative stress level\t{value:.1f}"  # TargetedStress_wrapper.cpp
BELOW = (  # DCGM_FR_STRESS_LEVEL_MSG, as TargetedStress_wrapper.cpp fills it in
    "Max stress level of {best:.1f} did not reach desired stress level of {target:.1f}"
    " for GPU {gpu}"
)


def burnin_output(printer: Printer, unit: TestUnit, at: Section) -> Output:
    """The burn-in script on one node: begin line, GPU UUIDs, DCGM's JSON, exit line."""
    burnin: BurnInParams = BURNIN.block(unit.test)
    node = at.pack.nodes[0]
    gpus = unit.pool.gpus_per_node
    expectation = burnin.expectation(unit.pool.hardware.model)
    # a model the catalog gives no figures is refused when the site is checked (NVC337);
    # made anyway, its GPUs show 0 GFLOPS, which collect reads as no evidence
    target = expectation.target_gflops if expectation is not None else 0.0
    peak = expectation.peak_gflops if expectation is not None else target
    floor = burnin.min_ratio * target
    crc = zlib.crc32(f"{at.pack.pod}/{at.pack.round}".encode())
    results: list[dict[str, object]] = []
    for gpu in range(gpus):
        if at.failing and gpu == 0:
            best = floor * FAILING_SHARE
            warning = BELOW.format(best=best, target=target, gpu=gpu)
            results.append({"gpu_ids": str(gpu), "status": "FAIL", "warnings": [warning]})
            continue
        share = 1 + ((crc >> 3 * (gpu % 10)) % JITTER) / 1000
        value = min(target * share, peak)
        info = [AVERAGE.format(gpu=gpu, value=value)]
        results.append({"gpu_ids": str(gpu), "status": "PASS", "info": info})
    every = ",".join(str(g) for g in range(gpus))
    deployment = [
        {"name": name, "results": [{"gpu_ids": every, "status": "PASS"}]} for name in DEPLOYMENT
    ]
    body: dict[str, object] = {
        "test_categories": [
            {"category": "Deployment", "tests": deployment},
            {"category": "Stress", "tests": [{"name": TEST, "results": results}]},
        ]
    }
    if version := dcgm_version(unit.image):
        body["version"] = version
    rc = FAILED_RC if at.failing else 0
    lines = [f"{MARK} begin node={node} pod={at.pack.pod} start={stamp(at.start)}"]
    lines += [f"{UUID_MARK} index={gpu} uuid={gpu_uuid(node, gpu)}" for gpu in range(gpus)]
    lines.append(json.dumps({"DCGM GPU Diagnostic": body}, indent="\t"))
    lines.append(f"nvcregen: dcgmi diag --run {burnin.plugin} exit={rc} seconds={at.seconds}")
    return Output("\n".join(lines) + "\n", rc, at.seconds, exit_line=False)


def gpu_uuid(node: str, gpu: int) -> str:
    """A GPU's UUID as `nvidia-smi` prints it (`GPU-8-4-4-4-12` hex), a hash of node and index."""
    digits = hashlib.sha256(f"{node}/{gpu}".encode()).hexdigest()[:32]
    parts = (digits[:8], digits[8:12], digits[12:16], digits[16:20], digits[20:])
    return "GPU-" + "-".join(parts)


MAKER: Maker = burnin_output  # what `rehearse/makers/registry.py` finds by the kind's name
