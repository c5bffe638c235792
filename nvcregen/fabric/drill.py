"""`nvcregen drill`: the plan and its retests replayed against one injected fault (pure).

The plan's stages run in order, each stage's groups round by round (a fabric stage's
tournament rounds; otherwise one round of its groups), until a round has a failing
group. From there `localise` picks each retest round's groups until the fault is named.
A group fails iff it holds the faulty node, or has nodes under both leaves of the faulty
link. Each job takes its test's expected duration; a round takes as many waves as the
window's concurrency needs. Repeats (`rounds`) are left out: a fault that always fails
fails the first time.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from nvcregen.fabric.localise import Group, Knowledge, learn, links_of, next_round

MAX_RETEST_ROUNDS = 64  # far more than any search over 100,000 nodes needs
_MS_PER_HOUR = 3_600_000


@dataclass(frozen=True)
class Fault:
    """One injected fault: a node, or the link between two leaves (sorted).

    A rail (`hca` of `node`, its switch port `port` where the inventory knows it) fails
    every group holding its node, as the node does: a failing rail is found as its node,
    and the RDMA verdicts name the HCA and the port (docs/design/0022-rdma-rails.md).
    """

    node: str | None = None
    link: tuple[str, str] | None = None
    hca: str | None = None
    port: str = ""  # ` (leaf-07 Ethernet1/12)` where the inventory's cabling map knows it

    @property
    def shown(self) -> str:
        """The fault as injected: `rail gpu-0042 mlx5_3 (leaf-07 Ethernet1/12)`, else as named."""
        return f"rail {self.node} {self.hca}{self.port}" if self.hca else str(self)

    def breaks(self, group: Sequence[str], leaf: Mapping[str, str]) -> bool:
        """Whether a group running on these nodes fails."""
        if self.node is not None:
            return self.node in group
        return self.link is not None and self.link in links_of(group, leaf)

    def __str__(self) -> str:
        return f"node {self.node}" if self.node is not None else f"link {','.join(self.link or ())}"


@dataclass(frozen=True)
class PlanRound:
    """One round of the plan: a stage's groups that run together, and each job's duration."""

    stage: str
    groups: tuple[Group, ...]
    job_ms: int
    gpus_per_node: int


@dataclass(frozen=True)
class RoundResult:
    """A round as the drill ran it."""

    label: str
    groups: tuple[Group, ...]
    failed: tuple[bool, ...]
    wall_ms: int
    gpu_hours: float


@dataclass(frozen=True)
class Drill:
    """The whole drill: plan rounds until the first failure, then the retests, and the verdict."""

    fault: Fault
    plan_rounds: tuple[RoundResult, ...]
    retests: tuple[RoundResult, ...]
    named: str

    @property
    def found(self) -> bool:
        """Whether the fault named is the one injected."""
        return self.named == str(self.fault)

    @property
    def retest_jobs(self) -> int:
        """Jobs after the first failing round, until the fault is named."""
        return sum(len(r.groups) for r in self.retests)


def run_drill(
    rounds: Sequence[PlanRound],
    fault: Fault,
    leaf: Mapping[str, str],
    nodes: Sequence[str],
    window: int,
) -> Drill:
    """Replay plan rounds and retests against one fault (see the module docstring)."""
    done: list[RoundResult] = []
    results: list[tuple[Group, bool]] = []
    failing: PlanRound | None = None
    for number, planned in enumerate(rounds, 1):
        failed = tuple(fault.breaks(g, leaf) for g in planned.groups)
        label = f"{planned.stage} round {number}"
        done.append(_result(label, planned.groups, failed, planned, window))
        results += zip(planned.groups, failed, strict=True)
        if any(failed):
            failing = planned
            break
    if failing is None:
        return Drill(fault, tuple(done), (), "nothing (no group failed)")
    known: Knowledge = learn(None, results, leaf)
    retests: list[RoundResult] = []
    while known.named() is None and len(retests) < MAX_RETEST_ROUNDS:
        groups = tuple(next_round(known, leaf, nodes))
        if not groups:
            break
        failed = tuple(fault.breaks(g, leaf) for g in groups)
        retests.append(_result(f"retest {len(retests) + 1}", groups, failed, failing, window))
        known = learn(known, list(zip(groups, failed, strict=True)), leaf)
    named = known.named() or (
        f"not named: {len(known.suspects)} nodes, {len(known.links)} links still suspect"
    )
    return Drill(fault, tuple(done), tuple(retests), named)


def _result(
    label: str, groups: tuple[Group, ...], failed: tuple[bool, ...], planned: PlanRound, window: int
) -> RoundResult:
    waves = math.ceil(len(groups) / max(1, window))
    node_count = sum(len(g) for g in groups)
    gpu_hours = node_count * planned.gpus_per_node * planned.job_ms / _MS_PER_HOUR
    return RoundResult(label, groups, failed, waves * planned.job_ms, gpu_hours)
