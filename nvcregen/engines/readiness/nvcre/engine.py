"""NVCRE as the readiness engine (`spec.readiness.engine: nvcre`)."""

from __future__ import annotations

from nvcregen.engineapi.protocol import ReadinessEngine


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


ENGINE = Nvcre()
