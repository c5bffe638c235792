"""Issue #21: rounds bound to the plan by host, model and count; the plausibility margin."""

from __future__ import annotations

from sitefactory import catalog, site_yaml, unit, units_of

from nvcregen.plan import model as plan_model
from nvcregen.results.binding import MARGIN, bind, ceiling_text
from nvcregen.results.findings import first_lines
from nvcregen.results.models import (
    BandwidthMeasurement,
    BandwidthRow,
    Finality,
    ObjectRef,
    RankRecord,
)
from nvcregen.results.runs import RunResult

STAGES = "- {name: pair, scope: inter-node, nodesPerJob: 2, tests: [nccl-all-reduce]}"
NICS = "nics: {count: 8, fabric: ib, speed: 400Gb/s, resourceName: rdma/ib}"
NAMED = f"- {{name: gpu, model: H100, nodes: [gpu-1, gpu-2], {NICS}}}"
SELECTOR = f"- {{name: gpu, model: H100, selector: {{role: gpu}}, nodeCount: 2, {NICS}}}"
H100 = "NVIDIA H100 80GB HBM3"


def planned(pools: str) -> plan_model.TestUnit:
    return unit(units_of(site_yaml(pools=pools, stages=STAGES)), "pair", "nccl-all-reduce")


def measured(
    hosts: list[str], model: str = H100, busbw: float = 300.0, nodes: tuple[str, ...] = ()
) -> RunResult:
    ranks = tuple(
        RankRecord(rank=i, host=h, device=i % 8, model=model) for i, h in enumerate(hosts)
    )
    row = BandwidthRow.model_validate(
        {"sizeBytes": 1 << 30, "algBW": 1, "busBW": busbw, "samples": 1}
    )
    m = BandwidthMeasurement(
        ref=ObjectRef(kind="TrainJob", name="pair-r1-g0"), group="g0", nodes=nodes, iteration=1,
        finality=Finality.FINAL, rows=(row,), from_log=True, ranks=ranks,
    )  # fmt: skip
    return RunResult(stage="pair", scope="inter-node", test="nccl-all-reduce", bandwidth=(m,))


def codes(run: RunResult, pools: str) -> list[str]:
    return [f.code for f in bind(run, planned(pools), catalog())]


def test_named_nodes_bind_by_name_model_and_count() -> None:
    hosts = ["gpu-1"] * 8 + ["gpu-2"] * 8
    assert codes(measured(hosts, nodes=("gpu-1", "gpu-2")), NAMED) == []
    assert codes(measured(hosts[:-1], nodes=("gpu-1", "gpu-2")), NAMED) == ["NVC732"]  # 15
    other = ["gpu-1"] * 8 + ["gpu-3"] * 8
    assert codes(measured(other, nodes=("gpu-1", "gpu-2")), NAMED) == ["NVC730"]
    assert codes(measured(hosts, "NVIDIA H200", nodes=("gpu-1", "gpu-2")), NAMED) == ["NVC731"]
    pods = ["pair-r1-g0-launcher-0-0"] * 8 + ["pair-r1-g0-node-0-0.pair-r1-g0"] * 8
    assert codes(measured(pods, nodes=("gpu-1", "gpu-2")), NAMED) == []  # the run's own pods


def test_a_selector_pool_binds_by_model_and_count_and_says_so() -> None:
    hosts = ["ip-10-0-0-1"] * 8 + ["ip-10-0-0-2"] * 8
    found = bind(measured(hosts), planned(SELECTOR), catalog())
    assert [(f.code, f.word) for f in found] == [("NVC739", "pass")]
    assert "bound by GPU model (NVIDIA-H100-80GB-HBM3) and count (2 nodes x 8 GPUs)" in (
        found[0].message
    )
    assert codes(measured(hosts, "NVIDIA A100-SXM4-80GB"), SELECTOR) == ["NVC731", "NVC739"]
    (line,) = first_lines(found)  # a note, still in the first lines
    assert line.startswith("Note (NVC739), pair/nccl-all-reduce: pool gpu names no node")


def test_the_ceiling_holds_at_its_margin_and_one_over_fails() -> None:
    found = ceiling_text(planned(NAMED), catalog())
    assert found is not None
    limit, how = found
    assert how.endswith(f"+{MARGIN:.0%} margin")
    hosts = ["gpu-1"] * 8 + ["gpu-2"] * 8
    at = measured(hosts, busbw=round(limit, 2) - 0.01, nodes=("gpu-1", "gpu-2"))
    over = measured(hosts, busbw=round(limit, 2) + 0.01, nodes=("gpu-1", "gpu-2"))
    assert codes(at, NAMED) == []
    assert codes(over, NAMED) == ["NVC735"]


FOUR = f"- {{name: gpu, model: H100, nodes: [gpu-1, gpu-2, gpu-3, gpu-4], {NICS}}}"


