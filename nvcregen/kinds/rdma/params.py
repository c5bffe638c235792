"""The `rdma` block of a catalog test."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from nvcregen.spec.v1alpha1 import Duration, Size, StrictModel


class RdmaParams(StrictModel):
    """A perftest bandwidth run on each HCA of a node, judged rail by rail.

    `floor` is the share of the NIC's line rate (the pool's `nics.speed`) a rail must
    reach at `messageSize`; the line rate itself is the ceiling no figure may pass.
    """

    tool: Literal["ib_write_bw", "ib_read_bw"] = "ib_write_bw"
    message_size: Size = "8MiB"
    use_cuda: bool = True  # GPUDirect RDMA: the buffers in the GPU on the NIC's NUMA side
    iterations: Annotated[int, Field(ge=1, le=1_000_000)] = 5000
    duration: Duration | None = None  # `-D`: seconds a rail runs, instead of `iterations`
    queue_pairs: Annotated[int, Field(ge=1, le=64)] = 1
    floor: Annotated[float, Field(gt=0, le=1)]  # of the line rate, at `messageSize`
    expected_duration: Duration  # every rail of a node, pod start not included
