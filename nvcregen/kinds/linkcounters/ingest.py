"""`nvcregen ingest link-counters`: the kind's `KindIngest` (`ingest/kindingest.py`).

The files are read by `files.py` (snapshot logs, each port's growth), printed by its
`render_link_counters`; the command takes no option but `--format text|json`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from nvcregen.ingest.kindingest import IngestArgs, Ingested
from nvcregen.kinds.linkcounters.files import ingest_link_counters, render_link_counters


class LinkCountersCommand:
    """`nvcregen ingest link-counters` (`ingest/kindingest.py`'s `KindIngest`): no options."""

    name = "link-counters"
    options: frozenset[str] = frozenset()

    def ingest(self, files: Sequence[Path], args: IngestArgs) -> Ingested:
        """Each snapshot log read (`args` holds nothing: it takes no option)."""
        result = ingest_link_counters(files)
        return Ingested(
            render_link_counters(result), result.to_json(), result.diagnostics, result.failed
        )


INGEST = LinkCountersCommand()
