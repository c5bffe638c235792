"""Tests of the physics checks (NVC350-356): where each points, how bad, and its boundary."""

from __future__ import annotations

import pytest
from sitefactory import FILE, STAGES, catalog, edit, line_of, parse, site_yaml, unit, units_of

from nvcregen.core import units
from nvcregen.core.errors import Diagnostic, Severity
from nvcregen.validate.site import check_site

E, W = Severity.ERROR, Severity.WARNING
H20 = """\
- name: h20
  model: H20-3e
  nodes: [node-a, node-b]
  nics: {count: 8, fabric: roce, speed: 200Gb/s, resourceName: rdma/hca}
"""
TCP_POOL = (
    "- {name: gpu, model: H100, nodes: [n1, n2], nics: {count: 2, fabric: tcp, speed: 25Gb/s}}"
)
TCP_STAGES = "- {name: fabric, scope: inter-node, tests: [nccl-all-reduce-tcp]}"
TWO_POOLS = f"""\
{H20}- name: l20
  model: L20
  nodes: [l-1, l-2]
  nics: {{count: 2, fabric: roce, speed: 200Gb/s, resourceName: rdma/roce}}
"""
TWO_POOL_STAGES = """\
- {name: h20-pair, scope: inter-node, pool: h20, tests: [nccl-all-reduce]}
- {name: l20-pair, scope: inter-node, pool: l20, tests: [nccl-all-reduce]}
"""


def diagnose(text: str) -> list[Diagnostic]:
    _, doc = parse(text)
    return check_site(doc, catalog()).diagnostics  # references, then physics and budget


def codes(text: str) -> list[str]:
    """Codes of the errors and warnings (not the infos) of a site."""
    return [d.code for d in diagnose(text) if d.severity is not Severity.INFO]


def only(text: str, code: str) -> Diagnostic:
    found = [d for d in diagnose(text) if d.code == code]
    assert len(found) == 1, diagnose(text)
    return found[0]


def points_at(diag: Diagnostic, text: str, needle: str, path: str) -> None:
    assert (diag.span.file, diag.path) == (FILE, path)
    assert diag.span.line == line_of(text, needle), text


def h20(stages: str, thresholds: str = "") -> str:
    return site_yaml(pools=H20, stages=stages, thresholds=thresholds)


INTER = "- {name: pair, scope: inter-node, tests: [nccl-all-reduce]}"
INTRA = "- {name: node, scope: intra-node, tests: [nccl-all-reduce]}"


# NVC350: an explicit timeout below the expected duration


def test_timeout_equal_to_the_expected_duration_passes_one_second_less_fails() -> None:
    stages = "- {name: node, scope: intra-node, timeoutPerJob: 90s, tests: [dcgm-l1]}"
    assert "NVC350" not in codes(site_yaml(stages=stages))  # dcgm-l1: 30s + 1m
    short = site_yaml(stages=stages.replace("90s", "89s"))
    diag = only(short, "NVC350")
    assert diag.severity is E
    points_at(diag, short, "89s", "/spec/readiness/stages/0/timeoutPerJob")
    assert diag.message == (
        "timeoutPerJob 89s is shorter than dcgm-l1's expected 1m30s on pool gpu (1 node)"
    )
    assert diag.hint == (
        "expected = 30s start-up + DCGM level 1 1m; without timeoutPerJob the stage gets 3m "
        "(x2 timeoutFactor)"
    )


def test_nccl_timeout_boundary_uses_the_physics_duration() -> None:
    expected = unit(units_of(h20(INTER)), "pair", "nccl-all-reduce").expected_ms
    at_limit = edit(h20(INTER), "scope: inter-node,", "scope: inter-node, timeoutPerJob: X,")
    written = at_limit.replace("X", units.format_duration(expected))
    assert "NVC350" not in codes(written)
    under = at_limit.replace("X", units.format_duration(expected - 1000))
    diag = only(under, "NVC350")
    assert "nccl-all-reduce's expected" in diag.message
    assert "(2 nodes)" in diag.message
    assert "at 300.0 GB/s busbw (all_reduce over 16 ranks" in diag.hint
    assert "limited by 8 x 200Gb/s roce per node at efficiency 0.8" in diag.hint


