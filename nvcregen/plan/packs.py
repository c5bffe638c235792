"""Trainer mode's packed runs: which tests of a stage share one run (pure; issue 33).

With `readiness.packing: packed`, a trainer-mode site no longer makes one run per test,
round and node (or pair). A stage's tests that run on the same nodes with the same image
become one pack, run in sequence in one pod (one node) or one launcher (a pair):

- **node packs**: the tests of an intra-node stage (DCGM levels, node-health, NCCL inside
  one node), one pack per image, each round one Indexed batch/v1 Job per chunk of at
  most `CHUNK` named nodes, one pod per node; never more nodes than
  `window.maxConcurrentJobs`, whose Kueue quota admits that many one-node runs at once
  (`compile/queue/shape.py`): a larger chunk would never be admitted;
- **group packs**: the NCCL tests of an inter-node stage, one TrainJob per round and node
  group (a pair, a leaf) running them one after the other.

Every test keeps its own timeout, exit code and log section, and every verdict stays the
test's, per node or group: collect splits a pack's log back into its tests' sections
(docs/design/0018-fleet-units.md). Tests that cannot share a run stay runs of their own:
a pool without named nodes (its pods go where the scheduler puts them, named by nothing
the plan can check) and a test alone in its pack.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from nvcregen.kindapi.registry import kind_of
from nvcregen.plan.model import TestUnit
from nvcregen.spec.v1alpha1 import Site

CHUNK = 64  # nodes of one node pack's Job: a failure domain of 64 pods, 16 Jobs per 1,024
PACK_PREFIX = "pack-"


@dataclass(frozen=True)
class Pack:
    """Tests of one stage run one after the other in the same run.

    Attributes:
        name: `pack-<n>`, the n-th pack of its stage: the runs' `nvcregen.io/test` label.
        units: The tests, in the stage's order.
        chunk: A node pack's most nodes per Job.

    """

    name: str
    units: tuple[TestUnit, ...]
    chunk: int = CHUNK

    @property
    def first(self) -> TestUnit:
        """The first test: stage, pool, image and node groups are the same for all."""
        return self.units[0]

    @property
    def per_node(self) -> bool:
        """Whether the pack runs on one node at a time (a Job), not on a node group."""
        return self.first.nodes_per_job == 1

    @property
    def tests(self) -> tuple[str, ...]:
        """The tests' names, in the order the pack runs them."""
        return tuple(u.test.name for u in self.units)

    @property
    def expected_ms(self) -> int:
        """How long the pack runs when every test takes its expected time."""
        return sum(u.expected_ms for u in self.units)

    @property
    def timeout_ms(self) -> int:
        """How long it may run: every test to its own timeout."""
        return sum(u.timeout_ms for u in self.units)

    def chunks(self) -> list[tuple[str, ...]]:
        """A node pack's named nodes in chunks of at most `chunk`, in order: a Job each."""
        nodes = self.first.pool.spec.nodes or []
        return [tuple(nodes[i : i + self.chunk]) for i in range(0, len(nodes), self.chunk)]


def site_packs(site: Site, units: Sequence[TestUnit]) -> list[Pack]:
    """The packs of a site's plan (`packs_of` with its window's chunk)."""
    return packs_of(units, site.spec.readiness.packing, chunk_of(site))


def chunk_of(site: Site) -> int:
    """A site's node-pack chunk: 64 nodes, never more than its window runs at once."""
    return min(CHUNK, site.spec.readiness.window.max_concurrent_jobs)


def packs_of(units: Sequence[TestUnit], packing: str, chunk: int = CHUNK) -> list[Pack]:
    """The packs of a plan, in plan order; tests not in one run alone.

    `packing` is the site's `readiness.packing`; with `perRun` nothing is packed.
    """
    if packing != "packed":
        return []
    return grouped(units, _key, PACK_PREFIX, chunk, smallest=2)


def grouped(
    units: Sequence[TestUnit],
    key_of: Callable[[TestUnit], tuple[object, ...] | None],
    prefix: str,
    chunk: int,
    smallest: int = 1,
) -> list[Pack]:
    """Units of equal keys as packs `<prefix><n>`, numbered within their stage.

    A unit whose key is None, or whose group has fewer than `smallest` units, is in none.
    """
    keyed: dict[tuple[object, ...], list[TestUnit]] = {}
    for unit in units:
        key = key_of(unit)
        if key is not None:
            keyed.setdefault(key, []).append(unit)
    found: list[Pack] = []
    counts: dict[int, int] = {}
    for members in keyed.values():
        if len(members) < smallest:
            continue
        index = counts.get(members[0].stage_index, 0)
        counts[members[0].stage_index] = index + 1
        found.append(Pack(f"{prefix}{index}", tuple(members), chunk))
    return found


def _key(unit: TestUnit) -> tuple[object, ...] | None:
    """Tests with equal keys share a pack; None: not packable."""
    if unit.pool.spec.nodes is None:
        return None
    kind = kind_of(unit.test)
    if unit.nodes_per_job == 1:
        if not (kind.per_node or kind.collective):
            return None
        return ("node", unit.stage_index, unit.pool.spec.name, unit.image)
    if not kind.collective:
        return None
    # one stage on one pool has one grouping (its fabric groups or `nodesPerJob`)
    return ("group", unit.stage_index, unit.pool.spec.name, unit.image, unit.nodes_per_job)


def pack_of(packs: list[Pack], stage: str, name: str) -> Pack | None:
    """The pack `name` of a stage, as a run's `nvcregen.io/stage` and `test` labels name it."""
    return next((p for p in packs if p.first.stage.name == stage and p.name == name), None)
