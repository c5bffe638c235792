"""A site prepared for the twin: its Plan rendered and replayed (rehearse/prepare.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from sitefactory import parse, plan_of, site_yaml

from nvcregen.rehearse.prepare import Prepared, prepare
from nvcregen.replay.site import replay_site
from nvcregen.replay.timeline import plan_view

ROOT = Path(__file__).resolve().parents[3]
POOLS = """\
- {name: b, model: H100, nodes: [n3, n4]}
- {name: a, model: H100, nodes: [n1, n2]}
"""
STAGES = """\
- {name: on-a, scope: intra-node, pool: a, tests: [dcgm-l1, nccl-all-reduce]}
- {name: on-b, scope: intra-node, pool: b, tests: [dcgm-l1]}
"""


@pytest.mark.slow
def test_a_trainer_site_is_prepared_from_its_plan(tmp_path: Path) -> None:
    prepared = prepare(ROOT / "sites" / "h20-3e-trainer.yaml", ROOT, tmp_path)
    assert isinstance(prepared, Prepared), prepared
    assert prepared.plan.name == "h20-3e-trainer"
    assert prepared.tree == tmp_path / "tree" / "h20-3e-trainer"
    assert len(prepared.objects) == len(list(prepared.tree.rglob("*.yaml")))
    assert prepared.view == plan_view(replay_site(prepared.objects, prepared.plan.facts))
    assert [p.spec.name for p in prepared.pools] == ["h20"]


def test_the_pools_are_the_plans_in_the_order_its_units_first_name_them() -> None:
    planned = plan_of(*parse(site_yaml(pools=POOLS, stages=STAGES)))
    prepared = Prepared(planned, Path("tree"), (), plan_view(replay_site((), planned.facts)))
    assert [p.spec.name for p in prepared.pools] == ["a", "b"]
    assert prepared.pools[0] is planned.units[0].pool
