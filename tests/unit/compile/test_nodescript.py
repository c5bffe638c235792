"""The compiler's side of per-node kinds: deadlines, scripts and containers (nodescript.py)."""

from __future__ import annotations

import pytest
from sitefactory import catalog, parse
from trainerfactory import SHIPPED

from nvcregen.collect.podlogs import _job_container
from nvcregen.compile.readiness.nodescript import node_container, node_script, outer_deadline_s
from nvcregen.kinds.dcgm.kind import KIND as DCGM
from nvcregen.plan.resolve import plan


@pytest.mark.parametrize(
    ("timeout_ms", "seconds"),
    [(0, 1), (1_000, 1), (20_000, 10), (119_000, 59), (120_000, 60), (121_000, 61), (600_000, 540)],
)
def test_the_outer_deadline_is_a_minute_early_or_half_a_short_timeout(
    timeout_ms: int, seconds: int
) -> None:
    assert outer_deadline_s(timeout_ms) == seconds


def test_a_kind_that_does_not_run_per_node_has_no_script_nor_container() -> None:
    site, _ = parse(SHIPPED.read_text(encoding="utf-8"))
    units = plan(site, catalog())
    nccl = next(u for u in units if u.test.kind == "nccl")
    with pytest.raises(ValueError, match=f"test {nccl.test.name} has no script to run on a node"):
        node_script(site, nccl)
    with pytest.raises(ValueError, match=f"test {nccl.test.name} has no container to run"):
        node_container(site, nccl)
    dcgm = next(u for u in units if u.test.kind == "dcgm")
    container = node_container(site, dcgm)
    assert container["name"] == "dcgm-diag"
    assert container["command"] == ["/bin/bash", "-c", node_script(site, dcgm)]
    assert f"--run {DCGM.block(dcgm.test).level} --json" in container["command"][2]


@pytest.mark.parametrize(
    ("names", "read"),
    [
        (["node-health"], "node-health"),
        (["dcgm-diag"], "dcgm-diag"),
        (["sidecar", "node-health"], "node-health"),
        ([], "dcgm-diag"),
        (["something-else"], "dcgm-diag"),
    ],
)
def test_collect_reads_the_per_node_container_a_job_names(names: list[str], read: str) -> None:
    job = {"spec": {"template": {"spec": {"containers": [{"name": n} for n in names]}}}}
    assert _job_container(job) == read
