"""Trainer-mode sites and helpers for the trainer-mode tests.

`SHIPPED` is `sites/h20-3e-trainer.yaml`, the field report's two H20-3e nodes with
`readiness.engine: trainer` and `packing: packed`; `EXAMPLE` its copy with one run per test,
node and round (`packing: perRun`, tests/fixtures/perrun/), which most trainer-mode tests read;
`trainer_text()` turns a factory site (`sitefactory`) into a
trainer-mode one. Lives in `tests/` next to `sitefactory.py`, for the same reason.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from sitefactory import FILE, catalog, edit, parse

from nvcregen.compile.postprocess import postprocess
from nvcregen.core.manifest import Manifest
from nvcregen.engines.readiness.trainer.layer import trainer_manifests
from nvcregen.plan.resolve import plan

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = ROOT / "sites" / "h20-3e-trainer.yaml"
EXAMPLE = ROOT / "tests" / "fixtures" / "perrun" / "h20-3e-trainer.yaml"


def without_packing(text: str) -> str:
    """A site's text without its `packing:` line and the comment lines just above it."""
    lines = text.splitlines(keepends=True)
    (at,) = [i for i, line in enumerate(lines) if line.strip().startswith("packing:")]
    start = at
    while start > 0 and lines[start - 1].strip().startswith("#"):
        start -= 1
    return "".join(lines[:start] + lines[at + 1 :])


Obj = dict[str, Any]

SELECTOR_POOL = """\
- name: gpu
  model: H100
  selector: {node.kubernetes.io/instance-type: h100-8x}
  nodeCount: 4
  nics: {count: 2, fabric: ib, speed: 400Gb/s, hcas: [mlx5_0, mlx5_1], resourceName: rdma/ib}
"""
NCCL_ONLY = """\
- name: node
  scope: intra-node
  tests: [nccl-all-reduce]
- name: fabric
  scope: inter-node
  nodesPerJob: 2
  tests: [nccl-all-reduce]
"""


def example_text() -> str:
    """The text of the example trainer-mode site."""
    return EXAMPLE.read_text(encoding="utf-8")


@cache
def example_manifests() -> tuple[Manifest, ...]:
    """The example site's readiness layer, compiled once per session."""
    return tuple(compiled(example_text()))


def trainer_text(text: str) -> str:
    """Turn a factory site into a trainer-mode one."""
    return edit(text, "  readiness:\n", "  readiness:\n    engine: trainer\n")


def compiled(text: str) -> list[Manifest]:
    """The trainer-mode readiness layer of a site, labelled and annotated as rendered."""
    site, _ = parse(text)
    return postprocess(trainer_manifests(site, plan(site, catalog())), site, FILE)


def of_kind(found: list[Manifest], kind: str, test: str | None = None) -> list[Obj]:
    """The objects of one kind (and test, if given)."""
    return [
        m.obj
        for m in found
        if m.kind == kind
        and (test is None or m.obj["metadata"]["labels"]["nvcregen.io/test"] == test)
    ]


def stage_of(obj: Obj) -> str:
    """The stage an object belongs to."""
    return str(obj["metadata"]["labels"]["nvcregen.io/stage"])


def jobs_named(runtime: Obj) -> dict[str, Obj]:
    """A TrainingRuntime's replicated jobs by name."""
    return {j["name"]: j for j in runtime["spec"]["template"]["spec"]["replicatedJobs"]}


def pinned_nodes(pod_spec: Obj) -> list[str]:
    """The nodes a pod spec's required node affinity names, a term each (with the product).

    The API server takes one value per `metadata.name` requirement, so each node is a term.
    """
    terms = pod_spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"
    ]
    found = []
    for term in terms:
        (field,) = term["matchFields"]
        assert (field["key"], field["operator"]) == ("metadata.name", "In")
        assert term["matchExpressions"][0]["values"] == ["NVIDIA-H20-3e"]
        (node,) = field["values"]
        found.append(node)
    return found
