"""Judge a burn-in GPU by GPU against its model's floor and datasheet peak (pure).

Each GPU the node has (ids 0..gpus-1; with no count, the GPUs DCGM listed) gets one
verdict: `failed` under the floor (NVC768), with a clocks event (NVC766) or another DCGM
error naming it; `impossible` above the model's peak at the test's precision (NVC765:
no GPU computes that fast, the figure is no evidence); `missing` without any figure or
error (NVC767: a log that does not show every GPU is no evidence, never a pass);
`passed` otherwise. A GPU DCGM lists outside the node's count fails the run.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from nvcregen.ingest.models import Json
from nvcregen.kinds.burnin import codes
from nvcregen.kinds.burnin.reader import BurnInRun, GpuLoad

IMPOSSIBLE = codes.NVC765.code
THROTTLED = codes.NVC766.code
MISSING = codes.NVC767.code
UNDER_FLOOR = codes.NVC768.code
Outcome = Literal["passed", "failed", "impossible", "missing"]


@dataclass(frozen=True)
class Bounds:
    """A model's floor and peak in GFLOPS, at the test's precision."""

    model: str
    floor: float
    peak: float
    precision: str = "fp32"


@dataclass(frozen=True)
class GpuVerdict:
    """One GPU's outcome, its figure and why, in words (`code: why`)."""

    gpu: int
    outcome: Outcome
    gflops: float | None
    why: str = ""

    def to_json(self) -> Json:
        """The JSON object of this verdict."""
        return {"gpu": self.gpu, "outcome": self.outcome, "gflops": self.gflops, "why": self.why}


@dataclass(frozen=True)
class BurnInVerdict:
    """Every GPU's verdict and the run's own problems."""

    gpus: tuple[GpuVerdict, ...]
    problems: tuple[str, ...] = ()

    @property
    def passed(self) -> bool:
        """Every GPU passed and the run has no problem."""
        return not self.problems and all(g.outcome == "passed" for g in self.gpus)

    @property
    def evidence(self) -> bool:
        """Whether the log judges its node: a failed GPU does, a GPU with no figure not."""
        failed = any(g.outcome in ("failed", "impossible") for g in self.gpus) or self.problems
        return bool(failed) or not any(g.outcome == "missing" for g in self.gpus)

    def to_json(self) -> Json:
        """The JSON object of this verdict."""
        return {
            "passed": self.passed,
            "evidence": self.evidence,
            "gpus": [g.to_json() for g in self.gpus],
            "problems": list(self.problems),
        }


def judge(run: BurnInRun, bounds: Bounds, gpus: int | None = None) -> BurnInVerdict:
    """Each GPU of the node (`gpus`, else those DCGM lists) against the model's bounds."""
    listed = {g.gpu: g for g in run.gpus}
    expected = range(gpus) if gpus is not None else sorted(listed)
    # A cut log's note says only that it was cut: its GPUs without a figure are no evidence.
    problems = [] if run.status == "truncated" else [f"DCGM: {e}" for e in run.errors]
    if not run.test:
        problems.append("DCGM ran no stress test")
    extra = sorted(set(listed) - set(expected))
    if extra:
        names = ", ".join(f"GPU {g}" for g in extra)
        problems.append(f"{names}: not one of the node's {gpus} GPUs")
    verdicts = tuple(_gpu(listed.get(n), n, bounds, run.where(n)) for n in expected)
    return BurnInVerdict(verdicts, tuple(problems))


def _gpu(load: GpuLoad | None, number: int, bounds: Bounds, where: str) -> GpuVerdict:
    if load is None:
        return GpuVerdict(number, "missing", None, f"{MISSING}: {where}: DCGM names it nowhere")
    value = load.gflops
    if value is None:
        outcome: Outcome = "failed" if load.throttled or load.errors else "missing"
        word = f" (DCGM: {load.result})" if load.result else ""
        said = f"{MISSING}: {where}: no GFLOPS figure{word}: not evidence"
        return GpuVerdict(number, outcome, None, _trouble(load, where) or said)
    outcome, why = _judged(load, value, where, bounds)
    return GpuVerdict(number, outcome, value, why)


def _trouble(load: GpuLoad, where: str) -> str:
    """A clocks event (NVC766) or another DCGM error naming the GPU, "" for none."""
    if load.throttled:
        return f"{THROTTLED}: {where}: {load.throttled[0]}"
    return f"{where}: {load.errors[0]}" if load.errors else ""


def _judged(load: GpuLoad, value: float, where: str, bounds: Bounds) -> tuple[Outcome, str]:
    """A figure against the peak (first: an impossible figure is no evidence) and floor."""
    if value > bounds.peak:
        return "impossible", (
            f"{IMPOSSIBLE}: {where}: {value:g} GFLOPS is above the {bounds.model}'s"
            f" {bounds.precision} peak {bounds.peak:g} GFLOPS: not evidence"
        )
    if trouble := _trouble(load, where):
        return "failed", trouble
    if value < bounds.floor:
        return "failed", (
            f"{UNDER_FLOOR}: {where}: {value:g} GFLOPS ({load.basis}), under the floor"
            f" {bounds.floor:g} GFLOPS"
        )
    if load.result == "Fail":
        return "failed", f"{where}: DCGM failed it at {value:g} GFLOPS"
    return "passed", ""
