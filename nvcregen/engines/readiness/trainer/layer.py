"""Trainer mode's readiness layer: every test's runs, packed or one per run (pure).

With `readiness.engine: trainer` NVCRE is not installed. With `readiness.packing: perRun`
each NCCL test of a stage gets a TrainingRuntime and a TrainJob per round and node group
(`trainer.py`), each per-node test (`TestKind.per_node`) a batch/v1 Job per round and node
(`nodejob.py`), each pair test (RDMA rails between two nodes) a TrainJob per round and
pair (`pairjobs.py`). With `packed`, a stage's tests that share nodes and an image run one
after the other in one run per round: a Job per chunk of nodes, a TrainJob per node group
(`packed.py`, `nvcregen.plan.packs`); a test that shares with none keeps runs of its own.
"""

from __future__ import annotations

from collections.abc import Sequence

from nvcregen.core.manifest import Manifest
from nvcregen.engines.readiness.trainer.nodejob import node_jobs
from nvcregen.engines.readiness.trainer.packed import packed_manifests
from nvcregen.engines.readiness.trainer.pairjobs import pair_manifests
from nvcregen.engines.readiness.trainer.trainjobs import nccl_manifests
from nvcregen.kindapi.registry import kind_of
from nvcregen.plan.model import TestUnit
from nvcregen.plan.packs import site_packs
from nvcregen.spec.v1alpha1 import Site


def trainer_manifests(site: Site, test_units: Sequence[TestUnit]) -> list[Manifest]:
    """Build the readiness layer of a site in trainer mode (component "readiness").

    Raises:
        ValueError: A test has no trainer-mode form (the semantic check NVC322 says so first).

    """
    manifests: list[Manifest] = []
    packs = site_packs(site, test_units)
    first = {id(p.first): p for p in packs}
    packed = {id(u) for p in packs for u in p.units}
    for unit in test_units:  # in plan order: a pack where its first test is
        if (pack := first.get(id(unit))) is not None:
            manifests += packed_manifests(site, pack)
        elif id(unit) in packed:
            continue
        elif kind_of(unit.test).collective:
            manifests += nccl_manifests(site, unit)
        elif kind_of(unit.test).pair:
            manifests += pair_manifests(site, unit)
        elif kind_of(unit.test).per_node:
            manifests += node_jobs(site, unit)
        else:
            raise ValueError(f"test {unit.test.name} has no trainer-mode form")
    return manifests
