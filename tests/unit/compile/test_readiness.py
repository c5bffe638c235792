"""Tests of NVCRE mode's readiness layer (engines/readiness/nvcre/layer.py): Certifications,
WorkloadRuns and the LogProfile."""

from __future__ import annotations

import re
from typing import Any

import pytest
from dcgmscript import DOWNWARD, begin_line
from sitefactory import edit, site, site_yaml, units_of

from nvcregen.catalog.models import TestEntry as Entry
from nvcregen.core import units
from nvcregen.core.manifest import Manifest
from nvcregen.core.nvcre import CERTIFICATION_NAME_MAX, WORKLOADRUN_NAME_MAX
from nvcregen.engines.readiness.nvcre import layer as nvcre
from nvcregen.engines.readiness.nvcre.layer import NCCL_LOG_PROFILE, readiness_manifests
from nvcregen.kindapi import registry

DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
HOSTENGINE = "nvidia-dcgm.gpu-operator.svc:5555"  # the one NVCRE's dcgm-level4 entry uses

POOL = """\
- name: h20
  model: H20-3e
  productLabels: [NVIDIA-H20-3e]
  nodes: [node-a, node-b]
  gpusPerNode: 8
  nics:
    count: 4
    fabric: roce
    speed: 200Gb/s
    hcas: [mlx5_0, mlx5_1, mlx5_2, mlx5_3]
    resourceName: rdma/hca
    gidIndex: 3
    socketInterface: eth0
"""
STAGES = """\
- name: single-node
  scope: intra-node
  tests: [dcgm-l1, dcgm-l2, nccl-all-reduce, nccl-all-gather, dcgm-l4]
- name: two-node
  scope: inter-node
  nodesPerJob: 2
  tests: [nccl-all-reduce, nccl-alltoall, nccl-all-reduce-tcp, training-goodput]
- name: pinned
  scope: inter-node
  pinTransport: true
  tests: [nccl-all-reduce]
"""
THRESHOLDS = """\
- {test: nccl-all-reduce, scope: intra-node, busbw: ">= 420 GB/s"}
- {test: nccl-all-reduce, scope: inter-node, transport: IB, at: 1GiB, busbw: ">= 2880 Gb/s"}
- {test: nccl-all-reduce, scope: inter-node, busbw: ">= 380 GB/s"}
- {test: nccl-all-reduce, scope: inter-node, busbw: ">= 360 GB/s"}
"""


def lab_yaml(**overrides: Any) -> str:
    args: dict[str, Any] = {
        "name": "h20-lab",
        "pools": POOL,
        "stages": STAGES,
        "thresholds": THRESHOLDS,
        "rounds": 3,
        "dependencies": f'dcgm: {{hostengine: "{HOSTENGINE}"}}',
    }
    return site_yaml(**(args | overrides))


def manifests(text: str | None = None) -> list[Manifest]:
    text = lab_yaml() if text is None else text
    return readiness_manifests(site(text), units_of(text))


def one(found: list[Manifest], kind: str, stage: str, test: str | None = None) -> Manifest:
    hits = [
        m
        for m in found
        if m.kind == kind
        and m.obj["spec"].get("workloadMetadata", {}).get("labels", {}).get("nvcregen.io/stage")
        == stage
        and (
            test is None or m.obj["spec"]["workloadMetadata"]["labels"]["nvcregen.io/test"] == test
        )
    ]
    assert len(hits) == 1, [m.name for m in found]
    return hits[0]


def categories(found: list[Manifest]) -> list[dict[str, Any]]:
    return [c for m in found if m.kind == "Certification" for c in m.obj["spec"]["categories"]]


def env_of(run: Manifest) -> dict[str, str]:
    return {e["name"]: e["value"] for e in run.obj["spec"]["env"]}


