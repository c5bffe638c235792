"""Tests of nvcregen.plan.resolve: pools, networks, modes, thresholds, nodes and timeouts."""

from __future__ import annotations

import pytest
from sitefactory import catalog, edit, site, site_yaml, unit, units_of

from nvcregen.catalog import models
from nvcregen.plan import physics
from nvcregen.plan.model import Network
from nvcregen.plan.resolve import (
    compile_thresholds,
    mode_for,
    network_for,
    resolve_pools,
    stage_pool_name,
    thresholds_for,
)
from nvcregen.spec.v1alpha1 import NodePool, Stage

SELECTOR_POOL = """\
- name: fleet
  model: L20
  selector: {node.kubernetes.io/instance-type: l20-8x}
  nodeCount: 6
  nics: {count: 2, fabric: roce, speed: 200Gb/s, resourceName: rdma/roce}
"""


def entry(name: str) -> models.TestEntry:
    return catalog().tests[name]


def nics_pool(nics: str | None) -> NodePool:
    line = f"\n  nics: {nics}" if nics is not None else ""
    return site(
        site_yaml(pools=f"- name: p\n  model: H100\n  nodes: [a, b]{line}")
    ).spec.node_pools[0]


def stage(text: str) -> Stage:
    return site(site_yaml(stages=text)).spec.readiness.stages[0]


# resolve_pools


def test_resolve_pools_fills_gaps_from_the_catalog() -> None:
    pools = resolve_pools(site(), catalog())
    assert list(pools) == ["gpu"]
    pool = pools["gpu"]
    assert pool.index == 0
    assert pool.hardware.model == "H100"
    assert pool.gpus_per_node == 8  # not written in the site: the catalog's figure
    assert pool.product_labels == ("NVIDIA-H100-80GB-HBM3",)
    assert pool.catalog_file == "hardware/h100.yaml"
    assert pool.node_count == 2


def test_resolve_pools_site_values_win_and_model_lookup_ignores_case() -> None:
    pools = """\
    - {name: a, model: H100, nodes: [n1]}
    - name: b
      model: rtx pro 6000
      productLabels: [NVIDIA-RTX-PRO-6000-Custom]
      gpusPerNode: 4
      selector: {pool: b}
      nodeCount: 3
    """
    pools_by_name = resolve_pools(site(site_yaml(pools=pools)), catalog())
    b = pools_by_name["b"]
    assert b.index == 1
    assert b.hardware.model == "RTX PRO 6000"
    assert b.product_labels == ("NVIDIA-RTX-PRO-6000-Custom",)
    assert b.gpus_per_node == 4
    assert b.catalog_file == "hardware/rtx-pro-6000.yaml"
    assert b.node_count == 3  # a selector pool counts what it states


def test_resolve_pools_skips_unknown_models_and_counts_selector_without_node_count() -> None:
    pools = """\
    - {name: a, model: H1OO, nodes: [n1]}
    - {name: b, model: L20, selector: {role: gpu}}
    """
    resolved = resolve_pools(site(site_yaml(pools=pools)), catalog())
    assert list(resolved) == ["b"]
    assert resolved["b"].node_count is None


def test_stage_pool_name_defaults_to_the_first_pool() -> None:
    pools = "- {name: a, model: H100, nodes: [n1]}\n- {name: b, model: H100, nodes: [n2]}"
    stages = "- {name: s1, scope: intra-node, tests: [dcgm-l1]}\n"
    stages += "- {name: s2, scope: intra-node, pool: b, tests: [dcgm-l1]}"
    parsed = site(site_yaml(pools=pools, stages=stages))
    s1, s2 = parsed.spec.readiness.stages
    assert stage_pool_name(parsed, s1) == "a"
    assert stage_pool_name(parsed, s2) == "b"


# network_for


@pytest.mark.parametrize(
    ("test", "nics", "scope", "expected"),
    [
        ("nccl-all-reduce", "{count: 2, fabric: ib, speed: 400Gb/s}", "inter-node", "rdma"),
        ("nccl-all-reduce", "{count: 2, fabric: roce, speed: 200Gb/s}", "inter-node", "rdma"),
        ("nccl-all-reduce", "{count: 2, fabric: ib, speed: 400Gb/s}", "intra-node", "none"),
        ("nccl-all-reduce", "{count: 2, fabric: tcp, speed: 100Gb/s}", "inter-node", "socket"),
        ("nccl-all-reduce", "{count: 0, fabric: roce, speed: 200Gb/s}", "inter-node", "socket"),
        ("nccl-all-reduce", None, "inter-node", "socket"),
        ("nccl-all-reduce-tcp", "{count: 2, fabric: ib, speed: 400Gb/s}", "inter-node", "socket"),
        ("dcgm-l1", "{count: 2, fabric: ib, speed: 400Gb/s}", "intra-node", "none"),
        ("training-goodput", "{count: 2, fabric: ib, speed: 400Gb/s}", "inter-node", "rdma"),
    ],
)
def test_network_for(test: str, nics: str | None, scope: str, expected: Network) -> None:
    assert network_for(entry(test), nics_pool(nics), scope) == expected


