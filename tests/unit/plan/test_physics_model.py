"""Tests of nvcregen.plan: link bounds, evidence, sweeps, durations and timeouts, by hand.

Rates are GB/s per direction: 200 Gb/s is 25 GB/s, NVLink 900 GB/s (both directions) is
450 GB/s, PCIe gen 4 x16 is 31.5 GB/s. n ranks, g GPUs per node, m nodes.
"""

from __future__ import annotations

from typing import Any

import pytest
from sitefactory import catalog

from nvcregen.catalog import models
from nvcregen.kinds.nccl.kind import KIND as NCCL
from nvcregen.plan import bandwidth, evidence, physics, sweep
from nvcregen.plan.run import Network, Run, run_for, run_of_baseline
from nvcregen.spec.v1alpha1 import NodePool, Scope

ROCE_8X200 = {"count": 8, "fabric": "roce", "speed": "200Gb/s", "resourceName": "rdma/hca"}
IB_8X400 = {"count": 8, "fabric": "ib", "speed": "400Gb/s", "resourceName": "rdma/ib"}
TCP_2X25 = {"count": 2, "fabric": "tcp", "speed": "25Gb/s"}


def make_run(
    model: str,
    test: str | models.TestEntry,
    nodes: int = 1,
    nics: dict[str, Any] | None = None,
    *,
    network: Network | None = None,
    hardware: models.HardwareEntry | None = None,
    gpus: int | None = None,
) -> Run:
    found = hardware or catalog().find_hardware(model)
    assert found is not None
    entry = catalog().tests[test] if isinstance(test, str) else test
    pool = NodePool.model_validate(
        {"name": "p", "model": model, "nodes": ["a", "b"], **({"nics": nics} if nics else {})}
    )
    scope: Scope = "intra-node" if nodes == 1 else "inter-node"
    if network is None:
        network = "none" if nodes == 1 else ("socket" if entry.transport == "socket" else "rdma")
    return run_for(entry, found, pool, gpus or found.gpus_per_node, scope, network, nodes)


def bound(run: Run) -> float | None:
    return physics.line_rate_bound(run, catalog())


# Bus-bandwidth factors and the cuts


@pytest.mark.parametrize(
    ("collective", "ranks", "factor"),
    [("all_reduce", 16, 1.875), ("all_reduce", 8, 1.75), ("all_gather", 16, 0.9375),
     ("alltoall", 8, 0.875), ("all_reduce", 1, 0.0)],
)  # fmt: skip
def test_bus_factor_is_nccl_tests_normalisation(collective: Any, ranks: int, factor: float) -> None:
    assert bandwidth.bus_factor(collective, ranks) == factor


def test_one_node_over_nvswitch_with_nvls_all_reduce() -> None:
    run = make_run("H20-3e", "nccl-all-reduce")
    (cut,) = bandwidth.cuts(run, catalog().physics)
    assert (cut.path, cut.rate) == ("nvls", 450.0)
    assert cut.ceiling == cut.typical == pytest.approx(1.75 * 450)  # 787.5: in-switch reduction
    assert physics.modelled_busbw(run, catalog()) == pytest.approx(787.5 * 0.55)


def test_one_node_without_in_switch_reduction_is_capped_at_the_link() -> None:
    a100 = make_run("A100", "nccl-all-reduce")  # NVLink 600 GB/s, no NVLS
    assert bound(a100) == pytest.approx(300.0)
    assert bound(make_run("H20-3e", "nccl-all-gather")) == pytest.approx(450.0)
    assert bound(make_run("H20-3e", "nccl-alltoall")) == pytest.approx(450.0)


