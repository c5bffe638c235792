"""`nvcregen ingest burnin FILE... [--model M]`: read each burn-in, judge it, say what it holds.

Each file is read up to `MAX_LOG_BYTES` (`readlog.py`) as `dcgmi diag` output and its
stress test taken apart by GPU (`reader.py`); with `--model`, each GPU is judged against
the catalog's expectation of that model (`judge.py`). A file that is no `dcgmi
diag` output, or one without a stress test, is NVC700 (a broken bound its own code,
NVC713-NVC716) and `ingest` exits 2.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from nvcregen.catalog.load import load_catalog
from nvcregen.core.errors import Diagnostic
from nvcregen.ingest.kindingest import IngestArgs, Ingested, IngestOptionError
from nvcregen.ingest.models import Json
from nvcregen.ingest.readlog import Hints, read_logs
from nvcregen.kinds.burnin.judge import Bounds, BurnInVerdict, judge
from nvcregen.kinds.burnin.kind import KIND as BURNIN
from nvcregen.kinds.burnin.params import BurnInParams
from nvcregen.kinds.burnin.reader import BurnInRun, parse_burnin

CATALOG_TEST = "burn-in"
_HINT = (
    "give the output of `dcgmi diag -r targeted_stress --json --verbose` (or its text"
    " table): a burn-in is DCGM's targeted or SM stress result"
)


@dataclass(frozen=True)
class BurnInIngest:
    """What `ingest burnin` found: runs, their verdicts (with --model), diagnostics."""

    runs: tuple[BurnInRun, ...]
    verdicts: tuple[BurnInVerdict | None, ...]
    diagnostics: tuple[Diagnostic, ...]

    @property
    def failed(self) -> bool:
        """A run failed or was cut off, or a verdict did not pass (`ingest` exits 1)."""
        return any(r.status != "ok" for r in self.runs) or any(
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


def bounds_of(model: str, params: BurnInParams | None = None) -> Bounds | None:
    """A GPU model's floor and peak (`params`', else the catalog's burn-in test's).

    The model is named as the catalog's hardware names it (case and spaces ignored).
    """
    catalog = load_catalog()
    hardware = catalog.find_hardware(model)
    if params is None:
        test = catalog.tests.get(CATALOG_TEST)
        params = None if test is None else BURNIN.block_or_none(test)
    if params is None or hardware is None:
        return None
    found = params.expectation(hardware.model)
    if found is None:
        return None
    return Bounds(hardware.model, params.floor_of(found), found.peak_gflops, params.precision)


def ingest_burnin(paths: Sequence[Path], bounds: Bounds | None = None) -> BurnInIngest:
    """Read burn-in outputs; judge each against `bounds` when given."""
    runs, diagnostics = read_logs(paths, parse_burnin, Hints(_HINT, unreadable=_HINT))
    verdicts = tuple(None if bounds is None else judge(r, bounds) for r in runs)
    return BurnInIngest(tuple(runs), verdicts, tuple(diagnostics))


def render_burnin(result: BurnInIngest) -> str:
    """A line a run, then a line a GPU: its figure and, when judged, its outcome."""
    lines = []
    for run, verdict in zip(result.runs, result.verdicts, strict=True):
        version = f" DCGM {run.dcgm_version}" if run.dcgm_version else ""
        lines.append(f"{run.file}: {run.test or 'no stress test'}{version} {run.status}\n")
        if verdict is None or run.status == "truncated":  # a verdict's problems name them
            lines += [f"  DCGM: {e}\n" for e in run.errors]
        outcomes = {} if verdict is None else {g.gpu: g for g in verdict.gpus}
        for load in run.gpus:
            shown = "no figure" if load.gflops is None else f"{load.gflops:g} GFLOPS ({load.basis})"
            judged = outcomes.get(load.gpu)
            said = (
                ""
                if judged is None
                else f" {judged.outcome}" + (f": {judged.why}" if judged.why else "")
            )
            lines.append(f"  GPU {load.gpu}: {shown}, DCGM {load.result or '?'}{said}\n")
        if verdict is not None:
            listed = {g.gpu for g in run.gpus}
            lines += [f"  {g.why}\n" for g in verdict.gpus if g.gpu not in listed]
            lines += [f"  {p}\n" for p in verdict.problems]
            lines.append(f"  verdict: {'passed' if verdict.passed else 'failed'}\n")
    return "".join(lines)


class BurnInCommand:
    """`nvcregen ingest burnin` (`ingest/kindingest.py`'s `KindIngest`): `--model` judges."""

    name = "burnin"
    options = frozenset({"model"})

    def ingest(self, files: Sequence[Path], args: IngestArgs) -> Ingested:
        """Each file read; with `args.model`, each GPU judged against its catalog figures.

        Raises:
            IngestOptionError: The catalog's burn-in test has no figures for `model`.

        """
        model = args.model
        bounds = None if model is None else bounds_of(model)
        if model is not None and bounds is None:
            raise IngestOptionError(
                f"{model!r} has no burn-in expectation in the catalog (catalog/tests/burn-in.yaml)",
                "--model",
            )
        result = ingest_burnin(files, bounds)
        return Ingested(render_burnin(result), result.to_json(), result.diagnostics, result.failed)


INGEST = BurnInCommand()
