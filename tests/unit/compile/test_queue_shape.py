"""The quota arithmetic of the Kueue ClusterQueue (nvcregen.compile.queue.shape).

The factory site has two H100 nodes (8 GPUs, 2 InfiniBand NICs `rdma/ib` each); the
window's `maxConcurrentJobs` is what each case varies.
"""

from __future__ import annotations

import pytest
from sitefactory import catalog, parse, site_yaml
from trainerfactory import trainer_text

from nvcregen.compile.queue.shape import (
    GI,
    PoolQuota,
    format_cpu,
    format_memory,
    job_shape,
    parse_cpu,
    parse_memory,
    pool_quotas,
)
from nvcregen.plan.resolve import plan

INTRA = """\
- name: node
  scope: intra-node
  tests: [nccl-all-reduce]
"""
PAIRS = """\
- name: pairs
  scope: inter-node
  nodesPerJob: 2
  tests: [nccl-all-reduce]
"""
FOUR_NODES = """\
- name: gpu
  model: H100
  nodes: [gpu-1, gpu-2, gpu-3, gpu-4]
  nics: {count: 2, fabric: ib, speed: 400Gb/s, hcas: [mlx5_0, mlx5_1], resourceName: rdma/ib}
"""


def window(jobs: int) -> str:
    return f"{{maxConcurrentJobs: {jobs}, deadline: 12h, gpuHours: 5000}}"


def quota(text: str) -> PoolQuota:
    site, _ = parse(text)
    (found,) = pool_quotas(site, plan(site, catalog()))
    return found


# GPUs: maxConcurrentJobs x GPUs of the largest job, never more than the pool


@pytest.mark.parametrize(("jobs", "gpus"), [(1, 8), (2, 16), (3, 16), (64, 16)])
def test_one_node_jobs_get_the_window_capped_by_the_pool(jobs: int, gpus: int) -> None:
    # 2 jobs x 8 GPUs is exactly the pool's 16; a third job's worth is cut to the pool.
    assert quota(site_yaml(stages=INTRA, window=window(jobs))).gpus == gpus


@pytest.mark.parametrize(("jobs", "gpus"), [(1, 16), (2, 32), (3, 32)])
def test_two_node_jobs_on_four_nodes(jobs: int, gpus: int) -> None:
    text = site_yaml(pools=FOUR_NODES, stages=PAIRS, window=window(jobs))
    assert quota(text).gpus == gpus


def test_the_largest_job_of_the_pool_sizes_the_quota() -> None:
    # One one-node and one two-node test: a single job's worth is the two-node job.
    assert quota(site_yaml(stages=INTRA + PAIRS, window=window(1))).gpus == 16


@pytest.mark.parametrize(("jobs", "nodes"), [(1, 2), (2, 2), (3, 3), (4, 4), (5, 4)])
def test_mixed_sizes_get_the_window_of_the_smallest_job(jobs: int, nodes: int) -> None:
    # Issue 32: N x the two-node job's 2 nodes admitted 2N one-node jobs at once. Now N x
    # the one-node job, at least the two-node job (jobs 1), at most the pool (jobs 5).
    text = site_yaml(pools=FOUR_NODES, stages=INTRA + PAIRS, window=window(jobs))
    found = quota(text)
    assert (found.gpus, found.nics) == (nodes * 8, min(jobs * 4, nodes * 2))


# RDMA NICs: only RDMA tests hold them; capped by the pool's NICs


@pytest.mark.parametrize(("jobs", "nics"), [(1, 4), (2, 8), (3, 8)])
def test_nics_of_rdma_jobs_capped_by_the_pool(jobs: int, nics: int) -> None:
    found = quota(site_yaml(pools=FOUR_NODES, stages=PAIRS, window=window(jobs)))
    assert (found.nic_resource, found.nics) == ("rdma/ib", nics)


def test_intra_node_tests_hold_no_nics() -> None:
    found = quota(site_yaml(stages=INTRA, window=window(2)))
    assert (found.nic_resource, found.nics) == ("rdma/ib", 0)


# pods: whole-node pods capped by the pool, plus NVCRE's launchers


def test_nvcre_counts_a_launcher_per_concurrent_mpi_job() -> None:
    found = quota(site_yaml(stages=INTRA, window=window(2)))
    assert found.pods == 2 + 2


def test_trainer_mode_runs_the_launcher_as_a_node() -> None:
    found = quota(trainer_text(site_yaml(stages=INTRA, window=window(2))))
    assert found.pods == 2


def test_job_shape_of_an_nvcre_two_node_rdma_test() -> None:
    site, _ = parse(site_yaml(stages=PAIRS))
    (unit,) = plan(site, catalog())
    shape = job_shape(site, unit)
    assert (shape.nodes, shape.launchers, shape.pods) == (2, 1, 3)
    assert (shape.gpus, shape.nics) == (16, 4)


# cpu and memory: every pod's known requests plus the site's allowance


def test_cpu_and_memory_with_the_default_allowance() -> None:
    found = quota(site_yaml(stages=INTRA, window=window(2)))
    # 2 GPU pods x (8 + 1 cpu, 32 + 4 Gi; catalog/pods.yaml nccl) + 2 launchers x (2 + 1 cpu,
    # 1 + 4 Gi)
    assert (found.cpu_m, found.memory) == (24_000, 82 * GI)


def test_cpu_and_memory_with_a_written_allowance() -> None:
    dependencies = "kueue: {podAllowance: {cpu: 500m, memory: 1Gi}}\n"
    found = quota(site_yaml(stages=INTRA, window=window(2), dependencies=dependencies))
    assert (found.cpu_m, found.memory) == (2 * 8500 + 2 * 2500, 2 * 33 * GI + 2 * 2 * GI)


def test_nvcre_training_requests_are_counted_per_node() -> None:
    stages = "- {name: train, scope: inter-node, tests: [training-goodput]}\n"
    found = quota(site_yaml(stages=stages, window=window(1)))
    assert (found.cpu_m, found.memory) == (2 * 65_000, 2 * 504 * GI)


def test_trainer_mode_pods_request_their_catalog_size_and_the_allowance() -> None:
    found = quota(trainer_text(site_yaml(stages=INTRA, window=window(2))))
    assert (found.cpu_m, found.memory) == (2 * 9000, 2 * 36 * GI)  # no launcher pods


def test_notes_show_the_arithmetic() -> None:
    found = quota(site_yaml(stages=INTRA, window=window(3)))
    assert found.notes[0].startswith(
        "pool gpu: 2 node(s) = min(max(3 concurrent jobs x 1 nodes of the smallest job, 1 nodes "
        "of the largest), 2 in the pool): at most 3 jobs admitted at once"
    )


# quantities


@pytest.mark.parametrize(("text", "millicores"), [("1", 1000), ("0.5", 500), ("250m", 250)])
def test_parse_cpu(text: str, millicores: int) -> None:
    assert parse_cpu(text) == millicores


@pytest.mark.parametrize(("text", "size"), [("4Gi", 4 * GI), ("512Mi", 2**29), ("10", 10)])
def test_parse_memory(text: str, size: int) -> None:
    assert parse_memory(text) == size


def test_format_quantities() -> None:
    assert [format_cpu(8000), format_cpu(6500)] == ["8", "6500m"]
    assert [format_memory(18 * GI), format_memory(1536 * 2**20), format_memory(3)] == [
        "18Gi",
        "1536Mi",
        "3",
    ]