def test_each_test_of_the_stage_is_checked_against_its_timeout() -> None:
    stages = "- {name: node, scope: intra-node, timeoutPerJob: 2m, tests: [dcgm-l1, dcgm-l2]}"
    diag = only(site_yaml(stages=stages), "NVC350")  # dcgm-l1 fits, dcgm-l2 (5m30s) does not
    assert diag.message.startswith("timeoutPerJob 2m is shorter than dcgm-l2's expected 5m30s")


# NVC351: more than the links carry


def test_tcp_pool_ceiling_exactly_passes_a_hair_more_fails() -> None:
    ok = site_yaml(
        pools=TCP_POOL,
        stages=TCP_STAGES,
        thresholds='- {test: nccl-all-reduce-tcp, scope: inter-node, busbw: ">= 11.71875 GB/s"}',
    )
    assert "NVC351" not in codes(ok)
    text = ok.replace("11.71875 GB/s", "100 GB/s")
    diag = only(text, "NVC351")
    assert diag.severity is E
    points_at(diag, text, '">= 100 GB/s"', "/spec/thresholds/0/busbw")
    assert diag.message == (
        "busbw >= 100 GB/s is more than nccl-all-reduce-tcp can reach on pool gpu "
        "(2 nodes x 8 GPUs): TCP over 2 x 25Gb/s tcp per node allows at most 11.72 GB/s busbw"
    )
    assert "NVC351" in codes(ok.replace("11.71875 GB/s", "11.71876 GB/s"))


def test_algbw_is_compared_with_the_algorithm_bandwidth_bound() -> None:
    text = site_yaml(
        pools=TCP_POOL,
        stages=TCP_STAGES,
        thresholds='- {test: nccl-all-reduce-tcp, scope: inter-node, algbw: ">= 6.25 GB/s"}',
    )
    assert "NVC351" not in codes(text)  # 11.71875 / 1.875
    diag = only(text.replace("6.25 GB/s", "6.26 GB/s"), "NVC351")
    assert diag.path == "/spec/thresholds/0/algbw"
    assert "at most 6.25 GB/s algbw" in diag.message


def test_upper_bounds_are_not_held_to_the_line_rate() -> None:
    text = site_yaml(
        pools=TCP_POOL,
        stages=TCP_STAGES,
        thresholds='- {test: nccl-all-reduce-tcp, scope: inter-node, busbw: "<= 100 GB/s"}',
    )
    assert "NVC351" not in codes(text)


def test_measured_baseline_lifts_the_ceiling_to_its_best_round() -> None:
    rule = '- {test: nccl-all-reduce, scope: inter-node, busbw: ">= 452.28 GB/s"}'
    assert "NVC351" not in codes(h20(INTER, rule))  # above the 375 GB/s line-rate bound
    over = h20(INTER, rule.replace("452.28", "452.29"))
    diag = only(over, "NVC351")
    assert "allows at most 452.3 GB/s busbw" in diag.message
    assert diag.hint.startswith(
        "the line-rate bound is raised x1.21 by baseline h20-3e-2node-roce-all-reduce"
    )


def test_a_bound_in_bits_says_what_it_is_in_bytes() -> None:
    text = h20(INTER, '- {test: nccl-all-reduce, scope: inter-node, busbw: ">= 4000 Gb/s"}')
    diag = only(text, "NVC351")
    assert diag.hint.endswith(">= 4000 Gb/s is bits: 500.0 GB/s")


def test_pcie_caps_l20_all_reduce_across_nodes() -> None:
    # Held by both pairs: a warning for the H20-3e one (40 < 427.58 / 5), an error for L20.
    text = site_yaml(
        pools=TWO_POOLS,
        stages=TWO_POOL_STAGES,
        thresholds='- {test: nccl-all-reduce, scope: inter-node, busbw: ">= 40 GB/s"}',
    )
    diag = only(text, "NVC351")
    assert "on pool l20" in diag.message
    assert "PCIe gen 4 x16 31.5 GB/s per GPU and direction allows at most 31.5 GB/s" in (
        diag.message
    )


# NVC352: far below what is expected


