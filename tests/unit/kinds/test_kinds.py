"""Test kinds as plug-ins (issue 35, item 2): one protocol, one package a kind, one registry."""

from __future__ import annotations

import pytest

from nvcregen.catalog.load import load_catalog
from nvcregen.catalog.models import TestEntry as Entry
from nvcregen.kindapi.protocol import FixedTime, NodeRun, NodeScript
from nvcregen.kindapi.registry import KINDS, kind_of
from nvcregen.kinds.dcgm.kind import KIND as DCGM
from nvcregen.kinds.nccl.kind import KIND as NCCL
from nvcregen.kinds.training.kind import KIND as TRAINING


def entry(name: str) -> Entry:
    return load_catalog().tests[name]


def test_every_catalog_kind_is_registered_once_under_its_own_name() -> None:
    assert {test.kind for test in load_catalog().tests.values()} == set(KINDS)
    assert all(kind.name == name for name, kind in KINDS.items())


def test_every_catalog_test_has_the_block_its_kind_names() -> None:
    for test in load_catalog().tests.values():
        kind = kind_of(test)
        assert kind.name == test.kind
        assert isinstance(kind.block(test), kind.params)


def test_an_unknown_kind_is_a_clear_error() -> None:
    odd = entry("dcgm-l1").model_copy(update={"kind": "storage"})
    with pytest.raises(ValueError, match="test dcgm-l1 has kind 'storage', which nvcregen"):
        kind_of(odd)


def test_a_test_without_its_kinds_block_is_a_clear_error() -> None:
    bare = entry("dcgm-l1").model_copy(update={"dcgm": None})
    with pytest.raises(ValueError, match="test dcgm-l1 has no dcgm parameters"):
        kind_of(bare).fixed_time(bare, "15s")
    assert DCGM.block_or_none(bare) is None


def test_a_kinds_block_is_read_typed_and_none_from_another_kinds_test() -> None:
    dcgm, nccl = entry("dcgm-l1"), entry("nccl-all-reduce")
    assert DCGM.block(dcgm) is DCGM.block_or_none(dcgm)
    assert DCGM.block(dcgm).level == 1
    assert DCGM.block_or_none(nccl) is None
    with pytest.raises(ValueError, match="test nccl-all-reduce has no dcgm parameters"):
        DCGM.block(nccl)


def test_another_kinds_model_under_a_kinds_name_is_a_bug_named() -> None:
    odd = entry("dcgm-l1").model_copy(update={"dcgm": NCCL.block(entry("nccl-all-reduce"))})
    wrong = "test dcgm-l1: its dcgm block is a NcclParams, not DcgmParams"
    with pytest.raises(TypeError, match=wrong):
        DCGM.block_or_none(odd)
    with pytest.raises(TypeError, match=wrong):
        DCGM.block(odd)


@pytest.mark.parametrize(
    ("name", "traits"),
    [
        ("nccl", {"collective"}),
        ("dcgm", {"per_node"}),
        ("node", {"per_node", "one_node", "node_health"}),
        ("training", {"nvcre_pod"}),
        ("nvbandwidth", {"per_node", "one_node"}),
        ("rdma", {"per_node", "one_node"}),
        ("linkcounters", {"per_node", "one_node"}),
        ("rdmapair", {"pair"}),
        ("burnin", {"per_node", "one_node"}),
    ],
)
def test_how_each_kinds_runs_are_laid_out(name: str, traits: set[str]) -> None:
    every = ("per_node", "one_node", "collective", "node_health", "nvcre_pod", "pair")
    assert {t for t in every if getattr(KINDS[name], t)} == traits


def test_fixed_times_are_a_pod_start_plus_the_catalogs_duration() -> None:
    dcgm = entry("dcgm-l3")
    expected = DCGM.block(dcgm).expected_duration
    assert kind_of(dcgm).fixed_time(dcgm, "15s") == FixedTime(
        15 + int(expected.removesuffix("m")) * 60, f"15s start-up + DCGM level 3 {expected}"
    )
    node = entry("node-health")
    assert kind_of(node).fixed_time(node, "15s") == FixedTime(
        45.0, "15s start-up + nvidia-smi and kernel log 30s"
    )


def test_nccl_is_timed_by_the_sweep_model_not_a_fixed_time() -> None:
    test = entry("nccl-all-reduce")
    assert kind_of(test).fixed_time(test, "15s") is None
    assert kind_of(test).duration_basis(test) == "sweep 8B..16GiB"


