"""The dcgm kind: a fixed time per node, a hostengine for some levels."""

from __future__ import annotations

from typing import Any, ClassVar

from nvcregen.core import units
from nvcregen.kindapi.protocol import FixedTime, KindTest, NodeRun, NodeScript, TestKind, begin_env
from nvcregen.kinds.dcgm.params import DcgmParams

MARK = "@@nvcregen-dcgm"  # the script's begin line (`ingest/beginline.py`'s form)
_HERE = __name__.rpartition(".")[0]  # this package: its templates/ holds the script


class Dcgm(TestKind[DcgmParams]):
    """DCGM diagnostics."""

    name: ClassVar[str] = "dcgm"
    begin_line: ClassVar[bool] = True
    unmarked_before: ClassVar[str | None] = MARK  # renders before the line printed none
    params = DcgmParams
    per_node = True
    one_node = False
    collective = False
    log_format = "dcgm-diag"
    log_versions = "dcgm"  # DCGM's, as `dcgmi diag` prints it
    pod_size = "dcgm"
    node_health = False
    node_container = "dcgm-diag"

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

    def node_script(self, test: KindTest, run: NodeRun) -> NodeScript | None:
        """`dcgmi diag` against a hostengine in the pod (or the site's), an outer deadline."""
        dcgm: DcgmParams = self.block(test)
        values: dict[str, object] = {
            "level": dcgm.level,
            "gpus": run.gpus,
            "hostengine": run.hostengine if dcgm.needs_hostengine else None,
            "deadline_s": run.outer_deadline_s,
        }
        return NodeScript("dcgm-diag.sh.j2", values, package=_HERE)

    def node_env(self) -> list[dict[str, Any]]:
        """The node and the pod the DCGM script names in its first line (downward API).

        A WorkloadRun's `env` is core/v1's (nvcre-api.md 1.4), so its pods get them as a
        Job's do; the log is then bound to its node by `nvcregen collect`.
        """
        return begin_env()


KIND = Dcgm()  # registered in `kindapi/registry.py` by this module's name
