"""`nvcregen ingest perftest`: the RDMA rails kind's `KindIngest` (`ingest/kindingest.py`).

The files are read by `files.py` (perftest's text or `--out_json`, a run per HCA) and
printed by its `render_perftest`; the command takes no option but `--format text|json`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from nvcregen.ingest.kindingest import IngestArgs, Ingested
from nvcregen.kinds.rdma.files import ingest_perftest, render_perftest


class PerftestCommand:
    """`nvcregen ingest perftest`: perftest's bandwidth output, as it is, no option."""

    name = "perftest"
    options: frozenset[str] = frozenset()

    def ingest(self, files: Sequence[Path], args: IngestArgs) -> Ingested:
        """Each perftest output read (`args` holds nothing: it takes no option)."""
        result = ingest_perftest(files)
        return Ingested(
            render_perftest(result), result.to_json(), result.diagnostics, result.failed
        )


INGEST = PerftestCommand()
