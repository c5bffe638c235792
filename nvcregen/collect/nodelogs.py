"""NVCRE mode's saved node-health logs: `--from DIR/logs/<namespace>/<name>.log`.

The same layout as trainer mode's saved logs (`collect/trainer.py`); only logs holding a
node-health begin marker are read, every name checked before it becomes an archive path.
Reading them from a cluster (the WorkloadRun's pods) is not done yet: save them with
`kubectl logs` into the folder.
"""

from __future__ import annotations

from pathlib import Path

from nvcregen.collect.model import CollectError
from nvcregen.core.kube import name_problem
from nvcregen.results.logruns import LOGS, RunLog
from nvcregen.results.nodehealthruns import is_node_health

SUFFIXES = frozenset({".log", ".txt"})
MAX_BYTES = 16 * 1024 * 1024  # as `ingest node` reads at most


def saved_node_health_logs(folder: Path, namespace: str) -> list[RunLog]:
    """The node-health logs under `folder/logs/` (none when there is no such folder).

    Raises:
        CollectError: A log whose path would not be `logs/<namespace>/<name>.log`, one
            over `MAX_BYTES`, or one that cannot be read.

    """
    root = folder / LOGS
    if not root.is_dir():
        return []
    found = []
    for file in sorted(p for p in root.rglob("*") if p.is_file() and p.suffix in SUFFIXES):
        parts = file.relative_to(root).parts
        where = parts[0] if len(parts) > 1 else namespace
        problem = name_problem("Pod", where, file.stem) if len(parts) <= 2 else "too deep"
        shown = file.relative_to(folder).as_posix()
        if problem is not None:
            raise CollectError(f"{shown}: not logs/<namespace>/<name>.log: {problem}")
        try:
            if file.stat().st_size > MAX_BYTES:
                raise CollectError(f"{shown}: larger than {MAX_BYTES // (1 << 20)} MiB")
            log = RunLog(where, file.stem, file.read_bytes())
        except OSError as exc:
            raise CollectError(f"{file}: cannot be read: {exc}") from exc
        if is_node_health(log):
            found.append(log)
    return found