def test_two_h20_3e_nodes_over_8x200_roce() -> None:
    # Each node must send >= S per all-reduce (m = 2): algbw <= 200, busbw <= 1.875 x 200.
    assert bound(make_run("H20-3e", "nccl-all-reduce", 2, ROCE_8X200)) == pytest.approx(375.0)
    # All-gather: each node receives (n - g)/n S = S/2: busbw <= 200 x 15 / 8.
    assert bound(make_run("H20-3e", "nccl-all-gather", 2, ROCE_8X200)) == pytest.approx(375.0)
    # All-to-all: each node sends g (n - g)/n S = 4 S: busbw <= 200 x 15 / 64.
    assert bound(make_run("H20-3e", "nccl-alltoall", 2, ROCE_8X200)) == pytest.approx(46.875)


def test_more_nodes_spread_all_reduce_and_sharp_lifts_the_ceiling_on_ib_only() -> None:
    # m = 4, n = 32: each node sends >= 2 (m - 1)/m S = 1.5 S without in-network reduction.
    roce = make_run("H20-3e", "nccl-all-reduce", 4, ROCE_8X200)
    (_, net) = bandwidth.cuts(roce, catalog().physics)
    assert net.ceiling == net.typical == pytest.approx(1.9375 * 200 * 4 / 6)
    ib = make_run("H100", "nccl-all-reduce", 4, IB_8X400)
    (gpu, net) = bandwidth.cuts(ib, catalog().physics)
    assert net.typical == pytest.approx(1.9375 * 400 * 4 / 6)
    assert net.ceiling == pytest.approx(1.9375 * 400)  # SHARP: each node sends >= S
    assert gpu.ceiling == pytest.approx(1.9375 * 450)
    assert bound(ib) == pytest.approx(1.9375 * 400)


def test_tcp_pool_is_bounded_by_its_nics_and_rdma_pools_by_the_assumed_interface() -> None:
    tcp = make_run("H100", "nccl-all-reduce-tcp", 2, TCP_2X25)
    assert bound(tcp) == pytest.approx(1.875 * 6.25)  # 11.71875
    assert physics.modelled_busbw(tcp, catalog()) == pytest.approx(1.875 * 6.25 * 0.35)
    sockets = make_run("H20-3e", "nccl-all-reduce-tcp", 2, ROCE_8X200)
    (_, net) = bandwidth.cuts(sockets, catalog().physics)
    assert net.typical == pytest.approx(1.875 * 3.125)  # one 25 Gb/s pod interface
    assert net.ceiling == pytest.approx(1.875 * 200)  # at most every NIC


def test_pcie_cards_are_capped_at_their_own_link_across_nodes_too() -> None:
    l20 = make_run("L20", "nccl-all-reduce", 2, {**ROCE_8X200, "count": 2})
    cut, value = bandwidth.ceiling(l20, catalog().physics) or (None, 0.0)
    assert cut is not None
    assert (cut.path, value) == ("pcie", 31.5)
    assert physics.modelled_busbw(l20, catalog()) == pytest.approx(31.5 * 0.6)
    assert bound(make_run("L20", "nccl-all-reduce")) == pytest.approx(31.5)


def test_nvlink_across_nodes_lifts_the_nic_ceiling_within_the_domain() -> None:
    nics = {"count": 4, "fabric": "ib", "speed": "400Gb/s", "resourceName": "rdma/ib"}
    gb200 = make_run("GB200", "nccl-all-reduce", 2, nics)  # 8 ranks in a 72-GPU domain
    assert bound(gb200) == pytest.approx(1.75 * 900)
    assert physics.modelled_busbw(gb200, catalog()) == pytest.approx(1.75 * 200 * 0.8)


def test_one_rank_moves_nothing() -> None:
    single = make_run("H100", "nccl-all-reduce", gpus=1)
    assert bound(single) == 0.0
    assert physics.expected_duration(single, catalog()) > 90  # still runs the sweep


# Evidence: the field report's baselines