def test_duration_basis_of_the_fixed_kinds() -> None:
    assert kind_of(entry("node-health")).duration_basis(entry("node-health")) == "30s"
    training = entry("training-goodput")
    steps = TRAINING.block(training).max_steps
    assert kind_of(training).duration_basis(training) == f"{steps} steps"


def test_nvcre_options_are_the_kinds_own() -> None:
    nccl = entry("nccl-all-reduce")
    assert kind_of(nccl).nvcre_options(nccl) == {
        "maxBytes": "16G",
        "numIterations": 100,
        "numCycles": 10,
    }
    training = entry("training-goodput")
    params = TRAINING.block(training)
    assert kind_of(training).nvcre_options(training) == {
        "enableCheckpoint": True,
        "maxSteps": params.max_steps,
        "saveInterval": params.save_interval,
        "storageSize": params.storage_size,
    }
    assert kind_of(entry("dcgm-l4")).nvcre_options(entry("dcgm-l4")) == {}


def test_only_dcgm_levels_that_say_so_need_a_hostengine() -> None:
    tests = load_catalog().tests
    needs = {n: kind_of(t).needs_hostengine(t) for n, t in tests.items()}
    blocks = {n: DCGM.block_or_none(t) for n, t in tests.items()}
    declared = {n: block is not None and block.needs_hostengine for n, block in blocks.items()}
    assert needs == declared
    assert any(needs.values())


def run(timeout_ms: int = 600_000, hostengine: str | None = "nv-hostengine.dcgm:5555") -> NodeRun:
    return NodeRun(gpus=8, timeout_ms=timeout_ms, outer_deadline_s=540, hostengine=hostengine)


def test_a_dcgm_level_names_the_sites_hostengine_only_when_it_needs_one() -> None:
    l4, l1 = entry("dcgm-l4"), entry("dcgm-l1")
    assert kind_of(l4).node_script(l4, run()) == NodeScript(
        "dcgm-diag.sh.j2",
        {"level": 4, "gpus": 8, "hostengine": "nv-hostengine.dcgm:5555", "deadline_s": 540},
        package="nvcregen.kinds.dcgm",
    )
    script = kind_of(l1).node_script(l1, run())
    assert script is not None
    assert script.values["hostengine"] is None
    assert script.values["level"] == 1


def test_only_per_node_kinds_have_a_node_script_container_and_env() -> None:
    for name in ("nccl-all-reduce", "training-goodput"):
        test = entry(name)
        kind = kind_of(test)
        assert kind.node_script(test, run()) is None
        assert (kind.node_container, kind.node_env()) == (None, [])
    node_name = {"name": "NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}
    pod_name = {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}
    dcgm, health = KINDS["dcgm"], KINDS["node"]
    assert (dcgm.node_container, dcgm.node_env()) == ("dcgm-diag", [node_name, pod_name])
    capabilities = {"name": "NVIDIA_DRIVER_CAPABILITIES", "value": "compute,utility"}
    assert (health.node_container, health.node_env()) == ("node-health", [node_name, capabilities])
    assert dcgm.node_env() is not dcgm.node_env()  # a fresh list each object may change


def test_each_kind_takes_its_pods_size_from_the_catalog_or_leaves_it_to_nvcre() -> None:
    sizes = {name: kind.pod_size for name, kind in KINDS.items()}
    assert sizes == {
        "nccl": "nccl",
        "dcgm": "dcgm",
        "node": "dcgm",
        "nvbandwidth": "dcgm",
        "training": None,
        "rdma": "nccl",
        "linkcounters": "nccl",
        "rdmapair": "nccl",
        "burnin": "dcgm",
    }
    pods = load_catalog().pods
    assert pods.named("nccl") is pods.nccl
    assert pods.named("dcgm") is pods.dcgm
    assert pods.named(None) is None


def test_nvcre_sizes_only_training_pods_as_its_entries_default() -> None:
    assert KINDS["training"].nvcre_pod == (64_000, 500 * 2**30)  # cpu 64, memory 500Gi


def test_only_nccl_and_dcgm_logs_name_the_versions_an_archive_lists() -> None:
    """`log_versions`: NCCL's and DCGM's in a trainer-mode archive's provenance, no other's.

    Burn-in's records name DCGM's version too; the archive has never listed them.
    """
    named = {k.name: k.log_versions for k in KINDS.values() if k.log_versions is not None}
    assert named == {"nccl": "nccl", "dcgm": "dcgm"}
