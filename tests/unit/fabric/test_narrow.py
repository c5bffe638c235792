"""Trainer mode's next retest round on a fabric site: bisection written as a site that renders."""

from __future__ import annotations

from pathlib import Path

import yaml
from fabricfactory import fleet_inventory, write_project

from nvcregen.report.archive import NodeRun, NodeVerdict
from nvcregen.retest.narrow import narrow, narrowed_data
from nvcregen.retest.sitefile import compile_retest


def verdicts(groups: list[tuple[tuple[str, ...], bool]]) -> list[NodeVerdict]:
    """Node verdicts as collect writes them, from groups and whether each failed."""
    runs: dict[str, list[NodeRun]] = {}
    for nodes, failed in groups:
        run = NodeRun(
            stage="fabric", test="nccl-all-reduce", nodes=nodes, word="fail" if failed else "pass"
        )
        for node in nodes:
            runs.setdefault(node, []).append(run)
    return [
        NodeVerdict(node=n, status="cleared", word="pass", runs=tuple(r)) for n, r in runs.items()
    ]


def names(*numbers: int) -> tuple[str, ...]:
    return tuple(f"gpu-{i:04d}" for i in numbers)


def test_a_failing_leaf_pair_is_retested_leaf_by_leaf(tmp_path: Path) -> None:
    site = write_project(tmp_path, 16, 4)
    data = yaml.safe_load(site.read_text())
    failing = names(0, 1, 2, 3, 12, 13, 14, 15)
    found = narrow(
        verdicts([(failing, True), (names(4, 5, 6, 7, 8, 9, 10, 11), False)]),
        data,
        fleet_inventory(16, 4),
    )
    assert found is not None and found.named is None
    assert found.groups == (names(0, 1, 2, 3), names(12, 13, 14, 15))
    new = narrowed_data(data, found)
    assert [p["nodes"] for p in new["spec"]["nodePools"]] == [list(g) for g in found.groups]
    assert [s["nodesPerJob"] for s in new["spec"]["readiness"]["stages"]] == [4, 4]
    written = compile_retest(new, "narrowing", tmp_path, "fleet-retest.yaml")
    assert written.name == "fleet-retest"


def test_a_leaf_that_fails_alone_is_halved_and_a_link_is_named(tmp_path: Path) -> None:
    site = write_project(tmp_path, 16, 4)
    data = yaml.safe_load(site.read_text())
    inventory = fleet_inventory(16, 4)
    found = narrow(
        verdicts([(names(0, 1, 2, 3), True), (names(12, 13, 14, 15), False)]), data, inventory
    )
    assert found is not None and found.groups == (names(0, 1),)
    link = narrow(
        verdicts(
            [
                (names(0, 1, 2, 3, 12, 13, 14, 15), True),
                (names(0, 1, 2, 3), False),
                (names(12, 13, 14, 15), False),
            ]
        ),
        data,
        inventory,
    )
    assert link is not None and link.named == "link leaf-00,leaf-03"


def test_a_site_without_a_fabric_is_left_to_the_pairs(tmp_path: Path) -> None:
    site = write_project(tmp_path, 16, 4)
    data = yaml.safe_load(site.read_text())
    del data["spec"]["nodePools"][0]["fabric"]
    assert narrow(verdicts([(names(0, 1), True)]), data, fleet_inventory(16, 4)) is None
