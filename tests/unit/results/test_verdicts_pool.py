"""Tests of nvcregen.results.verdicts: a threshold naming a pool judges only its stages."""

from __future__ import annotations

from sitefactory import site, site_yaml

from nvcregen.results.runs import RunResult, RunSet
from nvcregen.results.verdicts import judge

POOLS = """\
- {name: a, model: H100, nodes: [n1, n2]}
- {name: b, model: H100, nodes: [n3, n4]}
"""
STAGES = """\
- {name: on-a, scope: intra-node, pool: a, tests: [nccl-all-reduce]}
- {name: on-b, scope: intra-node, pool: b, tests: [nccl-all-reduce]}
"""
RUNS = RunSet(
    tuple(RunResult(stage=s, scope="intra-node", test="nccl-all-reduce") for s in ("on-a", "on-b"))
)


def stages_judged(threshold: str) -> list[str]:
    text = site_yaml(pools=POOLS, stages=STAGES, thresholds=threshold)
    return [v.stage for v in judge(site(text), RUNS).thresholds]


def test_a_pool_threshold_judges_the_stages_on_that_pool() -> None:
    rule = '- {test: nccl-all-reduce, scope: intra-node, pool: b, busbw: ">= 300 GB/s"}'
    assert stages_judged(rule) == ["on-b"]


def test_a_threshold_without_a_pool_judges_every_stage() -> None:
    rule = '- {test: nccl-all-reduce, scope: intra-node, busbw: ">= 300 GB/s"}'
    assert stages_judged(rule) == ["on-a", "on-b"]