@pytest.mark.parametrize("name", sorted(catalog().baselines))
def test_every_baseline_is_feasible_in_the_model(name: str) -> None:
    baseline = catalog().baselines[name]
    run = run_of_baseline(baseline, catalog())
    assert run is not None
    ceiling = physics.ceiling_busbw(run, catalog())
    assert ceiling is not None
    assert max(r.busbw for r in baseline.rounds) <= ceiling + 1e-9
    assert evidence.matching_baseline(run, catalog()) == baseline


def test_the_roce_baseline_beats_the_declared_line_rate_and_lifts_that_path() -> None:
    roce = make_run("H20-3e", "nccl-all-reduce", 2, ROCE_8X200)
    assert bound(roce) == pytest.approx(375.0)
    ratio, by = evidence.calibration(roce, catalog())
    assert by is not None
    assert by.name == "h20-3e-2node-roce-all-reduce"
    assert ratio == pytest.approx(452.28 / 375)
    assert physics.ceiling_busbw(roce, catalog()) == pytest.approx(452.28)
    # The same path, another collective: lifted by the same ratio.
    alltoall = make_run("H20-3e", "nccl-alltoall", 2, ROCE_8X200)
    assert physics.ceiling_busbw(alltoall, catalog()) == pytest.approx(46.875 * 452.28 / 375)
    # Other NICs are another path: no evidence there.
    four = make_run("H20-3e", "nccl-all-reduce", 2, {**ROCE_8X200, "count": 4})
    assert evidence.calibration(four, catalog()) == (1.0, None)


def test_expected_is_the_measured_median_and_timing_the_lower_of_both() -> None:
    roce = make_run("H20-3e", "nccl-all-reduce", 2, ROCE_8X200)
    assert physics.expected_busbw(roce, catalog()) == pytest.approx(427.58)
    assert physics.timing_busbw(roce, catalog()) == pytest.approx(375 * 0.8)
    node = make_run("H20-3e", "nccl-all-reduce")
    assert physics.expected_busbw(node, catalog()) == pytest.approx(465.0)
    assert physics.timing_busbw(node, catalog()) == pytest.approx(787.5 * 0.55)
    tcp = make_run("H20-3e", "nccl-all-reduce-tcp", 2, ROCE_8X200)
    assert physics.expected_busbw(tcp, catalog()) == pytest.approx(2.25)
    assert physics.timing_busbw(tcp, catalog()) == pytest.approx(5.859375 * 0.35)
    three = make_run("H20-3e", "nccl-all-reduce", 3, ROCE_8X200)  # not measured
    assert physics.expected_busbw(three, catalog()) == physics.modelled_busbw(three, catalog())


# Sweeps


def test_sweep_sizes_and_calls() -> None:
    nccl = NCCL.block(catalog().tests["nccl-all-reduce"])
    sizes = sweep.sizes(nccl)
    assert (len(sizes), sizes[0], sizes[-1]) == (32, 8, 16 * 2**30)
    assert sweep.calls_per_size(nccl, catalog().physics.nccl_tests) == 2 * (1 + 100 + 1)


@pytest.mark.parametrize(("memory_gb", "largest"), [(53, 16 * 2**30), (52, 8 * 2**30)])
def test_memory_lowers_max_bytes_at_the_exact_boundary(memory_gb: int, largest: int) -> None:
    # Three 16 GiB buffers and 1 GiB spare need 52.61e9 bytes.
    hardware = catalog().hardware["h100"].model_copy(update={"memory_gb": memory_gb})
    run = make_run("H100", "nccl-all-reduce", hardware=hardware)
    assert physics.measured_sizes(run, catalog())[-1] == largest


def test_l20_sweep_stops_at_8gib() -> None:
    run = make_run("L20", "nccl-all-reduce")
    assert physics.largest_size(run, catalog()) == (48 * 10**9 - 2**30) // 3
    assert physics.measured_sizes(run, catalog())[-1] == 8 * 2**30


