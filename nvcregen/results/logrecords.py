"""What a saved pod log is, and what the archive records of it (`summary.json`)."""

from __future__ import annotations

from dataclasses import dataclass

from nvcregen.results.models import StatusModel

LOGS = "logs"


@dataclass(frozen=True)
class RunLog:
    """One saved pod log: its namespace, its name (TrainJob, Job or pod) and its bytes.

    `node` is the node the API said the pod was scheduled on (`spec.nodeName`), when the
    log was read from a cluster; "" for a saved log. `pod` is the pod a packed run's
    section names (`packlogs.py`): its NCCL ranks ran there; "" for a whole log. `line`
    is the line of the log a section starts after (its begin line), 0 for a whole log.
    """

    namespace: str
    name: str
    data: bytes
    node: str = ""
    pod: str = ""
    line: int = 0

    @property
    def path(self) -> str:
        """Where it goes in the archive: logs/<namespace>/<name>.log."""
        return f"{LOGS}/{self.namespace}/{self.name}.log"


class LogRecord(StatusModel):
    """What one log held, for summary.json."""

    path: str
    sha256: str = ""
    stage: str = ""
    test: str = ""
    run: str = ""
    round: int = 0
    group: str = ""
    nodes: tuple[str, ...] = ()
    kind: str = ""
    status: str = ""
    job_failed: bool = False
    errors: tuple[str, ...] = ()
    transports: tuple[str, ...] = ()
    gdrdma: bool = False
    versions: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    unjudged: tuple[str, ...] = ()  # node-health checks not judged (NVC825, NVC800), with hints
    hosts: tuple[str, ...] = ()
    pod_node: str = ""
    models: tuple[str, ...] = ()
    cuda_driver: tuple[str, ...] = ()
    finished_at: str | None = None