# mode_for


@pytest.mark.parametrize(
    ("test", "pin", "network", "expected"),
    [
        ("nccl-all-reduce", False, "rdma", "category"),
        ("nccl-all-reduce", True, "rdma", "workloadrun"),  # pinned: NCCL_NET=IB and HCA list
        ("nccl-all-reduce", True, "none", "category"),  # intra-node: nothing to pin
        ("nccl-all-reduce", True, "socket", "category"),
        ("nccl-all-reduce-tcp", False, "socket", "workloadrun"),  # no NVCRE category
        ("dcgm-l1", False, "none", "workloadrun"),
        ("dcgm-l2", True, "none", "workloadrun"),
    ],
)
def test_mode_for_pin_transport_and_missing_categories(
    test: str, pin: bool, network: Network, expected: str
) -> None:
    scope = "intra-node" if network == "none" else "inter-node"
    s = stage(f"- {{name: s, scope: {scope}, pinTransport: {str(pin).lower()}, tests: [{test}]}}")
    assert mode_for(entry(test), s, network, site()) == expected


@pytest.mark.parametrize(
    ("hostengine", "expected"),
    [
        ('"nvidia-dcgm.gpu-operator.svc:5555"', "category"),  # the one NVCRE's entry uses
        ('"dcgm.monitoring.svc:5555"', "workloadrun"),  # NVCRE would talk to the wrong one
    ],
)
def test_mode_for_dcgm_l4_follows_the_sites_hostengine(hostengine: str, expected: str) -> None:
    text = site_yaml(
        dependencies=f"dcgm: {{hostengine: {hostengine}}}",
        stages="- {name: s, scope: intra-node, tests: [dcgm-l4]}",
    )
    parsed = site(text)
    dcgm_l4 = entry("dcgm-l4")
    assert dcgm_l4.nvcre is not None
    assert dcgm_l4.nvcre.hostengine == "nvidia-dcgm.gpu-operator.svc:5555"
    assert mode_for(dcgm_l4, parsed.spec.readiness.stages[0], "none", parsed) == expected
    assert [u.mode for u in units_of(text)] == [expected]


# thresholds_for / compile_thresholds

THRESHOLDS = """\
- {test: nccl-all-reduce, scope: intra-node, busbw: ">= 420 GB/s"}
- {test: nccl-all-reduce, scope: inter-node, transport: IB, at: 1GiB, busbw: ">= 2880 Gb/s"}
- {test: nccl-all-reduce-tcp, scope: inter-node, transport: Socket}
- {test: nccl-all-reduce, scope: inter-node, algbw: "> 100 GB/s", busbw: ">=380GB/s"}
- {test: training-goodput, scope: inter-node, goodput: ">= 90%"}
"""


def test_thresholds_for_selects_by_test_and_scope_and_keeps_the_index() -> None:
    parsed = site(site_yaml(thresholds=THRESHOLDS))
    assert [i for i, _ in thresholds_for(parsed, "nccl-all-reduce", "inter-node")] == [1, 3]
    assert [i for i, _ in thresholds_for(parsed, "nccl-all-reduce", "intra-node")] == [0]
    assert thresholds_for(parsed, "nccl-alltoall", "inter-node") == []


def test_compile_thresholds_converts_bits_and_explains_the_derivation() -> None:
    parsed = site(site_yaml(thresholds=THRESHOLDS))
    compiled = compile_thresholds(parsed, "nccl-all-reduce", "inter-node")
    assert [(t.index, t.key, t.expression) for t in compiled] == [
        (1, "busBandwidthGBps", "value >= 360.0"),  # 2880 Gb/s / 8
        (3, "busBandwidthGBps", "value >= 380.0"),
        (3, "algBandwidthGBps", "value > 100.0"),
    ]
    assert compiled[0].derivation == (
        "busbw >= 2880 Gb/s -> value >= 360.0 (GB/s); "
        "written for 1GiB, NVCRE checks the maximum over message sizes"
    )
    assert compiled[1].derivation == "busbw >= 380 GB/s -> value >= 380.0 (GB/s)"


