"""Trainer mode as the readiness engine (`spec.readiness.engine: trainer`)."""

from __future__ import annotations

from nvcregen.engineapi.protocol import ReadinessEngine


class Trainer(ReadinessEngine):
    """No NVCRE: TrainJobs and Jobs nvcregen writes, admitted by Kueue, read from pod logs."""

    name = "trainer"
    installs_nvcre = False
    writes_runs = True
    separate_launcher = False  # the launcher runs as node 0
    taint_selectors = False
    attaches_pod_network = True
    gang_scheduler = False
    diagnose_groups = False


ENGINE = Trainer()
