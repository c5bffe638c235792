"""Trainer mode's readiness objects (`compile.readiness.engineparts.ReadinessObjects`, `OBJECTS`).

Every run written out: TrainingRuntimes and TrainJobs (`trainjobs.py`, `pairjobs.py`),
per-node Jobs (`nodejob.py`), packed runs (`packed.py`), put together by `layer.py`; the
periodic layer's CronJobs (`periodic.py`). Nothing to preview: no engine expands them.
"""

from __future__ import annotations

from collections.abc import Sequence

from nvcregen.core.manifest import Manifest
from nvcregen.engines.readiness.trainer.layer import trainer_manifests
from nvcregen.engines.readiness.trainer.periodic import periodic_manifests
from nvcregen.plan.model import TestUnit
from nvcregen.spec.v1alpha1 import Site


class TrainerObjects:
    """TrainJobs and Jobs nvcregen writes itself, and the periodic CronJobs."""

    def readiness(self, site: Site, test_units: Sequence[TestUnit]) -> list[Manifest]:
        """Every test's runs, packed or one per round and node group (or node)."""
        return trainer_manifests(site, test_units)

    def periodic(self, site: Site, test_units: Sequence[TestUnit]) -> list[Manifest]:
        """The pods' PriorityClass and a CronJob per periodic pack and chunk ([] without)."""
        return periodic_manifests(site, test_units)

    def preview(self, readiness: Sequence[Manifest]) -> list[Manifest]:
        """None: every object that runs a test is in the readiness layer already."""
        return []


OBJECTS = TrainerObjects()