def test_compile_thresholds_ratio_and_measureless_thresholds() -> None:
    parsed = site(site_yaml(thresholds=THRESHOLDS))
    (goodput,) = compile_thresholds(parsed, "training-goodput", "inter-node")
    assert (goodput.key, goodput.expression) == ("goodputRatio", "value >= 0.9")
    assert goodput.derivation == "goodput >= 90% -> value >= 0.9"  # no unit suffix for ratios
    assert compile_thresholds(parsed, "nccl-all-reduce-tcp", "inter-node") == ()


def test_plan_attaches_only_the_thresholds_of_the_units_scope() -> None:
    units = units_of(site_yaml(thresholds=THRESHOLDS))
    intra = unit(units, "node", "nccl-all-reduce")
    inter = unit(units, "fabric", "nccl-all-reduce")
    assert [t.expression for t in intra.thresholds] == ["value >= 420.0"]
    assert [t.index for t in inter.thresholds] == [1, 3, 3]


# nodes per job, timeouts, order


def test_nodes_per_job_intra_node_is_always_one() -> None:
    stages = "- {name: s, scope: intra-node, nodesPerJob: 2, tests: [nccl-all-reduce]}"
    (only,) = units_of(site_yaml(stages=stages))
    assert only.nodes_per_job == 1
    assert only.nics_per_node == 0


@pytest.mark.parametrize(
    ("pools", "per_job", "expected"),
    [
        (SELECTOR_POOL, "", 6),  # every node of the pool in one job
        (SELECTOR_POOL, "nodesPerJob: 3, ", 3),
        ("- {name: g, model: H100, nodes: [a, b, c]}", "", 3),
        ("- {name: g, model: L20, selector: {role: gpu}}", "", 2),  # count unknown: pairs
    ],
)
def test_nodes_per_job_inter_node(pools: str, per_job: str, expected: int) -> None:
    stages = f"- {{name: s, scope: inter-node, {per_job}tests: [nccl-all-reduce]}}"
    (only,) = units_of(site_yaml(pools=pools, stages=stages))
    assert only.nodes_per_job == expected


def test_timeout_is_expected_duration_times_the_factor_unless_the_stage_overrides_it() -> None:
    base = units_of()
    l1 = unit(base, "node", "dcgm-l1")
    assert (l1.expected_ms, l1.timeout_ms) == (90_000, 3 * 60_000)  # 30s + 1m, x2 -> 3m
    for u in base:
        assert u.timeout_ms == physics.timeout_ms(u.expected_ms, 2.0)
        assert u.timeout_ms % 60_000 == 0
        assert 2 * u.expected_ms <= u.timeout_ms < 2 * u.expected_ms + 60_000
    text = edit(site_yaml(), "intra-node\n", "intra-node\n        timeoutPerJob: 1h30m\n")
    changed = units_of(text)
    assert unit(changed, "node", "dcgm-l1").timeout_ms == 90 * 60_000
    assert unit(changed, "node", "nccl-all-reduce").timeout_ms == 90 * 60_000
    fabric = unit(base, "fabric", "nccl-all-reduce").timeout_ms
    assert unit(changed, "fabric", "nccl-all-reduce").timeout_ms == fabric
    assert unit(changed, "node", "dcgm-l1").expected_ms == 90_000  # what is expected stays


def test_timeout_factor_of_the_window_scales_every_derived_timeout() -> None:
    window = "{maxConcurrentJobs: 2, deadline: 12h, gpuHours: 500, timeoutFactor: 1.25}"
    l1 = unit(units_of(site_yaml(window=window)), "node", "dcgm-l1")
    assert l1.timeout_ms == 2 * 60_000  # 90 s x 1.25 = 112.5 s -> 2m


def test_plan_keeps_site_order_and_records_origins() -> None:
    units = units_of()
    assert [(u.stage_index, u.stage.name, u.test.name) for u in units] == [
        (0, "node", "dcgm-l1"),
        (0, "node", "nccl-all-reduce"),
        (1, "fabric", "nccl-all-reduce"),
    ]
    assert [u.test_file for u in units] == [
        "tests/dcgm-l1.yaml",
        "tests/nccl-all-reduce.yaml",
        "tests/nccl-all-reduce.yaml",
    ]
    fabric = units[2]
    assert (fabric.network, fabric.mode, fabric.nics_per_node) == ("rdma", "category", 2)
