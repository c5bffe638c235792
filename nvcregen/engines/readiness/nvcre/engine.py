"""NVCRE as the readiness engine (`spec.readiness.engine: nvcre`)."""

from __future__ import annotations

from typing import Final

from nvcregen.engineapi.protocol import ReadinessEngine

GROUP: Final = "nvcre.nvidia.com"
# The object running a test, by the plan's mode: one the replay expands (`replay.py`)
RUN_OBJECTS: Final = {"category": (GROUP, "Certification"), "workloadrun": (GROUP, "WorkloadRun")}


class Nvcre(ReadinessEngine):
    """NVCRE installed; Certifications and WorkloadRuns, which it expands into runs."""

    name = "nvcre"
    installs_nvcre = True
    writes_runs = False
    separate_launcher = True
    taint_selectors = True
    attaches_pod_network = False
    gang_scheduler = True
    diagnose_groups = True

    def run_object(self, mode: str, gang: bool) -> tuple[str, str]:
        """A Certification (a test as one of its categories) or a WorkloadRun of its own."""
        return RUN_OBJECTS[mode]


ENGINE = Nvcre()