def x_pairs(run: Manifest) -> dict[str, str]:
    args = run.obj["spec"]["framework"]["mpi"]["mpiArgs"]
    assert args[::2] == ["-x"] * (len(args) // 2)
    return dict(a.split("=", 1) for a in args[1::2])


# Which objects


def test_one_certification_per_stage_with_catalog_tests_and_a_workloadrun_for_the_rest() -> None:
    found = manifests()
    assert [(m.kind, m.source) for m in found] == [
        ("Certification", "/spec/readiness/stages/0"),
        ("WorkloadRun", "/spec/readiness/stages/0/tests/0"),  # dcgm-l1
        ("WorkloadRun", "/spec/readiness/stages/0/tests/1"),  # dcgm-l2
        ("Certification", "/spec/readiness/stages/1"),
        ("WorkloadRun", "/spec/readiness/stages/1/tests/0"),  # RDMA on a model NVCRE lacks
        ("WorkloadRun", "/spec/readiness/stages/1/tests/1"),  # likewise
        ("WorkloadRun", "/spec/readiness/stages/1/tests/2"),  # the TCP baseline
        ("WorkloadRun", "/spec/readiness/stages/2/tests/0"),  # pinned: no Certification
        ("LogProfile", "/spec/readiness"),
    ]
    single, two = (m for m in found if m.kind == "Certification")
    assert [c["variant"] for c in single.obj["spec"]["categories"]] == [
        "nccl-all-reduce",
        "nccl-all-gather",
        "dcgm-level4",
    ]
    assert [c["variant"] for c in two.obj["spec"]["categories"]] == ["nemotron5-8b"]
    assert {m.obj["metadata"]["namespace"] for m in found if m.kind != "LogProfile"} == {"nvcre"}


def test_rdma_collectives_on_a_model_nvcre_knows_stay_categories() -> None:
    pool = edit(POOL, "  model: H20-3e\n  productLabels: [NVIDIA-H20-3e]\n", "  model: H100\n")
    two = one(manifests(lab_yaml(pools=pool)), "Certification", "two-node")
    variants = [c["variant"] for c in two.obj["spec"]["categories"]]
    assert variants == ["nccl-all-reduce", "nccl-alltoall", "nemotron5-8b"]


def test_rdma_workloadruns_name_their_nics_in_their_own_resources() -> None:
    run = one(manifests(), "WorkloadRun", "two-node", "nccl-alltoall").obj["spec"]
    assert run["resources"]["limits"]["rdma/hca"] == 4
    assert run["resources"]["limits"]["nvidia.com/gpu"] == 8
    assert (run["mlnxPerNode"], run["nicResourceName"]) == (4, "rdma/hca")
    assert {e["name"]: e["value"] for e in run["env"]}["NCCL_NET"] == "IB"


def test_certification_spec_top_level() -> None:
    cert = one(manifests(), "Certification", "two-node")
    spec = cert.obj["spec"]
    assert spec["maxConcurrent"] == 2
    assert spec["repeatCount"] == 3
    assert spec["gpusPerNode"] == 8
    assert spec["mlnxPerNode"] == 4
    assert spec["nicResourceName"] == "rdma/hca"
    assert spec["workloadMetadata"] == {
        "labels": {
            "nvcregen.io/site": "h20-lab",
            "nvcregen.io/stage": "two-node",
            "kueue.x-k8s.io/queue-name": "readiness",
            "kueue.x-k8s.io/priority-class": "h20-lab-two-node",
        }
    }
    assert cert.catalog == ("hardware/h20-3e.yaml", "tests/training-goodput.yaml")


# Categories


def test_every_category_states_every_count_explicitly() -> None:
    found = categories(manifests())
    assert len(found) == 4
    for category in found:
        options = category["options"]
        assert category["domain"]
        assert category["variant"]
        for key in ("gpusPerNode", "mlnxPerNode", "nodesPerJob", "testScale", "timeoutPerJob"):
            assert key in options, (category["variant"], key)
        assert options["gpusPerNode"] == 8  # never NVCRE's 4-GPU fallback for H20-3e
        assert options["image"].startswith("nvcr.io/nvidia/")
        assert "@sha256:" in options["image"]
        units.parse_duration(options["timeoutPerJob"])


# Timeouts: the expected duration x2, in whole minutes: all-reduce over NVLink 6m15s,
# DCGM level 4 30s + 90m, all-to-all over 4 x 200 Gb/s RoCE about 68m, training 56m40s.
@pytest.mark.parametrize(
    ("stage", "variant", "scale", "nodes", "nics", "timeout"),
    [
        ("single-node", "nccl-all-reduce", "intra-node", 1, 0, "13m"),
        ("single-node", "dcgm-level4", "intra-node", 1, 0, "3h1m"),
        ("two-node", "nemotron5-8b", "full-scale", 2, 4, "1h54m"),
    ],
)
def test_category_counts_by_scope(
    stage: str, variant: str, scale: str, nodes: int, nics: int, timeout: str
) -> None:
    cert = one(manifests(), "Certification", stage)
    (options,) = [c["options"] for c in cert.obj["spec"]["categories"] if c["variant"] == variant]
    assert options["testScale"] == scale
    assert options["nodesPerJob"] == nodes
    assert options["mlnxPerNode"] == nics
    assert options["timeoutPerJob"] == timeout
    if nics:
        assert options["nicResourceName"] == "rdma/hca"
    else:
        assert "nicResourceName" not in options  # intra-node work asks for no NICs


def test_nccl_and_training_category_options() -> None:
    found = manifests()
    single = one(found, "Certification", "single-node").obj["spec"]["categories"]
    nccl = single[0]["options"]
    assert (nccl["maxBytes"], nccl["numIterations"], nccl["numCycles"]) == ("16G", 100, 10)
    (training,) = [c["options"] for c in categories(found) if c["variant"] == "nemotron5-8b"]
    assert training["enableCheckpoint"] is True
    assert (training["maxSteps"], training["saveInterval"]) == (500, 100)
    assert training["storageSize"] == "1Ti"
    assert "thresholds" not in training


def test_target_of_a_named_pool() -> None:
    cert = one(manifests(), "Certification", "single-node")
    assert cert.obj["spec"]["target"] == {
        "nodeSelector": {"nvidia.com/gpu.present": "true"},
        "matchExpressions": [
            {"key": "nvidia.com/gpu.product", "operator": "In", "values": ["NVIDIA-H20-3e"]}
        ],
        "nodeNames": ["node-a", "node-b"],
    }


def test_target_of_a_selector_pool_uses_catalog_labels() -> None:
    pool = edit(POOL, "nodes: [node-a, node-b]", "selector: {pool: h20}\n  nodeCount: 2")
    pool = edit(pool, "  productLabels: [NVIDIA-H20-3e]\n", "")
    cert = one(manifests(lab_yaml(pools=pool)), "Certification", "two-node")
    assert cert.obj["spec"]["target"] == {
        "nodeSelector": {"nvidia.com/gpu.present": "true", "pool": "h20"},
        "matchExpressions": [
            {"key": "nvidia.com/gpu.product", "operator": "In", "values": ["NVIDIA-H20-3e"]}
        ],
    }


def test_thresholds_of_one_key_are_joined_with_and_and_deduplicated() -> None:
    found = manifests()
    single = one(found, "Certification", "single-node").obj["spec"]["categories"]
    two = one(found, "WorkloadRun", "two-node", "nccl-all-reduce").obj["spec"]
    assert single[0]["options"]["thresholds"] == {"busBandwidthGBps": "value >= 420.0"}
    # 2880 Gb/s and 360 GB/s compile to the same expression, kept once
    assert two["thresholds"] == {"busBandwidthGBps": "value >= 360.0 && value >= 380.0"}
    assert "thresholds" not in one(found, "WorkloadRun", "two-node", "nccl-alltoall").obj["spec"]
    pinned = one(found, "WorkloadRun", "pinned", "nccl-all-reduce")
    assert pinned.obj["spec"]["thresholds"] == two["thresholds"]


# WorkloadRuns


def test_tcp_baseline_forbids_rdma_in_env_and_on_every_rank() -> None:
    run = one(manifests(), "WorkloadRun", "two-node", "nccl-all-reduce-tcp")
    spec = run.obj["spec"]
    env = env_of(run)
    assert env["NCCL_NET"] == "Socket"
    assert env["NCCL_IB_DISABLE"] == "1"
    assert "NCCL_IB_HCA" not in env
    assert env["NCCL_SOCKET_IFNAME"] == "eth0"
    assert x_pairs(run) == env  # every variable reaches every rank with -x
    assert spec["mlnxPerNode"] == 0
    assert "nicResourceName" not in spec
    assert spec["numNodes"] == 2
    assert spec["orchestration"] == {
        "testScale": "full-scale",
        "repeatCount": 3,
        "maxConcurrent": 2,
        "timeoutPerJob": "12m",
    }
    mpi = spec["framework"]["mpi"]
    assert mpi["binary"] == "/usr/local/bin/all_reduce_perf_mpi"
    assert mpi["args"] == ["-b", "8", "-e", "1G", "-f", "2", "-n", "20", "-N", "3"]
    assert spec["bandwidthMeasurement"] == {
        "logProfileRef": f"nvcregen-h20-lab-{NCCL_LOG_PROFILE}",
        "testType": "all_reduce",
    }
    assert spec["workloadMetadata"]["labels"]["nvcregen.io/test"] == "nccl-all-reduce-tcp"


def test_pinned_rdma_run_demands_ib_and_the_exact_hcas() -> None:
    run = one(manifests(), "WorkloadRun", "pinned", "nccl-all-reduce")
    env = env_of(run)
    assert env["NCCL_NET"] == "IB"
    assert env["NCCL_IB_HCA"] == "=mlx5_0,mlx5_1,mlx5_2,mlx5_3"
    assert env["NCCL_IB_GID_INDEX"] == "3"
    assert "NCCL_IB_DISABLE" not in env
    assert x_pairs(run) == env
    spec = run.obj["spec"]
    assert (spec["mlnxPerNode"], spec["nicResourceName"]) == (4, "rdma/hca")
    assert spec["numNodes"] == 2  # both nodes of the pool


def test_pinned_rdma_run_without_gid_index() -> None:
    pool = edit(POOL, "    gidIndex: 3\n", "")
    env = env_of(one(manifests(lab_yaml(pools=pool)), "WorkloadRun", "pinned", "nccl-all-reduce"))
    assert env["NCCL_NET"] == "IB"
    assert "NCCL_IB_GID_INDEX" not in env


def timeout_parts(script: str) -> tuple[int, int]:
    match = re.search(r"timeout --kill-after=(\d+)s (\d+)s dcgmi diag", script)
    assert match is not None, script
    return int(match[1]), int(match[2])


@pytest.mark.parametrize(("test", "level"), [("dcgm-l1", 1), ("dcgm-l2", 2)])
def test_dcgm_run_has_its_level_and_a_deadline_inside_the_job_timeout(
    test: str, level: int
) -> None:
    run = one(manifests(), "WorkloadRun", "single-node", test)
    spec = run.obj["spec"]
    command = spec["framework"]["exec"]["command"]
    assert command[:2] == ["/bin/bash", "-c"]
    script = command[2]
    assert f"--run {level} " in script
    assert "nv-hostengine\n" in script  # levels 1-3 bring their own hostengine
    kill_after, deadline = timeout_parts(script)
    job_s = units.parse_duration(spec["orchestration"]["timeoutPerJob"]) // 1000
    assert deadline + kill_after < job_s
    assert deadline >= job_s // 2  # and not so short that a healthy run is cut
    assert (spec["mlnxPerNode"], spec["numNodes"]) == (0, 1)
    assert spec["orchestration"]["testScale"] == "intra-node"
    assert spec["image"].startswith("nvcr.io/nvidia/cloud-native/dcgm:")
    assert spec["env"] == DOWNWARD  # a WorkloadRun's env is core/v1's: fieldRef works
    assert begin_line(script, "node-a") == ("node-a", "pod-1")
    assert "bandwidthMeasurement" not in spec


@pytest.mark.parametrize("timeout", ["1m", "90s", "2m", "5m", "3h"])
def test_dcgm_deadline_for_a_stage_timeout(timeout: str) -> None:
    stages = f"- {{name: s, scope: intra-node, timeoutPerJob: {timeout}, tests: [dcgm-l1]}}"
    (run,) = manifests(lab_yaml(stages=stages, thresholds=""))
    job_ms = units.parse_duration(run.obj["spec"]["orchestration"]["timeoutPerJob"])
    assert job_ms == units.parse_duration(timeout)
    kill_after, deadline = timeout_parts(run.obj["spec"]["framework"]["exec"]["command"][2])
    assert 0 < deadline + kill_after < job_ms // 1000


def test_dcgm_l4_with_another_hostengine_runs_against_it() -> None:
    text = lab_yaml(
        dependencies='dcgm: {hostengine: "dcgm.monitoring.svc:5555"}',
        stages="- {name: s, scope: intra-node, tests: [dcgm-l4]}",
        thresholds="",
    )
    (run,) = manifests(text)
    assert run.kind == "WorkloadRun"
    script = run.obj["spec"]["framework"]["exec"]["command"][2]
    assert "host=dcgm.monitoring.svc:5555\n" in script
    assert "nv-hostengine" not in script
    assert "--run 4 " in script


# LogProfile


def test_log_profile_only_with_an_nccl_workloadrun() -> None:
    default = manifests(site_yaml())  # dcgm-l1 run plus NCCL categories
    assert "LogProfile" not in [m.kind for m in default]
    stages = "- {name: s, scope: inter-node, tests: [nccl-all-reduce-tcp]}"
    with_tcp = manifests(site_yaml(stages=stages))
    assert [m.kind for m in with_tcp] == ["WorkloadRun", "LogProfile"]
    profile = with_tcp[1]
    assert profile.name == "nvcregen-lab-nccl-bandwidth"  # cluster-scoped: per site
    pattern = re.compile(profile.obj["spec"]["patterns"]["bandwidthResult"]["regex"])
    example = profile.obj["spec"]["patterns"]["bandwidthResult"]["example"]
    match = pattern.search(example)
    assert match is not None
    assert (match["size"], match["algBW"], match["busBW"]) == ("1073741824", "227.99", "427.48")


class _CollectiveWithoutSweep:
    """A collective kind (nccl's traits) that says it sweeps nothing (a bug)."""

    def __init__(self, real: object) -> None:
        self._real = real

    def __getattr__(self, name: str) -> object:
        return getattr(self._real, name)

    def sweep(self, test: object) -> None:
        return None


def test_a_collective_kind_without_a_sweep_is_a_bug_named(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def kind_of(test: Entry) -> object:
        found = registry.kind_of(test)
        return _CollectiveWithoutSweep(found) if found.collective else found

    monkeypatch.setattr(nvcre, "kind_of", kind_of)
    stages = "- {name: s, scope: inter-node, tests: [nccl-all-reduce-tcp]}"
    wrong = "test nccl-all-reduce-tcp: the nccl kind is collective but sweeps nothing"
    with pytest.raises(TypeError, match=wrong):
        manifests(site_yaml(stages=stages))


# Names


def names(found: list[Manifest]) -> dict[str, str]:
    """Object names keyed by source pointer."""
    return {m.source: m.name for m in found}


def test_names_are_short_dns_labels() -> None:
    long_name = "a" * 20 + "-" + "b" * 11  # 32 characters, the longest site name
    stages = STAGES.replace("two-node", "two-node-collectives-over-roce-x")
    found = manifests(lab_yaml(name=long_name, stages=stages))
    for m in found:
        assert DNS_LABEL.match(m.name), m.name
        limit = {"Certification": CERTIFICATION_NAME_MAX, "WorkloadRun": WORKLOADRUN_NAME_MAX}
        assert len(m.name) <= limit.get(m.kind, 63), m.name
        assert re.search(r"-[0-9a-f]{8}$", m.name) or m.kind == "LogProfile", m.name
    assert len({m.name for m in found}) == len(found)
    # cut at a '-' boundary, keeping the readable start and the whole hash
    single = one(found, "Certification", "single-node")
    assert re.fullmatch(r"a{20}-[0-9a-f]{8}", single.name), single.name
    tcp = one(found, "WorkloadRun", "two-node-collectives-over-roce-x", "nccl-all-reduce-tcp")
    assert re.fullmatch(r"a{20}-b{11}-two-node-[0-9a-f]{8}", tcp.name), tcp.name


def test_names_are_stable_and_follow_the_spec() -> None:
    base = names(manifests())
    assert names(manifests()) == base
    more_rounds = names(manifests(lab_yaml(rounds=4)))
    changed = [p for p in base if p != "/spec/readiness" and more_rounds[p] == base[p]]
    assert changed == []  # repeatCount is in every spec: every name changes
    # A threshold only for the intra-node all-reduce changes only the single-node Certification
    thresholds = THRESHOLDS.replace(">= 420 GB/s", ">= 430 GB/s")
    other = names(manifests(lab_yaml(thresholds=thresholds)))
    assert [p for p in base if other[p] != base[p]] == ["/spec/readiness/stages/0"]
