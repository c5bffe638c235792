"""The watch's lists (nvcregen.rehearse.watch): live objects typed as the engine reads them.

Found by the rehearsal of the packed trainer site: a list's items of a built-in kind carry
no `apiVersion` or `kind` (a custom resource's do), so a listed Job had no `batch_Job`
health check, read Healthy at once, and each Argo CD wave of Jobs passed before its runs
ran (rounds 2 and 3 admitted while round 1 ran).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from nvcregen.rehearse.health import argocd_health
from nvcregen.rehearse.watch import RunState, Watch

ROOT = Path(__file__).resolve().parents[3]
SUSPENDED = {"conditions": [{"type": "Suspended", "status": "True", "reason": "JobSuspended"}]}


class ListingPlane:
    """A control plane answering each list with items as the API server gives them."""

    def request(self, method: str, path: str) -> tuple[int, dict[str, Any]]:
        assert method == "GET"
        if path.endswith("/jobs"):  # built-in: no apiVersion or kind in the items
            return 200, {"items": [{"metadata": {"name": "j"}, "spec": {}, "status": SUSPENDED}]}
        if path.endswith("/trainjobs"):
            item = {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob"}
            return 200, {"items": [{**item, "metadata": {"name": "t"}}]}
        return 200, {"items": []}


def test_listed_jobs_are_typed_so_their_health_check_holds_the_wave() -> None:
    run = RunState("readiness/x/job-j.yaml", "Job", "nvcre", "j", "step")
    snapshot = Watch(ListingPlane(), [run]).snapshot()  # type: ignore[arg-type]
    job = snapshot.get("Job", "nvcre", "j")
    assert job is not None and (job["apiVersion"], job["kind"]) == ("batch/v1", "Job")
    train_job = snapshot.get("TrainJob", "nvcre", "t")
    assert train_job is not None and train_job["apiVersion"] == "trainer.kubeflow.org/v1alpha1"
    checks = {"batch_Job": 'return {status = "Suspended", message = "queued"}'}
    assert argocd_health(checks, job).verdict == "waiting"  # the Job's own check, not none
