"""The `training` block of a catalog test."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from nvcregen.spec.v1alpha1 import Duration, StrictModel


class TrainingParams(StrictModel):
    """A checkpointed training run whose goodput is measured."""

    max_steps: Annotated[int, Field(ge=1)]
    save_interval: Annotated[int, Field(ge=1)]
    storage_size: str
    startup: Duration  # image start, model build and data loading before the first step
    step_time: Duration  # one training step, checkpoints aside
    checkpoint_save: Duration  # one synchronous checkpoint save
