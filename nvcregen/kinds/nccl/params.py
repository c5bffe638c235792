"""The `nccl` block of a catalog test."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from nvcregen.spec.v1alpha1 import Size, StrictModel


class NcclParams(StrictModel):
    """nccl-tests parameters for a collective."""

    binary: str
    test_type: str
    min_bytes: Size = "8B"
    max_bytes: Size = "16GiB"
    step_factor: Annotated[int, Field(ge=2)] = 2
    iterations: Annotated[int, Field(ge=1)] = 100
    cycles: Annotated[int, Field(ge=1)] = 10
