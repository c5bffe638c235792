"""Compiling and checking a site grows with its nodes, not with their square (issue #22).

Time is the benchmark's business (`make bench`); here the work is counted instead: every
Python function call of building a fleet site's objects, checking them (the render gate,
its replay included) and writing them as YAML, at two sizes. Four times the nodes may
cost at most 4.4 times the calls (linear, plus a tenth for the shared catalog and caches).
A search over every pair of runs, or every node for every pod, costs far more: the replay
as it was before issue #22 made 6.5 times the calls at these two sizes.
"""

from __future__ import annotations

import cProfile
import pstats
from pathlib import Path

import pytest

from nvcregen.catalog.load import load_catalog
from nvcregen.chain.pipeline import Built, Options, build_site
from nvcregen.check.gate import check_manifests
from nvcregen.core.errors import has_errors
from nvcregen.emit.canonical import dump_yaml
from nvcregen.plan.facts import Node
from nvcregen.replay.selectors import Constraint
from tools.fleetsite import Packing, fleet_site, node_names

SMALL, LARGE = 8, 32
LINEAR = 1.1 * LARGE / SMALL


def _compiled(nodes: int, packing: Packing = "perRun") -> int:
    """Python calls of building, checking and dumping a fleet site of `nodes` nodes."""
    catalog = load_catalog()
    profile = cProfile.Profile()
    profile.enable()
    text = fleet_site(nodes, packing=packing)
    built = build_site(text.encode(), "sites/fleet.yaml", catalog, Options())
    assert isinstance(built, Built), getattr(built, "diagnostics", None)
    found = check_manifests(built.manifests, built.plan)
    texts = [dump_yaml(m.obj) for m in built.manifests]
    profile.disable()
    # at 32 nodes per run the readiness Application is a parent of children (shards)
    assert not has_errors(found), [d.message for d in found if d.is_error]
    if packing == "perRun":
        assert len(texts) > 20 * nodes  # a TrainJob or Job per node (or pair), test and round
    return pstats.Stats(profile).total_calls  # type: ignore[attr-defined, no-any-return]


@pytest.mark.slow
@pytest.mark.parametrize("packing", ["perRun", "packed"])
def test_a_fleet_site_compiles_in_linear_calls(packing: Packing) -> None:
    _compiled(SMALL, packing)  # warm the catalog, the schema registry and the checks' memos
    small, large = _compiled(SMALL, packing), _compiled(LARGE, packing)
    assert large <= LINEAR * small, (
        f"{large / small:.2f}x the calls for {LARGE / SMALL:g}x the nodes"
    )


@pytest.mark.slow
def test_each_pod_is_tried_on_the_nodes_it_names(monkeypatch: pytest.MonkeyPatch) -> None:
    # A pinned pod (a node name, a hostname) is tried on its nodes only, not on the fleet:
    # the tries per node stay the same whatever the fleet's size.
    tried: list[str] = []
    allows = Constraint.allows

    def counted(self: Constraint, node: Node) -> bool:
        tried.append(node.name)
        return allows(self, node)

    monkeypatch.setattr(Constraint, "allows", counted)
    catalog = load_catalog()
    per_node = []
    for nodes in (SMALL, LARGE):
        tried.clear()
        built = build_site(fleet_site(nodes).encode(), "sites/fleet.yaml", catalog, Options())
        assert isinstance(built, Built)
        check_manifests(built.manifests, built.plan)
        assert set(tried) == set(node_names(nodes))
        per_node.append(len(tried) / nodes)
    assert per_node[1] <= 1.1 * per_node[0], f"tries per node: {per_node}"


def test_a_site_compiles_with_the_cyclic_collector_paused(monkeypatch: pytest.MonkeyPatch) -> None:
    import gc

    from nvcregen.chain import pipeline, sites

    seen: list[bool] = []

    def compile_one(*args: object) -> object:
        seen.append(gc.isenabled())
        raise RuntimeError("stop")

    monkeypatch.setattr(pipeline, "compile_site", compile_one)
    assert gc.isenabled()
    with pytest.raises(RuntimeError, match="stop"):
        sites.compile_site(Path("x.yaml"), "x.yaml", load_catalog(), Options())
    assert seen == [False]
    assert gc.isenabled()  # back on, even when the compile fails
