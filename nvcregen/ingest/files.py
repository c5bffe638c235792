"""`nvcregen ingest`: read raw output files with a kind's reader, say which could not be read.

Every file that parses gives runs, whatever their status (a failed run is data). A file
that cannot be read, or is not the kind of output asked for, gives an NVC700 diagnostic
at `file:1:1` and the command exits 2 after printing what the other files held. A file
that breaks a bound of `limits.py` (a number too long, JSON nested too deeply, a
measurement that is `inf` or `nan`, JSON that does not decode) gets that bound's code
(NVC713-NVC716), at its line when the reader knows it. A file, pipe or device holding
more than `MAX_LOG_BYTES` is NVC700 too, read no further than one byte past the cap.
Which reader, and what a file that is no such output should have been, is the kind's
(`ingest nccl`'s and `ingest dcgm`'s `files.py` in their kinds' packages).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

from nvcregen.core.errors import Diagnostic
from nvcregen.ingest.readlog import Hints, read_logs

LIMIT = "no nccl-tests or DCGM output holds this: the file is damaged or was not made by them"
TOO_LARGE = (
    "no nccl-tests or DCGM log comes close (Kubernetes keeps 10 MiB of a pod's log by"
    " default): give the log itself, not a stream or device that never ends"
)
R = TypeVar("R")


def read_files(
    paths: Sequence[Path], parse: Callable[[str, str], list[R]], output: str
) -> tuple[list[R], list[Diagnostic]]:
    """Every run `parse` reads in the files, and one error per file it could not read.

    Args:
        paths: The files, in the order given; each is named in its runs as given.
        parse: The kind's reader (`parse(text, name)`).
        output: The hint of a file that is no such output (what to give instead).

    """
    found, diagnostics = read_logs(paths, parse, Hints(output, too_large=TOO_LARGE, limit=LIMIT))
    return [run for runs in found for run in runs], diagnostics
