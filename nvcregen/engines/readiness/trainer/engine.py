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

    def run_object(self, mode: str, gang: bool) -> tuple[str, str]:
        """A TrainJob when the pods start together (JobSet gangs them), else a Job."""
        return ("trainer.kubeflow.org", "TrainJob") if gang else ("batch", "Job")


ENGINE = Trainer()
