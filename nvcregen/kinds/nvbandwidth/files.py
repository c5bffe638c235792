"""The nvbandwidth files `ingest` reads: each read bounded, judged, and what it holds.

Each file is read up to `MAX_LOG_BYTES` (`capped.py`), parsed as text or JSON, its
unnamed waived testcases named by `--order` (an `nvbandwidth -l` output) or its version's
default order, and, with `--model`, judged per GPU and pair against the catalog's floors
and ceilings of that model. A file that does not read is NVC700 (its bound's code,
NVC713-NVC716, where it breaks one) and `ingest` exits 2.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from nvcregen.catalog.load import Catalog, load_catalog
from nvcregen.core.errors import Diagnostic
from nvcregen.ingest.models import Json
from nvcregen.ingest.readlog import Hints, read_log, read_logs
from nvcregen.kinds.nvbandwidth.judge import RunVerdict, judge
from nvcregen.kinds.nvbandwidth.kind import KIND as NVBANDWIDTH
from nvcregen.kinds.nvbandwidth.models import NvbwRun
from nvcregen.kinds.nvbandwidth.order import parse_list
from nvcregen.kinds.nvbandwidth.params import NvbandwidthFloor, NvbandwidthParams
from nvcregen.kinds.nvbandwidth.physics import Ceilings, ceilings
from nvcregen.kinds.nvbandwidth.reader import parse_nvbandwidth
from nvcregen.plan.bandwidth import pcie_rate

_HINT = "give nvbandwidth's own output (its text, or its JSON with -j)"
_LIST_HINT = "give the output of `nvbandwidth -l` of the same version"


@dataclass(frozen=True)
class Bounds:
    """A model's floor (if the catalog states one) and ceilings, for judging."""

    model: str
    floor: NvbandwidthFloor | None
    ceilings: Ceilings
    asked: tuple[str, ...]


@dataclass(frozen=True)
class NvbwIngest:
    """What `ingest nvbandwidth` found: runs, their verdicts (with --model), diagnostics."""

    runs: tuple[NvbwRun, ...]
    verdicts: tuple[RunVerdict | None, ...]
    diagnostics: tuple[Diagnostic, ...]

    @property
    def failed(self) -> bool:
        """Whether a run is cut off or a verdict failed (`ingest` exits 1)."""
        return any(r.truncated for r in self.runs) or any(
            v is not None and not v.passed for v in self.verdicts
        )

    def to_json(self) -> Json:
        """`{"runs": [...]}`, each run with its `verdict` (null without --model)."""
        return {
            "runs": [
                {**run.to_json(), "verdict": None if v is None else v.to_json()}
                for run, v in zip(self.runs, self.verdicts, strict=True)
            ]
        }


def model_bounds(model: str, params: NvbandwidthParams | None = None) -> Bounds | None:
    """A GPU model's nvbandwidth floor and ceilings; None for a model the catalog lacks.

    The floor is `params`' (else the catalog's `nvbandwidth` test's). The host ceiling is
    the PCIe rate of the collectives' physics model (`plan.bandwidth.pcie_rate`) for the
    generation the catalog states; a model whose generation it does not state has none.
    """
    catalog = _catalog()
    hardware = catalog.find_hardware(model)
    if params is None:
        test = catalog.tests.get("nvbandwidth")
        params = None if test is None else NVBANDWIDTH.block_or_none(test)
    if hardware is None or params is None:
        return None
    gen = hardware.pcie_gen
    pcie = None if gen is None else pcie_rate(catalog.physics, gen)
    limits_of = ceilings(gen, pcie, hardware.nvlink_bandwidth)
    return Bounds(hardware.model, params.floor(hardware.model), limits_of, tuple(params.testcases))


@functools.cache
def _catalog() -> Catalog:
    """The packaged catalog, read once a process (a collect judges many logs)."""
    return load_catalog()


def ingest_nvbandwidth(
    paths: Sequence[Path], order_file: Path | None = None, bounds: Bounds | None = None
) -> NvbwIngest:
    """Read nvbandwidth outputs; judge them against `bounds` when given."""
    order = None
    if order_file is not None:
        order, problem = read_log(
            order_file, lambda text, _name: parse_list(text), _hints(_LIST_HINT)
        )
        if problem is not None:
            return NvbwIngest((), (), (problem,))
    runs, diagnostics = read_logs(
        paths, lambda text, name: parse_nvbandwidth(text, name, order), _hints(_HINT)
    )
    verdicts = tuple(
        None if bounds is None else judge(r, bounds.floor, bounds.ceilings, bounds.asked)
        for r in runs
    )
    return NvbwIngest(tuple(runs), verdicts, tuple(diagnostics))


def _hints(hint: str) -> Hints:
    """Nvbandwidth's readers give the one hint whatever went wrong."""
    return Hints(hint, unreadable=hint)
