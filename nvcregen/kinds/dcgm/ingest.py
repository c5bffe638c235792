"""`nvcregen ingest dcgm FILE...`: read each `dcgmi diag` output, say what it holds.

Each file is read up to `MAX_LOG_BYTES` by the `dcgmi diag` reader the dcgm and burn-in
kinds share (`ingest/dcgmdiag.py`, through `files.py`): its diagnostics, their
status, DCGM's errors. A file that is no `dcgmi diag` output is NVC700 (a broken bound
its own code, NVC713-NVC716) and `ingest` exits 2; a failed diagnostic exits 1.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from nvcregen.ingest.kindingest import IngestArgs, Ingested
from nvcregen.kinds.dcgm.files import ingest_dcgm
from nvcregen.kinds.dcgm.render import render_dcgm


class DcgmCommand:
    """`nvcregen ingest dcgm` (`ingest/kindingest.py`'s `KindIngest`): it takes no options."""

    name = "dcgm"
    options: frozenset[str] = frozenset()

    def ingest(self, files: Sequence[Path], args: IngestArgs) -> Ingested:
        """Each file read as `dcgmi diag` output (text table or JSON)."""
        result = ingest_dcgm(files)
        return Ingested(render_dcgm(result), result.to_json(), result.diagnostics, result.failed)


INGEST = DcgmCommand()
