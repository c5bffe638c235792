"""The dcgm kind: a fixed time per node, a hostengine for some levels."""

from __future__ import annotations

from typing import ClassVar

from nvcregen.core import units
from nvcregen.kinds.dcgm.params import DcgmParams
from nvcregen.kinds.protocol import FixedTime, KindTest, TestKind


class Dcgm(TestKind):
    """DCGM diagnostics."""

    name: ClassVar[str] = "dcgm"
    params = DcgmParams
    per_node = True
    one_node = False
    collective = False
    node_health = False

    def duration_basis(self, test: KindTest) -> str:
        """The catalog's expected duration of `dcgmi diag`."""
        dcgm: DcgmParams = self.block(test)
        return dcgm.expected_duration

    def fixed_time(self, test: KindTest, pod_start: str) -> FixedTime | None:
        """A pod start, then `dcgmi diag` as long as the catalog says."""
        dcgm: DcgmParams = self.block(test)
        ms = units.parse_duration(pod_start) + units.parse_duration(dcgm.expected_duration)
        why = f"{pod_start} start-up + DCGM level {dcgm.level} {dcgm.expected_duration}"
        return FixedTime(ms / 1000, why)

    def needs_hostengine(self, test: KindTest) -> bool:
        """Levels that need `nv-hostengine` say so in their block."""
        dcgm: DcgmParams = self.block(test)
        return dcgm.needs_hostengine