def test_a_fifth_of_the_expected_passes_anything_less_warns() -> None:
    rule = '- {test: nccl-all-reduce, scope: intra-node, busbw: ">= 93 GB/s"}'
    assert "NVC352" not in codes(h20(INTRA, rule))  # 465 GB/s measured / 5
    text = h20(INTRA, rule.replace("93 GB/s", "92.99 GB/s"))
    diag = only(text, "NVC352")
    assert diag.severity is W
    points_at(diag, text, '">= 92.99 GB/s"', "/spec/thresholds/0/busbw")
    assert diag.message == (
        "busbw >= 92.99 GB/s is under a fifth of the 465 GB/s expected for nccl-all-reduce "
        "on pool h20: a unit slip?"
    )


def test_gigabits_where_gigabytes_were_meant_on_8x400_infiniband() -> None:
    pools = (
        "- {name: gpu, model: H100, nodes: [n1, n2], "
        "nics: {count: 8, fabric: ib, speed: 400Gb/s, resourceName: rdma/ib}}"
    )
    rule = '- {test: nccl-all-reduce, scope: inter-node, at: 1GiB, busbw: ">= 380 Gb/s"}'
    diag = only(site_yaml(pools=pools, thresholds=rule), "NVC352")
    assert " GB/s expected at 1GiB for nccl-all-reduce on pool gpu" in diag.message
    assert diag.hint == "did you mean >= 380 GB/s? 380 Gb/s is 47.5 GB/s"
    megabytes = only(site_yaml(pools=pools, thresholds=rule.replace("Gb/s", "MB/s")), "NVC352")
    assert megabytes.hint == "did you mean >= 380 GB/s? 380 MB/s is 0.38 GB/s"


# NVC353: sizes the sweep never prints


@pytest.mark.parametrize(
    ("at", "message"),
    [
        ("32GiB", "at: 32GiB is beyond the largest size nccl-all-reduce runs (16GiB)"),
        ("4B", "at: 4B is below the smallest size nccl-all-reduce runs (8B)"),
        ("3GiB", "at: 3GiB is not a size nccl-all-reduce runs (8B x 2^k up to 16GiB)"),
        ("1GB", "at: 1GB is not a size nccl-all-reduce runs (8B x 2^k up to 16GiB)"),
    ],
)
def test_at_must_be_a_size_of_the_sweep(at: str, message: str) -> None:
    rule = f'- {{test: nccl-all-reduce, scope: inter-node, at: {at}, busbw: ">= 100 GB/s"}}'
    text = h20(INTER, rule)
    diag = only(text, "NVC353")
    assert diag.severity is E
    points_at(diag, text, f"at: {at}", "/spec/thresholds/0/at")
    assert diag.message == message
    assert "NVC353" not in codes(h20(INTER, rule.replace(at, "16GiB")))


def test_at_3gib_names_the_nearest_sizes() -> None:
    rule = '- {test: nccl-all-reduce, scope: inter-node, at: 3GiB, busbw: ">= 100 GB/s"}'
    assert only(h20(INTER, rule), "NVC353").hint == "nearest sizes it runs: 2GiB, 4GiB"


def test_l20_memory_ends_the_sweep_at_8gib() -> None:
    pools = "- {name: gpu, model: L20, nodes: [n1, n2]}"
    rule = '- {test: nccl-all-reduce, scope: intra-node, at: 16GiB, busbw: ">= 10 GB/s"}'
    diag = only(site_yaml(pools=pools, stages=INTRA, thresholds=rule), "NVC353")
    assert diag.message == "at: 16GiB is beyond the largest size nccl-all-reduce runs (8GiB)"
    assert diag.hint == (
        "nccl-tests lowers maxBytes 16GiB to 14.6 GiB on L20 (48 GB: send, receive and "
        "check buffers)"
    )
    assert "NVC353" not in codes(site_yaml(pools=pools, stages=INTRA, thresholds=rule.replace(
        "16GiB", "8GiB")))  # fmt: skip


def test_all_gather_over_24_ranks_never_prints_1gib() -> None:
    pools = "- {name: gpu, model: H100, nodes: [n1, n2, n3]}"
    stages = "- {name: trio, scope: inter-node, tests: [nccl-all-gather]}"
    rule = "- {test: nccl-all-gather, scope: inter-node, at: 1GiB}"
    diag = only(site_yaml(pools=pools, stages=stages, thresholds=rule), "NVC353")
    assert diag.message == (
        "at: 1GiB is never printed by nccl-all-gather with 24 ranks: nccl-tests rounds it "
        "down to a multiple of the ranks"
    )
    two = site_yaml(stages=stages.replace("trio", "pair"), thresholds=rule)  # 16 ranks
    assert "NVC353" not in codes(two)


