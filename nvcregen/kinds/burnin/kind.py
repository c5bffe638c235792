"""The burn-in kind: one run a node with every GPU, a budgeted duration, DCGM's own reader."""

from __future__ import annotations

from typing import Any, ClassVar

from nvcregen.core import units
from nvcregen.kindapi.protocol import FixedTime, KindTest, NodeRun, NodeScript, TestKind, begin_env
from nvcregen.kinds.burnin.params import BurnInParams

_HERE = __name__.rpartition(".")[0]  # this package: its `templates/` holds the script


class BurnIn(TestKind[BurnInParams]):
    """DCGM targeted stress on every GPU of a node for a stated duration."""

    name: ClassVar[str] = "burnin"
    begin_line: ClassVar[bool] = True
    failed_reason: ClassVar[str] = "BurnInFailed"
    params = BurnInParams
    per_node = True
    one_node = True  # each GPU's figure is its own, whatever the stage's scope
    collective = False
    log_format = "dcgm-burnin"
    pod_size = "dcgm"  # `dcgmi diag` in a pod, as DCGM's levels
    node_health = False
    node_container = "burn-in"

    def duration_basis(self, test: KindTest) -> str:
        """The load's duration and DCGM's set-up around it."""
        burnin: BurnInParams = self.block(test)
        return f"{burnin.plugin} {burnin.duration} + set-up {burnin.setup}"

    def fixed_time(self, test: KindTest, pod_start: str) -> FixedTime | None:
        """A pod start, DCGM's set-up, then the load for as long as the catalog says."""
        burnin: BurnInParams = self.block(test)
        ms = (
            units.parse_duration(pod_start)
            + units.parse_duration(burnin.setup)
            + units.parse_duration(burnin.duration)
        )
        why = (
            f"{pod_start} start-up + DCGM set-up {burnin.setup} + {burnin.plugin} {burnin.duration}"
        )
        return FixedTime(ms / 1000, why)

    def model_gap(self, test: KindTest, model: str) -> str | None:
        """A model without expectations in the catalog: no GPU of it can be judged (NVC337)."""
        burnin: BurnInParams = self.block(test)
        if burnin.expectation(model) is not None:
            return None
        known = ", ".join(e.model for e in burnin.expectations) or "none"
        return (
            f"{test.name} judges each GPU against its model's figures, and the catalog states"
            f" none for {model} (it does for: {known}): every node would be unjudged"
        )

    def node_script(self, test: KindTest, run: NodeRun) -> NodeScript | None:
        """`dcgmi diag -r targeted_stress` with the model's target, verbose JSON, a deadline.

        The target is the catalog's for the pool's model, so DCGM's own pass (which NVCRE
        mode reads, as the script's exit code) and collect's verdict rest on one figure;
        a model the catalog gives none keeps DCGM's own per-SKU target.
        """
        burnin: BurnInParams = self.block(test)
        found = burnin.expectation(run.model)
        params = [
            f"{burnin.plugin}.is_allowed=true",
            f"{burnin.plugin}.test_duration={units.parse_duration(burnin.duration) // 1000}",
            f"{burnin.plugin}.use_dgemm={'true' if burnin.precision == 'fp64' else 'false'}",
            f"{burnin.plugin}.target_perf_min_ratio={burnin.min_ratio:g}",
        ]
        if found is not None:
            params.append(f"{burnin.plugin}.target_stress={found.target_gflops:g}")
        values: dict[str, object] = {
            "plugin": burnin.plugin,
            "params": ";".join(params),
            "gpus": run.gpus,
            "deadline_s": run.outer_deadline_s,
        }
        return NodeScript("burn-in.sh.j2", values, package=_HERE)

    def node_env(self) -> list[dict[str, Any]]:
        """The node and the pod the script names in its first line (downward API)."""
        return begin_env()


KIND = BurnIn()  # registered in `kindapi/registry.py` by this module's name