def test_a_log_binds_only_to_the_run_whose_pinned_nodes_produced_it() -> None:
    """Issue #31: another group's nodes are in the pool, not in this run's pins."""
    theirs = ["gpu-3"] * 8 + ["gpu-4"] * 8  # the pair (gpu-3, gpu-4) ran it
    found = bind(measured(theirs, nodes=("gpu-1", "gpu-2")), planned(FOUR), catalog())
    assert [f.code for f in found] == ["NVC730"]
    assert found[0].message == (
        "ranks ran on gpu-3, gpu-4, which the plan does not name for this run"
        " (expected gpu-1, gpu-2)"
    )
    half = ["gpu-1"] * 8 + ["gpu-3"] * 8
    assert codes(measured(half, nodes=("gpu-1", "gpu-2")), FOUR) == ["NVC730"]
    mine = ["gpu-1"] * 8 + ["gpu-2"] * 8
    assert codes(measured(mine, nodes=("gpu-1", "gpu-2")), FOUR) == []
    assert codes(measured(mine), FOUR) == ["NVC730"]  # a named pool's run pins a group


def test_the_plans_ranks_on_the_wrong_number_of_hosts_are_unbound() -> None:
    """16 ranks are 2 hosts x 8 GPUs, not 1 host x 16, nor 12 on one and 4 on the other."""
    one = bind(measured(["gpu-1"] * 16, nodes=("gpu-1", "gpu-2")), planned(NAMED), catalog())
    assert [f.code for f in one] == ["NVC732"]
    assert one[0].message == (
        "16 ranks on 1 host(s) (16 on gpu-1), where the plan runs 2 nodes x 8 GPUs (16 ranks):"
        " fewer"
    )
    uneven = ["gpu-1"] * 12 + ["gpu-2"] * 4
    found = bind(measured(uneven, nodes=("gpu-1", "gpu-2")), planned(NAMED), catalog())
    assert [f.message for f in found] == [
        "16 ranks on 2 host(s) (12 on gpu-1, 4 on gpu-2), where the plan runs"
        " 2 nodes x 8 GPUs (16 ranks)"
    ]
    three = ["gpu-1"] * 8 + ["gpu-2"] * 8 + ["pair-r1-g0-node-0-2"] * 8
    assert codes(measured(three, nodes=("gpu-1", "gpu-2")), NAMED) == ["NVC732"]  # 24 on 3


H20_3E = f"- {{name: gpu, model: H20-3e, nodes: [gpu-1, gpu-2], {NICS}}}"
H20_3E_LABELLED = (
    f"- {{name: gpu, model: H20-3e, productLabels: [NVIDIA-H20-3e], nodes: [gpu-1, gpu-2], {NICS}}}"
)


def test_an_h20_against_an_h20_3e_pool_names_the_label_and_the_fields_to_check() -> None:
    """NVC731 says which product label the device maps to and which pool fields to check."""
    hosts = ["gpu-1"] * 8 + ["gpu-2"] * 8
    run = measured(hosts, "NVIDIA H20", nodes=("gpu-1", "gpu-2"))
    (found,) = bind(run, planned(H20_3E), catalog())
    assert (found.code, found.word) == ("NVC731", "fail")
    assert found.message == (
        "devices are NVIDIA H20 (8 on gpu-1, 8 on gpu-2), where pool gpu plans H20-3e"
        " (NVIDIA-H20-3e); as nvidia.com/gpu.product labels: NVIDIA H20 -> NVIDIA-H20."
        " Check spec.nodePools[0].model and the catalog's product labels for H20-3e"
        " (spec.nodePools[0].productLabels unset) against the nodes' nvidia.com/gpu.product"
        " label, or whether the log is of these nodes"
    )
    (stated,) = bind(run, planned(H20_3E_LABELLED), catalog())
    assert "Check spec.nodePools[0].model and spec.nodePools[0].productLabels against" in (
        stated.message
    )


def test_the_pool_field_is_the_pools_own_index() -> None:
    other = f"- {{name: cpu, model: H100, nodes: [cpu-1, cpu-2], {NICS}}}"
    pools = f"{other}\n{H20_3E.replace('name: gpu', 'name: gpu3e')}"
    stages = (
        "- {name: pair, pool: gpu3e, scope: inter-node, nodesPerJob: 2, tests: [nccl-all-reduce]}"
    )
    target = unit(units_of(site_yaml(pools=pools, stages=stages)), "pair", "nccl-all-reduce")
    run = measured(["gpu-1"] * 8 + ["gpu-2"] * 8, "NVIDIA H20", nodes=("gpu-1", "gpu-2"))
    (found,) = bind(run, target, catalog())
    assert "Check spec.nodePools[1].model" in found.message
