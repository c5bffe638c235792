"""What launchers and the C library print when a test process dies (pure).

nccl-tests reports its own failures (`Test NCCL failure`, `Test failure`); a crash or a
launcher that gives up prints something else, and a run that shows one of these failed
even when its table looks complete:

- Open MPI: `mpirun noticed that process rank 1 with PID 0 on node node-b exited on
  signal 11 (Segmentation fault).` (sometimes wrapped before `exited`), `mpirun
  detected that one or more processes exited with non-zero status`, `ORTE was unable to
  reliably start one or more daemons`, and the signal handler's `[node-b:01234] Signal:
  Segmentation fault (11)`;
- Slurm: `srun: error: node-b: task 1: Segmentation fault (core dumped)`, `... Exited
  with exit code 1`;
- a shell: `Segmentation fault (core dumped)`, `Aborted (core dumped)`, `Killed`;
- ssh, as mpirun or the MPI operator uses it: `ssh: connect to host node-b port 22:
  Connection refused`.
"""

from __future__ import annotations

import re

_MESSAGES = (
    re.compile(
        r"\b(?:mpirun|mpiexec|prterun) noticed that process rank \d+ with PID \d+ on node"
        r" \S+?(?: exited on signal \d+ \([^)]{0,200}\))?\.?$"
    ),
    re.compile(r"\b(?:mpirun|mpiexec|prterun) detected that one or more processes exited"),
    re.compile(r"\b(?:ORTE|PRTE) (?:was unable to reliably start|has lost communication)"),
    re.compile(r"^\[[^\]\s]+:\d+\] Signal: \S.*$"),
    re.compile(r"\bsrun: error: \S+: tasks? [\d,\-\[\]]+: (?!Exited with exit code 0\b)\S.*$"),
    re.compile(r"\bssh: connect to host \S+ port \d+: \S.*$"),
    re.compile(r"^(?:.*?line \d+: +\d+ )?(?:Segmentation fault|Aborted|Killed|Bus error)"
               r"(?: +\(core dumped\))?(?: +\S.*)?$"),
)  # fmt: skip
_WRAPPED = re.compile(r"^exited on signal \d+ \([^)]*\)\.?$")


def launcher_failure(raw: str, line: str) -> str | None:
    """The failure a launcher or the C library reports on this line, if it does.

    Args:
        raw: The line as captured (`srun: error: node-b: ...` keeps its node there).
        line: The same line with launcher prefixes removed.

    Returns:
        The message as printed (blanks trimmed; the captured form when it matches), or
        None.

    """
    for text in (raw.strip(), line.strip()):
        if any(pattern.search(text) for pattern in _MESSAGES):
            return text
    return None


def continues_failure(line: str) -> bool:
    """Whether a line is the second half of a wrapped `mpirun noticed ...` message."""
    return _WRAPPED.match(line.strip()) is not None
