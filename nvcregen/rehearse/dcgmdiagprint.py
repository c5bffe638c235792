"""Print `dcgmi diag --run N --json` as DCGM prints it, for the twin's pods (pure).

The layout is DCGM 3.x's and 4.x's JSON: a `DCGM GPU Diagnostic` object holding
`test_categories`, each a category and its tests, each test a list of results with the
GPUs they cover (`gpu_ids`) and a status; a failed result carries DCGM's `warnings`.
Level 1 runs the deployment checks; level 2 adds the integration (PCIe) and hardware
(GPU memory) plugins; level 3 adds the stress plugins (targeted stress, power, memory
bandwidth); level 4 adds pulse and EUD-like memory tests, as `dcgmi diag` documents them.
`nvcregen/ingest/dcgmdiag.py` reads it back.
"""

from __future__ import annotations

import json
import re

DEPLOYMENT = (
    "Denylist",
    "NVML Library",
    "CUDA Main Library",
    "Permissions and OS-related Blocks",
    "Persistence Mode",
    "Environmental Variables",
    "Page Retirement/Row Remap",
    "Graphics Processes",
    "Inforom",
)
# (category, test) each level adds to the one below it
BY_LEVEL = {
    2: (("Integration", "PCIe"), ("Hardware", "GPU Memory")),
    3: (
        ("Stress", "Targeted Stress"),
        ("Stress", "Targeted Power"),
        ("Stress", "Memory Bandwidth"),
    ),
    4: (("Hardware", "Memtest"), ("Hardware", "Pulse Test")),
}
FAILED_WARNING = "GPU {gpu}: Error details: a double-bit ECC error was detected (rehearsal)"


def dcgm_version(image: str) -> str:
    """The DCGM version an image's tag names (`dcgm:4.5.2-1-ubuntu22.04` -> 4.5.2), else ""."""
    found = re.search(r":(\d+\.\d+\.\d+)", image.split("@", 1)[0])
    return found[1] if found else ""


def diag_json(level: int, gpus: int, version: str, failed: bool = False) -> str:
    """The JSON `dcgmi diag --run level --json` prints for `gpus` GPUs.

    Every result passes; with `failed`, the level's last test fails on GPU 0 (the
    deployment checks' last one at level 1) with a warning saying why.
    """
    every = ",".join(str(g) for g in range(gpus))
    tests: dict[str, list[dict[str, object]]] = {
        "Deployment": [_test(name, every) for name in DEPLOYMENT]
    }
    for at in range(2, level + 1):
        for category, name in BY_LEVEL.get(at, ()):
            tests.setdefault(category, []).append(_test(name, every))
    if failed:
        last = list(tests.values())[-1][-1]
        results: list[dict[str, object]] = [
            {"gpu_ids": g, "status": "PASS"} for g in range(1, gpus)
        ]
        results.insert(
            0, {"gpu_ids": 0, "status": "FAIL", "warnings": [FAILED_WARNING.format(gpu=0)]}
        )
        last["results"] = results
    body: dict[str, object] = {
        "test_categories": [{"category": c, "tests": t} for c, t in tests.items()]
    }
    if version:
        body["version"] = version
    return json.dumps({"DCGM GPU Diagnostic": body}, indent="\t") + "\n"


def _test(name: str, gpus: str) -> dict[str, object]:
    return {"name": name, "results": [{"gpu_ids": gpus, "status": "PASS"}]}
