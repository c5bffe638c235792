"""Failing rails in a run's node verdicts, and `retest --rail NODE/HCA`'s target (pure).

A rail is not a unit the plan schedules: each run of a node's RDMA test measures every
rail of it, so a failing rail is re-run by re-running its node's test (a loopback or link
counters run, which failed the node alone) or the pair holding it (a pair run, whose
nodes are suspects, paired again with cleared nodes). Which rails failed is read from
the node's verdict reasons, where collect named them (`gpu-007 mlx5_3: ...`, `node-a ->
node-b mlx5_3 ...`, `gpu-07 mlx5_3 port 1 ...`), but only as the site's own HCA names
(`nics.hcas` of the node's pool) next to the node's own name: nothing of the archive's
text is taken as a name.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from nvcregen.core import codes
from nvcregen.core.terminal import one_line
from nvcregen.results.nodes import NodeVerdict
from nvcregen.retest.pairs import RetestPlan, failing_tests

BAD_RAIL = codes.NVC792.code
_NAME = "A-Za-z0-9_.:-"  # the characters of a node or HCA name; a name ends at any other


class RailError(ValueError):
    """`--rail` names no failing rail of the run; the message says which there are."""


@dataclass(frozen=True)
class RailTarget:
    """The node verdict holding a failing rail, and the HCA."""

    node: NodeVerdict
    hca: str

    @property
    def alone(self) -> bool:
        """Whether the node failed alone (its rail's runs were its own), not as a suspect."""
        return self.node.status == "failed"


def pool_hcas(data: Mapping[str, Any]) -> dict[str, tuple[str, ...]]:
    """Each named node's pool's HCAs (`nics.hcas`), from the site's plain data."""
    found: dict[str, tuple[str, ...]] = {}
    for pool in data["spec"]["nodePools"]:
        hcas = tuple(str(h) for h in (pool.get("nics") or {}).get("hcas") or ())
        for node in pool.get("nodes") or ():
            found.setdefault(str(node), hcas)
    return found


def failing_rails(node: NodeVerdict, hcas: Sequence[str]) -> tuple[str, ...]:
    """The HCAs (of `hcas`, the site's) that the node's failure reasons name beside it."""
    if node.status not in {"failed", "suspect"}:
        return ()
    text = "\n".join(node.reasons)
    return tuple(hca for hca in hcas if names_rail(text, node.node, hca))


def names_rail(text: str, node: str, hca: str) -> bool:
    """Whether `text` names the rail: the node (or a pair holding it), then the HCA."""
    me = re.escape(node)
    other = f"[{_NAME}]+"
    side = rf"(?:{me} -> {other}|{other} -> {me}|{me}(?: \(leaf [{_NAME}]+\))?)"
    end = rf"(?![A-Za-z0-9_.-]|:[{_NAME}])"  # a name goes on, or a message's `: ` follows
    return re.search(rf"(?<![{_NAME}]){side} {re.escape(hca)}{end}", text) is not None


def rail_lines(
    plan: RetestPlan,
    verdicts: Mapping[str, NodeVerdict],
    hcas: Mapping[str, tuple[str, ...]],
    port: Callable[[str, str], str],
) -> list[str]:
    """What `retest` says of each failing rail: the pair that re-runs it, or how to."""
    lines = []
    for batch in plan.batches:
        for pair in batch.pairs:
            node = verdicts[pair.suspect]
            tests = ", ".join(f"{s} / {t}" for s, t in failing_tests(node))
            lines += [
                f"rail {pair.suspect} {hca}{port(pair.suspect, hca)}: re-run beside"
                f" {pair.cleared} ({tests}: every rail of the pair)"
                for hca in failing_rails(node, hcas.get(pair.suspect, ()))
            ]
    for node in plan.failed:
        lines += [
            f"rail {node.node} {hca}{port(node.node, hca)}: failed alone; once repaired,"
            f" `nvcregen retest --rail {node.node}/{hca}` re-runs its node's test"
            for hca in failing_rails(node, hcas.get(node.node, ()))
        ]
    return lines


def rail_target(
    text: str, nodes: Sequence[NodeVerdict], hcas: Mapping[str, tuple[str, ...]]
) -> RailTarget:
    """`--rail NODE/HCA`: the rail, if it failed in the run.

    Raises:
        RailError: Not `NODE/HCA`, or no rail of the run that failed (NVC792); the message
            lists those that did.

    """
    node, _, hca = text.partition("/")
    verdict = next((n for n in nodes if n.node == node), None)
    if verdict is not None and hca in failing_rails(verdict, hcas.get(node, ())):
        return RailTarget(verdict, hca)
    failed = [f"{n.node}/{h}" for n in nodes for h in failing_rails(n, hcas.get(n.node, ()))]
    known = ", ".join(failed[:16]) + (f" and {len(failed) - 16} more" if len(failed) > 16 else "")
    raise RailError(
        f"{BAD_RAIL}: --rail {one_line(text[:200])}: no rail that failed in this run"
        f" ({'its failing rails: ' + known if failed else 'no rail failed in it'})"
    )
