"""Trainer mode's next retest round on a fabric site: bisection written as a site that renders."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, cast

import yaml
from fabricfactory import fleet_inventory, write_project

from nvcregen.results.nodes import NodeRun, NodeVerdict
from nvcregen.retest.narrow import narrow, narrowed_data, write_narrowed
from nvcregen.retest.sitefile import compile_retest

if TYPE_CHECKING:
    from nvcregen.report.archive import ReadArchive


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


def health(failed: tuple[str, ...], nodes: tuple[str, ...]) -> list[tuple[tuple[str, ...], bool]]:
    """One node-health run per node, as collect reads them: a group of one node each."""
    return [((n,), n in failed) for n in nodes]


def with_health(
    groups: list[tuple[tuple[str, ...], bool]], checks: list[tuple[tuple[str, ...], bool]]
) -> list[NodeVerdict]:
    """`verdicts` with node-health runs first, each node failed by one marked failed."""
    runs: dict[str, list[NodeRun]] = {}
    for nodes, failed in checks:
        word = "fail" if failed else "pass"
        runs.setdefault(nodes[0], []).append(
            NodeRun(stage="health", test="node-health", nodes=nodes, word=word)
        )
    for verdict in verdicts(groups):
        runs.setdefault(verdict.node, []).extend(verdict.runs)
    bad = {nodes[0] for nodes, failed in checks if failed}
    return [
        NodeVerdict(
            node=n, status="failed" if n in bad else "cleared", word="fail" if n in bad else "pass",
            runs=tuple(r),
        )
        for n, r in runs.items()
    ]  # fmt: skip


def test_nodes_passing_node_health_are_not_cleared_of_a_fabric_failure(tmp_path: Path) -> None:
    # node-health runs one node at a time: passing it says nothing of the node's NICs
    data = yaml.safe_load(write_project(tmp_path, 16, 4).read_text())
    failing = names(0, 1, 2, 3, 12, 13, 14, 15)
    found = narrow(
        with_health([(failing, True), (names(4, 5, 6, 7, 8, 9, 10, 11), False)],
                    health((), names(*range(16)))),
        data,
        fleet_inventory(16, 4),
    )  # fmt: skip
    assert found is not None and found.named is None
    assert found.groups == (names(0, 1, 2, 3), names(12, 13, 14, 15))
    assert found.tests == (("fabric", "nccl-all-reduce"),)


def test_a_node_failed_by_node_health_is_not_retested(tmp_path: Path) -> None:
    data = yaml.safe_load(write_project(tmp_path, 16, 4).read_text())
    inventory = fleet_inventory(16, 4)
    everyone = names(*range(16))
    # its fabric group failed too: the failure is the node's, nothing is left to retest
    alone = narrow(
        with_health([(names(0, 1, 2, 3, 12, 13, 14, 15), True), (names(4, 5, 6, 7), False)],
                    health(names(13), everyone)),
        data,
        inventory,
    )  # fmt: skip
    assert alone is not None and alone.groups == ()
    assert alone.named == "node gpu-0013 (failed node-health alone)"
    # a failure it is not in is narrowed without it: it is no cleared partner of a retest
    other = narrow(
        with_health([(names(0, 1, 2, 3, 12, 13, 14, 15), True), (names(4, 5, 6, 7), False)],
                    health(names(5), everyone)),
        data,
        inventory,
    )  # fmt: skip
    assert other is not None and other.named is None and other.groups
    assert other.health == names(5)
    assert all(names(5)[0] not in group for group in other.groups)
    assert other.tests == (("fabric", "nccl-all-reduce"),)


def test_retest_writes_the_round_and_names_who_failed_node_health(tmp_path: Path) -> None:
    site = write_project(tmp_path, 16, 4)
    data = yaml.safe_load(site.read_text())
    nodes = with_health(
        [(names(0, 1, 2, 3, 12, 13, 14, 15), True), (names(4, 5, 6, 7), False)],
        health(names(5), names(*range(16))),
    )
    summary = SimpleNamespace(site="fleet", run_id="r1")
    archive = cast(
        "ReadArchive", SimpleNamespace(summary=summary, verdicts=SimpleNamespace(nodes=nodes))
    )
    written = write_narrowed(archive, archive.verdicts.nodes, data, None, tmp_path, site)
    assert written is not None
    target, lines = written
    assert target == tmp_path / "sites" / "fleet-retest.yaml" and target.is_file()
    spec = yaml.safe_load(target.read_text())["spec"]  # installs nothing the original does
    assert spec["nvcre"]["managed"] is False
    assert spec["gitops"]["healthChecks"] == "existing"
    assert lines == (
        "retest fleet-retest: 2 groups: [gpu-0000,gpu-0001,gpu-0002,gpu-0003]; "
        "[gpu-0012,gpu-0013,gpu-0014,gpu-0015]",
        "failed alone, not retested (quarantine): gpu-0005",
    )


def test_nodes_passing_a_single_node_stage_are_not_cleared_of_a_fabric_failure(
    tmp_path: Path,
) -> None:
    # an intra-node all-reduce crosses no NIC and no uplink: passing it clears no node
    data = yaml.safe_load(write_project(tmp_path, 16, 4).read_text())
    everyone = names(*range(16))
    alone = [
        NodeRun(stage="one", scope="intra-node", test="nccl-all-reduce", nodes=(n,), word="pass")
        for n in everyone
    ]
    nodes = [
        v.model_copy(update={"runs": (alone[int(v.node[4:])], *v.runs)})
        for v in verdicts([(names(0, 1, 2, 3, 12, 13, 14, 15), True), (names(4, 5, 6, 7), False)])
    ]
    found = narrow(nodes, data, fleet_inventory(16, 4))
    assert found is not None and found.named is None
    assert found.groups == (names(0, 1, 2, 3), names(12, 13, 14, 15))
    # a narrowing round's own lone suspect runs intra-node: that run still counts
    lone = NodeRun(stage="narrow1", scope="intra-node", test="nccl-all-reduce", nodes=names(3),
                   word="fail")  # fmt: skip
    named = narrow(
        [NodeVerdict(node="gpu-0003", status="failed", word="fail", runs=(lone,))],
        data,
        fleet_inventory(16, 4),
    )
    assert named is not None and named.named == "node gpu-0003"


def test_the_archive_s_text_reaches_the_narrowing_header_escaped(tmp_path: Path) -> None:
    """summary.json is untrusted: a control character in it is written escaped, no error."""
    site = write_project(tmp_path, 16, 4)
    data = yaml.safe_load(site.read_text())
    nodes = with_health(
        [(names(0, 1, 2, 3, 12, 13, 14, 15), True), (names(4, 5, 6, 7), False)],
        health(names(5), names(*range(16))),
    )
    summary = SimpleNamespace(site="fleet\x1b[2J", run_id="r1\rspec: {}")
    archive = cast(
        "ReadArchive", SimpleNamespace(summary=summary, verdicts=SimpleNamespace(nodes=nodes))
    )
    written = write_narrowed(archive, nodes, data, None, tmp_path, site)
    assert written is not None and written[0] is not None
    text = written[0].read_text()
    assert "# Narrowing retest of site fleet\\x1b[2J, run r1\\x0dspec: {}, written by" in text
    assert "\x1b" not in text and "\r" not in text
