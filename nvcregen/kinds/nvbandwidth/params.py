"""The `nvbandwidth` block of a catalog test."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, model_validator

from nvcregen.spec.v1alpha1 import Bandwidth, Duration, StrictModel

TESTCASE = r"^[a-z][a-z0-9_]{0,63}$"  # nvbandwidth's testcase names (`nvbandwidth -l`)


class NvbandwidthFloor(StrictModel):
    """The least bandwidth one GPU model must show, per direction, and where it comes from."""

    model: str
    """The GPU model (`catalog/hardware/`)."""
    host_to_device: Bandwidth
    """Every GPU's one-way copy from the host."""
    device_to_host: Bandwidth
    """Every GPU's one-way copy to the host."""
    device_to_device: Bandwidth | None = None
    """Every ordered pair of GPUs, one way (read or write); none for GPUs that are no peers."""
    sources: list[str] = Field(min_length=1)
    """Where each figure comes from."""


class NvbandwidthParams(StrictModel):
    """An nvbandwidth run on one node with all its GPUs."""

    testcases: list[Annotated[str, Field(pattern=TESTCASE)]] = Field(min_length=1)
    buffer_size_mib: Annotated[int, Field(ge=1, le=65536)] = 512  # `-b`, in MiB
    iterations: Annotated[int, Field(ge=1, le=1000)] = 3  # `-i`: samples per testcase
    binary: Annotated[str, Field(pattern=r"^[-_./a-zA-Z0-9]{1,255}$")] = "nvbandwidth"
    expected_duration: Duration  # every testcase on a healthy node, image start not included
    floors: list[NvbandwidthFloor] = Field(default_factory=list)

    @model_validator(mode="after")
    def _each_once(self) -> NvbandwidthParams:
        """A testcase, and a model's floor, is named once."""
        for what, names in (
            ("testcase", self.testcases),
            ("model in floors", [f.model for f in self.floors]),
        ):
            twice = sorted({n for n in names if names.count(n) > 1})
            if twice:
                raise ValueError(f"each {what} is named once (twice: {', '.join(twice)})")
        return self

    def floor(self, model: str) -> NvbandwidthFloor | None:
        """The floor of a GPU model, if the catalog states one."""
        return next((f for f in self.floors if f.model == model), None)
