"""NVCRE's readiness objects (`compile.readiness.engineparts.ReadinessObjects`, `OBJECTS`).

A Certification per stage, WorkloadRuns and their LogProfile (`layer.py`), which NVCRE
expands into runs itself; what it will make of each WorkloadRun, for review
(`preview.py`). No periodic layer: NVCRE states periodic re-testing as a non-goal.
"""

from __future__ import annotations

from collections.abc import Sequence

from nvcregen.core.manifest import Manifest
from nvcregen.engines.readiness.nvcre.layer import readiness_manifests
from nvcregen.engines.readiness.nvcre.preview import preview_manifests
from nvcregen.plan.model import TestUnit
from nvcregen.spec.v1alpha1 import Site


class NvcreObjects:
    """NVCRE's own objects, which it expands into TrainJobs; their preview."""

    def readiness(self, site: Site, test_units: Sequence[TestUnit]) -> list[Manifest]:
        """A Certification per stage of catalog tests, WorkloadRuns, the NCCL LogProfile."""
        return readiness_manifests(site, test_units)

    def periodic(self, site: Site, test_units: Sequence[TestUnit]) -> list[Manifest]:
        """None: `readiness.periodic` in NVCRE mode is NVC327, refused before compile."""
        return []

    def preview(self, readiness: Sequence[Manifest]) -> list[Manifest]:
        """The TrainingRuntime and TrainJob NVCRE will make of each WorkloadRun."""
        return preview_manifests(readiness)


OBJECTS = NvcreObjects()