# NVC354: product labels


def test_another_models_label_needs_an_acknowledged_override() -> None:
    pools = "- {name: gpu, model: H100, productLabels: [NVIDIA-H20], nodes: [n1, n2]}"
    text = site_yaml(pools=pools)
    diag = only(text, "NVC354")
    assert diag.severity is E
    points_at(diag, text, "[NVIDIA-H20]", "/spec/nodePools/0/productLabels")
    assert diag.message == (
        "productLabels NVIDIA-H20 (the label of H20) not among H100's catalog labels "
        "(NVIDIA-H100-80GB-HBM3)"
    )
    assert "productLabelsOverride: true" in diag.hint
    acknowledged = pools.replace("nodes:", "productLabelsOverride: true, nodes:")
    assert "NVC354" not in codes(site_yaml(pools=acknowledged))
    matching = pools.replace("NVIDIA-H20]", "NVIDIA-H100-80GB-HBM3]")
    assert "NVC354" not in codes(site_yaml(pools=matching))


# NVC355 and pool-scoped thresholds


def test_a_threshold_on_an_unknown_pool_points_at_the_pool() -> None:
    rule = '- {test: nccl-all-reduce, scope: inter-node, pool: l2o, busbw: ">= 10 GB/s"}'
    text = site_yaml(pools=TWO_POOLS, stages=TWO_POOL_STAGES, thresholds=rule)
    diag = only(text, "NVC355")
    points_at(diag, text, "pool: l2o", "/spec/thresholds/0/pool")
    assert (diag.message, diag.hint) == (
        "threshold names unknown node pool 'l2o'",
        "did you mean 'l20'?",
    )


def test_a_pool_threshold_holds_only_that_pools_stages() -> None:
    rule = '- {test: nccl-all-reduce, scope: inter-node, pool: h20, busbw: ">= 100 GB/s"}'
    text = site_yaml(pools=TWO_POOLS, stages=TWO_POOL_STAGES, thresholds=rule)
    assert codes(text) == []  # 100 GB/s is too much for the L20 pair, which it does not hold
    assert "NVC351" in codes(edit(text, "inter-node, pool: h20, busbw", "inter-node, busbw"))
    held = {u.stage.name: len(u.thresholds) for u in units_of(text)}
    assert held == {"h20-pair": 1, "l20-pair": 0}


def test_a_pool_that_does_not_run_the_test_is_not_planned() -> None:
    stages = "- {name: h20-pair, scope: inter-node, pool: h20, tests: [nccl-all-reduce]}"
    rule = "- {test: nccl-all-reduce, scope: inter-node, pool: l20}"
    diag = only(site_yaml(pools=TWO_POOLS, stages=stages, thresholds=rule), "NVC306")
    assert diag.message == "the plan does not run nccl-all-reduce at scope inter-node on pool l20"


# NVC356: NVCRE's own hour


def test_nvcre_category_past_its_inner_timeout_warns_unless_pinned() -> None:
    one_nic = H20.replace("count: 8", "count: 1")
    stages = "- {name: pair, scope: inter-node, tests: [nccl-alltoall]}"
    text = site_yaml(pools=one_nic, stages=stages, window="{deadline: 48h, gpuHours: 500}")
    diag = only(text, "NVC356")
    assert diag.severity is W
    points_at(diag, text, "[nccl-alltoall]", "/spec/readiness/stages/0/tests/0")
    assert "but NVCRE's communication/nccl-alltoall entry stops it after 1h" in diag.message
    assert diag.hint.startswith("set pinTransport: true on the stage")
    pinned = edit(text, "scope: inter-node,", "scope: inter-node, pinTransport: true,")
    assert "NVC356" not in codes(pinned)
    assert "NVC356" not in codes(site_yaml(pools=H20, stages=stages))  # 35m with 8 NICs


def test_shipped_default_site_has_no_physics_findings() -> None:
    assert codes(site_yaml(stages=STAGES)) == []
