"""`nvcregen ingest nvbandwidth` (`ingest/kindingest.py`'s `KindIngest`): read, judge, render.

The files are read and judged by `files.py`, printed by `render.py`; `--order` names the
testcases v0.7+ waive unnamed, `--model` judges each GPU and pair.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from nvcregen.ingest.kindingest import IngestArgs, Ingested, IngestOptionError
from nvcregen.kinds.nvbandwidth.files import ingest_nvbandwidth, model_bounds
from nvcregen.kinds.nvbandwidth.render import render_nvbw


class NvbandwidthCommand:
    """`nvcregen ingest nvbandwidth` (`ingest/kindingest.py`'s `KindIngest`)."""

    name = "nvbandwidth"
    options = frozenset({"model", "order"})

    def ingest(self, files: Sequence[Path], args: IngestArgs) -> Ingested:
        """Each file read (waived testcases named by `args.order`); judged with `args.model`.

        Raises:
            IngestOptionError: `model` is no GPU model of the catalog.

        """
        model = args.model
        bounds = None if model is None else model_bounds(model)
        if model is not None and bounds is None:
            raise IngestOptionError(
                f"{model!r} is no GPU model of the catalog (`nvcregen catalog list`)", "--model"
            )
        result = ingest_nvbandwidth(files, args.order, bounds)
        return Ingested(render_nvbw(result), result.to_json(), result.diagnostics, result.failed)


INGEST = NvbandwidthCommand()
