"""The `node` block of a catalog test."""

from __future__ import annotations

from nvcregen.spec.v1alpha1 import Duration, StrictModel


class NodeHealthParams(StrictModel):
    """A node-health run: `nvidia-smi -q -x` and the kernel's NVRM lines, judged by nvcregen."""

    expected_duration: Duration  # nvidia-smi on a healthy node, image start not included
