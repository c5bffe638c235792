"""The `dcgm` block of a catalog test."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from nvcregen.spec.v1alpha1 import Duration, StrictModel


class DcgmParams(StrictModel):
    """A DCGM diagnostic run."""

    level: Annotated[int, Field(ge=1, le=4)]
    needs_hostengine: bool = False
    expected_duration: Duration  # `dcgmi diag` on a healthy node, hostengine start not included
