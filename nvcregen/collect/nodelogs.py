"""NVCRE mode's saved node-health logs: `--from DIR/logs/<namespace>/<name>.log`.

The same layout as trainer mode's saved logs (`engines/readiness/trainer/collect.py`);
only logs holding a node-health begin marker are read, every name checked before it
becomes an archive path.
From a cluster, `collect --context` reads them from the pods of NVCRE's TrainJobs
(`engines/readiness/nvcre/collect.py`).
"""

from __future__ import annotations

from pathlib import Path

from nvcregen.collect.model import CollectError
from nvcregen.collect.source import NOT_REGULAR, SAME_RUN, read_regular, regular_files
from nvcregen.core.kube import name_problem
from nvcregen.results.logruns import LOGS, RunLog
from nvcregen.results.nodekinds import is_node_log

SUFFIXES = frozenset({".log", ".txt"})
MAX_BYTES = 16 * 1024 * 1024  # as `ingest node` reads at most


def saved_node_health_logs(folder: Path, namespace: str) -> list[RunLog]:
    """The node-health logs under `folder/logs/` (none when there is no such folder).

    Read as trainer mode reads its logs: regular files only, opened without following a
    link (NVC710), and two logs of one name (`x.log`, `x.txt`) refused (NVC711): one
    would be judged and the other archived under that name.

    Raises:
        CollectError: A log whose path would not be `logs/<namespace>/<name>.log`, a
            link, two logs of one name, one over `MAX_BYTES`, or one that cannot be read.

    """
    root = folder / LOGS
    if root.is_symlink():
        raise CollectError(f"{LOGS}: error[{NOT_REGULAR}]: a symbolic link; nothing is followed")
    if not root.is_dir():
        return []
    files, problems = regular_files(root, SUFFIXES)
    found: list[RunLog] = []
    names: dict[tuple[str, str], str] = {}
    for file in files:
        parts = file.relative_to(root).parts
        where = parts[0] if len(parts) > 1 else namespace
        problem = name_problem("Pod", where, file.stem) if len(parts) <= 2 else "too deep"
        shown = file.relative_to(folder).as_posix()
        if problem is not None:
            raise CollectError(f"{shown}: not logs/<namespace>/<name>.log: {problem}")
        if (where, file.stem) in names:
            problems.append(
                f"{shown}: error[{SAME_RUN}]: {names[where, file.stem]} is the log of the same"
                f" run ({where}/{file.stem}); keep one of them"
            )
            continue
        names[where, file.stem] = shown
        try:
            if file.stat().st_size > MAX_BYTES:
                raise CollectError(f"{shown}: larger than {MAX_BYTES // (1 << 20)} MiB")
            log = RunLog(where, file.stem, read_regular(file))
        except OSError as exc:
            problems.append(f"{shown}: cannot be read: {exc.strerror or exc}")
            continue
        if is_node_log(log.data):
            found.append(log)
    if problems:
        raise CollectError("\n".join(sorted(set(problems))))
    return found