def test_printed_sizes_round_to_whole_elements_per_rank() -> None:
    assert sweep.printed_size(2**30, "all_gather", 24, 4) == 1073741760
    assert sweep.printed_size(2**30, "all_gather", 16, 4) == 2**30
    assert sweep.printed_size(8, "all_gather", 16, 4) == 0
    assert sweep.printed_size(8, "all_reduce", 24, 4) == 8


# Durations, timeouts and GPU-hours


def test_nccl_duration_by_hand() -> None:
    entry = catalog().tests["nccl-all-reduce"]
    small = entry.model_copy(
        update={
            "nccl": NCCL.block(entry).model_copy(
                update={"min_bytes": "1GiB", "max_bytes": "2GiB", "iterations": 10, "cycles": 3}
            )
        }
    )
    run = make_run("H20-3e", small)  # no baseline for this sweep's entry: timing = modelled
    algbw = 787.5 * 0.55 / 1.75  # 247.5 GB/s
    call = [20e-6 + size / (algbw * 1e9) for size in (2**30, 2**31)]
    calls = 2 * (1 + 10 + 1)
    expected = 90 + 5 * (call[1] + call[0]) + 3 * calls * sum(call)
    assert physics.expected_duration(run, catalog()) == pytest.approx(expected)
    assert physics.expected_ms(run, catalog()) == 1000 * -(-expected // 1)


def test_dcgm_and_training_durations() -> None:
    assert physics.expected_duration(make_run("H100", "dcgm-l1"), catalog()) == 90
    assert physics.expected_duration(make_run("H100", "dcgm-l4"), catalog()) == 30 + 90 * 60
    training = make_run("H100", "training-goodput", 2, IB_8X400)
    assert physics.expected_duration(training, catalog()) == 600 + 500 * 5 + 5 * 60
    assert physics.gpu_hours(training, catalog()) == pytest.approx(16 * 3400 / 3600)


def test_latency_floor_grows_with_tree_depth() -> None:
    two = make_run("H20-3e", "nccl-all-reduce", 2, ROCE_8X200)
    four = make_run("H20-3e", "nccl-all-reduce", 4, ROCE_8X200)
    assert physics.latency_s(two, catalog()) == pytest.approx(50e-6)
    assert physics.latency_s(four, catalog()) == pytest.approx(100e-6)
    assert physics.latency_s(make_run("L20", "nccl-all-reduce"), catalog()) == pytest.approx(30e-6)


@pytest.mark.parametrize(
    ("expected_ms", "factor", "timeout"),
    [(90_000, 2.0, 180_000), (90_001, 2.0, 240_000), (600_000, 1.1, 660_000),
     (90_000, 1.25, 120_000), (60_000, 1.0, 60_000)],
)  # fmt: skip
def test_timeout_is_rounded_up_to_whole_minutes(
    expected_ms: int, factor: float, timeout: int
) -> None:
    assert physics.timeout_ms(expected_ms, factor) == timeout


def test_busbw_at_a_size_includes_the_latency_floor() -> None:
    run = make_run("H20-3e", "nccl-all-reduce")
    at_1gib = physics.busbw_at(run, catalog(), 2**30)
    at_8b = physics.busbw_at(run, catalog(), 8)
    assert at_1gib is not None
    assert at_8b is not None
    assert 460 < at_1gib < 465  # near the measured 465 GB/s
    assert at_8b == pytest.approx(1.75 * 8 / 20e-6 / 1e9, rel=1e-3)  # latency bound


def test_explain_names_every_term() -> None:
    text = physics.explain(make_run("H20-3e", "nccl-alltoall", 2, ROCE_8X200), catalog())
    assert text.startswith("90s start-up + 10 cycles x 32 sizes (8B..16GiB, x2) x 204 calls")
    assert "alltoall over 16 ranks, limited by 8 x 200Gb/s roce per node" in text
    assert "efficiency 0.7" in text
    assert physics.explain(make_run("H100", "dcgm-l2"), catalog()) == (
        "30s start-up + DCGM level 2 5m"
    )
