"""A trainer-mode site naming every test kind the rehearsal makes logs of (issue #34).

The shipped trainer site's two nodes, re-modelled as H100 (the catalog's nvbandwidth
floors hold for it; H20-3e has none) with 400 Gb/s NICs: node-health, DCGM level 1,
nvbandwidth, RDMA rails, link counters, burn-in and NCCL inside a node, NCCL and RDMA
rails across the pair (`rdma-rails-pair`: a server pod and a client pod, each with its
log), two rounds, with thresholds that a tenth of the expected NCCL figure fails.
"""

from __future__ import annotations

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
SITES = {"packed": "kinds-trainer", "perRun": "kinds-perrun"}  # packing -> site name
SINGLE = (
    "node-health", "dcgm-l1", "nvbandwidth", "rdma-rails", "link-counters", "burn-in",
    "nccl-all-reduce",
)  # fmt: skip
PAIR = ("nccl-all-reduce", "nccl-all-gather", "rdma-rails-pair")  # the two-node stage's


def site_text(packing: str = "packed") -> str:
    """The site, its runs packed (`packed`) or one a test (`perRun`)."""
    data = yaml.safe_load((ROOT / "sites" / "h20-3e-trainer.yaml").read_text())
    data["metadata"]["name"] = data["spec"]["cluster"] = SITES[packing]
    spec = data["spec"]
    spec["readiness"]["packing"] = packing
    pool = spec["nodePools"][0]
    pool.update(name="h100", model="H100")
    del pool["productLabels"]
    pool["nics"]["speed"] = "400Gb/s"
    pool["expect"] = {"driver": "580.159.04", "cuda": "13.0", "pcieGen": 5, "pcieWidth": 16}
    spec["readiness"]["rounds"] = 2
    spec["readiness"]["stages"] = [
        {"name": "single-node", "scope": "intra-node", "tests": list(SINGLE)},
        {"name": "two-node", "scope": "inter-node", "nodesPerJob": 2, "tests": list(PAIR)},
    ]  # fmt: skip
    spec["thresholds"] = [
        {"test": "nvbandwidth", "scope": "intra-node", "note": "the catalog's floors"},
        {"test": "nccl-all-reduce", "scope": "intra-node", "at": "1GiB", "busbw": ">= 300 GB/s"},
        {"test": "nccl-all-reduce", "scope": "inter-node", "at": "1GiB", "busbw": ">= 100 GB/s"},
    ]
    spec["gitops"]["path"] = f"out/{SITES[packing]}"
    return yaml.safe_dump(data, sort_keys=False)


def write_project(root: Path) -> Path:
    """Both sites under `root/sites/`; `root`."""
    (root / "sites").mkdir(parents=True, exist_ok=True)
    for packing, name in SITES.items():
        (root / "sites" / f"{name}.yaml").write_text(site_text(packing), encoding="utf-8")
    return root
