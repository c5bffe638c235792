"""`nvcregen ingest nvbandwidth`: a file's text or JSON form read, waived tests named.

Unnamed waived testcases (v0.7+ text) are named by the order given (the testcases the
run asked for, or an `-l` list), and where that leaves some unnamed by the version's
default order (a run of every testcase), whichever names more.

Refused (`IngestFormatError`, NVC700 by `ingest`): text holding neither an
`nvbandwidth Version:` line nor nvbandwidth's JSON object.
"""

from __future__ import annotations

from collections.abc import Sequence

from nvcregen.ingest.limits import matched
from nvcregen.ingest.lines import strip_prefix
from nvcregen.ingest.models import IngestFormatError
from nvcregen.kinds.nvbandwidth.jsonform import json_start, parse_json
from nvcregen.kinds.nvbandwidth.models import NvbwRun
from nvcregen.kinds.nvbandwidth.order import name_waived
from nvcregen.kinds.nvbandwidth.text import VERSION, parse_text

MARK = "@@nvcregen-nvbandwidth"  # the script's begin line (`ingest/beginline.py`'s form)


def parse_nvbandwidth(text: str, file: str, order: Sequence[str] | None = None) -> NvbwRun:
    """One nvbandwidth run from its text or `-j` output (whichever the file holds).

    Raises:
        IngestFormatError: Neither form is there, or what is there does not read.

    """
    # as `parse_text` reads each line: `kubectl --timestamps` and launcher prefixes gone
    if any(VERSION.match(strip_prefix(matched(line)).strip()) for line in text.splitlines()):
        return _named(parse_text(text, file), order)
    start = json_start(text)
    if start is None:
        raise IngestFormatError(
            "neither nvbandwidth's text (no `nvbandwidth Version:`) nor its -j JSON"
        )
    return _named(parse_json(text, file, start), order)


def _named(run: NvbwRun, order: Sequence[str] | None) -> NvbwRun:
    """Waived testcases named by `order`, else (a run of every testcase) the version's own."""
    first = name_waived(run, order)
    if order is None or all(t.name is not None for t in first.testcases):
        return first
    default = name_waived(run)
    unnamed = [sum(t.name is None for t in r.testcases) for r in (first, default)]
    return default if unnamed[1] < unnamed[0] else first
