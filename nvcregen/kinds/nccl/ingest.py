"""`nvcregen ingest nccl FILE... [--at SIZE]`: read nccl-tests outputs, summarize like rounds.

Each file is read up to `MAX_LOG_BYTES` by the nccl-tests reader (`reader.py`, through
`files.py`): its runs, their rows, the transports NCCL used, and the
medians over like rounds (`--at`: one message size only). A file that is no nccl-tests
output is NVC700 (a broken bound its own code, NVC713-NVC716) and `ingest` exits 2; a
failed run exits 1. A size `--at` cannot read is a usage error naming it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from nvcregen.core.units import UnitError, parse_size
from nvcregen.ingest.kindingest import IngestArgs, Ingested, IngestOptionError
from nvcregen.kinds.nccl.files import ingest_nccl
from nvcregen.kinds.nccl.render import render_nccl


class NcclCommand:
    """`nvcregen ingest nccl` (`ingest/kindingest.py`'s `KindIngest`): `--at` picks a size."""

    name = "nccl"
    options = frozenset({"at"})

    def ingest(self, files: Sequence[Path], args: IngestArgs) -> Ingested:
        """Each file read as nccl-tests output; the summary at `args.at` when given.

        Raises:
            IngestOptionError: `--at` is no size (`1GiB`, `8B`...).

        """
        try:
            size = None if args.at is None else parse_size(args.at)
        except UnitError as exc:
            hint = f" ({exc.hint})" if exc.hint else ""
            raise IngestOptionError(exc.message + hint, "--at") from exc
        result = ingest_nccl(files, size)
        return Ingested(render_nccl(result), result.to_json(), result.diagnostics, result.failed)


INGEST = NcclCommand()
