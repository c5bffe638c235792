"""The `burnin` block of a catalog test: the load, its duration, each model's expectations."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from nvcregen.spec.v1alpha1 import Duration, StrictModel

Precision = Literal["fp32", "fp64"]  # SGEMM or DGEMM (`targeted_stress.use_dgemm`)


class BurnInExpectation(StrictModel):
    """What one GPU model sustains under the load, at the test's precision, and why.

    `target_gflops` is the load DCGM is asked to hold (`targeted_stress.target_stress`);
    a GPU passes at `min_ratio` of it. `peak_gflops` is the datasheet's peak at that
    precision: no GPU of the model computes faster, so a figure above it is no evidence.
    """

    model: str
    """The GPU model (`catalog/hardware/`)."""
    target_gflops: Annotated[float, Field(gt=0, le=1e7)]
    """The GEMM rate DCGM holds each GPU at, in GFLOPS."""
    peak_gflops: Annotated[float, Field(gt=0, le=1e7)]
    """The datasheet's peak rate at the test's precision, in GFLOPS."""
    sources: list[str] = Field(min_length=1)
    """Where each figure comes from."""


class BurnInParams(StrictModel):
    """A sustained load on every GPU of one node, judged GPU by GPU."""

    plugin: Literal["targeted_stress"] = "targeted_stress"
    duration: Duration  # the load on each GPU (`targeted_stress.test_duration`)
    precision: Precision = "fp32"
    min_ratio: Annotated[float, Field(gt=0, le=1)] = 0.95  # of the target, to pass
    setup: Duration  # DCGM's start and its deployment checks around the load
    expectations: list[BurnInExpectation] = Field(default_factory=list)

    @model_validator(mode="after")
    def _reachable(self) -> BurnInParams:
        """A model is named once, and no floor asks more than its model's peak."""
        names = [e.model for e in self.expectations]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ValueError(
                f"each model in expectations is named once (twice: {', '.join(twice)})"
            )
        for e in self.expectations:
            if self.floor_of(e) > e.peak_gflops:
                raise ValueError(
                    f"{e.model}: the floor {self.floor_of(e):g} GFLOPS ({self.min_ratio:g} of the"
                    f" target {e.target_gflops:g}) is above its {self.precision} peak"
                    f" {e.peak_gflops:g} GFLOPS: no GPU of that model could pass"
                )
        return self

    def floor_of(self, expectation: BurnInExpectation) -> float:
        """The least GFLOPS a GPU of that model must show: `min_ratio` of its target."""
        return self.min_ratio * expectation.target_gflops

    def expectation(self, model: str) -> BurnInExpectation | None:
        """A GPU model's expectation, if the catalog states one."""
        return next((e for e in self.expectations if e.model == model), None)
