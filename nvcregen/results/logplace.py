"""Which planned run a trainer-mode log belongs to: stage, test, round, group or node (pure).

In trainer mode every round of an NCCL test on one node group is a TrainJob named
`<[site-]stage-test>-<hash>-r<round>-g<group>` (no `-g` for a selector pool), and every
round of a DCGM level on one node a Job `<...>-<hash>-r<round>-n<node>` (`trainer_run_name` of
`engines/readiness/trainer/runs.py`). A log is named after its TrainJob or Job, or after
its pod (`<trainjob>-launcher-0-0-xxxxx`, `<job>-xxxxx`). Its stage, test and round come
from the labels of the exported TrainJob or Job when there is one, else from the name,
matched against the names the plan gives; the group or node index always comes from the
name, and the nodes from the plan.

With `readiness.packing: packed` a stage's tests share runs (`nvcregen.plan.packs`): a
node pack's Job of round r on chunk c is `<[site-]stage-pack-N>-<hash>-r<r>-c<c>`, its pods
`<job>-<index>-xxxxx`, and a group pack's TrainJob `<...pack-N>-<hash>-r<r>-g<group>`; the
`nvcregen.io/test` label of either names the pack. Such a log is placed as a
`PackPlaced` (the pack, its chunk's or group's nodes), and `packlogs.py` splits it into
one run per test.

A period of `readiness.periodic` is a Job the CronJob controller named
`<cronjob>-<scheduled minutes since the epoch>`, the CronJob being
`<[site-]stage-periodic-N>-<hash>-c<chunk>` (`engines/readiness/trainer/periodic.py`), its pods
`<job>-<index>-xxxxx`: placed as the chunk's pack in round 1, the Job's name its run.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

from nvcregen.core.labels import ROUND, STAGE, TEST
from nvcregen.kindapi.registry import kind_of
from nvcregen.plan.model import TestUnit
from nvcregen.plan.packs import PACK_PREFIX, Pack, pack_of
from nvcregen.plan.periodic import PERIODIC_PREFIX
from nvcregen.plan.rungroups import node_groups
from nvcregen.results.liveobjects import Obj, labels_of, metadata

T = TypeVar("T")
_PERIODIC = re.compile(
    r"^(?P<run>(?P<base>[a-z0-9-]+?)-[0-9a-f]{8}-c(?P<index>\d+)-(?P<period>\d{1,12}))"
    r"(?:-\d+-[a-z0-9]{5})?$"
)
_NAME = re.compile(
    r"^(?P<run>(?P<base>[a-z0-9-]+?)-[0-9a-f]{8}-r(?P<round>\d+)"
    r"(?:-(?P<kind>[gnc])(?P<index>\d+))?)(?:-[a-z0-9-]+)?$"
)


@dataclass(frozen=True)
class Placed:
    """Where one log belongs.

    Attributes:
        unit: The planned test (stage and test).
        run: The TrainJob or Job name.
        round: The round, from 1.
        index: The node group (NCCL) or node (DCGM) index; None for a selector pool.
        nodes: The nodes of that group or node, from the plan.
        obj: The exported TrainJob or Job, when there is one.

    """

    unit: TestUnit
    run: str
    round: int
    index: int | None
    nodes: tuple[str, ...]
    obj: Obj | None = None

    @property
    def group(self) -> str:
        """The group name verdicts are grouped by: `g<index>`, `n<index>`, or ""."""
        if self.index is None:
            return ""
        return f"{'n' if kind_of(self.unit.test).per_node else 'g'}{self.index}"


class PackSlots:
    """One pack's runs and each test's slots, worked out once for all of its logs.

    `runs` are a node pack's chunks (a Job each) or a group pack's node groups (a
    TrainJob each); `slot(unit, node)` is the node or one-node group of a test that a
    section on `node` stands for, looked up in an index made on first use, so placing
    every section of a pack costs its sections, not sections x slots.
    """

    def __init__(self, pack: Pack) -> None:
        self.runs: list[tuple[str, ...]] = (
            pack.chunks() if pack.per_node else node_groups(pack.first)
        )
        self._slots: dict[str, dict[str, int]] = {}

    def slot(self, unit: TestUnit, node: str) -> int | None:
        """The index of `node` (a per-node test) or of the group `(node,)`; None if none."""
        name = unit.test.name
        if name not in self._slots:
            index: dict[str, int] = {}
            if kind_of(unit.test).per_node:
                for i, n in enumerate(unit.pool.spec.nodes or []):
                    index.setdefault(n, i)
            else:
                for i, group in enumerate(node_groups(unit)):
                    if len(group) == 1:
                        index.setdefault(group[0], i)
            self._slots[name] = index
        return self._slots[name].get(node)


class PackIndex:
    """A site's packs, each with its `PackSlots` made once (on first use) for every log."""

    def __init__(self, packs: Sequence[Pack]) -> None:
        self.packs = tuple(packs)
        self._slots: dict[int, PackSlots] = {}  # by id: `packs` keeps every pack alive

    def slots(self, pack: Pack) -> PackSlots:
        """The pack's runs and slots."""
        if id(pack) not in self._slots:
            self._slots[id(pack)] = PackSlots(pack)
        return self._slots[id(pack)]


@dataclass(frozen=True)
class PackPlaced:
    """Where one log of a packed run belongs: the pack, its run, round and nodes.

    Attributes:
        pack: The pack (its tests, in the order it runs them).
        run: The Job (node pack) or TrainJob (group pack) name.
        round: The round, from 1.
        index: The chunk (node pack) or node group (group pack) index.
        nodes: The chunk's nodes, or the group's, from the plan.
        slots: The pack's runs and each test's slots, indexed once for every log.
        obj: The exported Job or TrainJob, when there is one.

    """

    pack: Pack
    run: str
    round: int
    index: int
    nodes: tuple[str, ...]
    slots: PackSlots
    obj: Obj | None = None


def expected_runs(unit: TestUnit, rounds: int) -> set[tuple[int, int | None]]:
    """Every (round, index) the plan runs for a test: per node group, or per node (DCGM)."""
    if kind_of(unit.test).per_node:
        indexes: list[int | None] = list(range(len(unit.pool.spec.nodes or ())))
    else:
        groups = node_groups(unit)
        indexes = [None] if groups == [()] else list(range(len(groups)))
    return {(r, i) for r in range(1, rounds + 1) for i in indexes}


def place(
    site: str,
    units: Sequence[TestUnit],
    name: str,
    objects: Mapping[str, Obj],
    packs: Sequence[Pack] | PackIndex = (),
) -> Placed | PackPlaced | str:
    """The run a log named `name` belongs to, or why none could be found.

    Args:
        site: The site name (a run name may start with it).
        units: The planned tests.
        name: The log's name (its file name without suffix): a TrainJob, Job or pod name.
        objects: The site's exported TrainJobs and Jobs in the log's namespace, by name.
        packs: The site's packs (`packs_of`), none unless it is `packing: packed`; a
            `PackIndex` of them when many logs are placed (each pack indexed once).

    """
    index = packs if isinstance(packs, PackIndex) else PackIndex(packs)
    if any(p.name.startswith(PERIODIC_PREFIX) for p in index.packs):
        return _place_period(site, index, name, objects)
    return _place_one_shot(site, units, name, objects, index)


def _place_one_shot(
    site: str,
    units: Sequence[TestUnit],
    name: str,
    objects: Mapping[str, Obj],
    packed: PackIndex,
) -> Placed | PackPlaced | str:
    """A run of the one-shot plan (`place`)."""
    packs = packed.packs
    match = _NAME.match(name)
    if match is None:
        return f"{name}: not the name of a TrainJob, Job or pod of this site"
    run = match["run"]
    obj = objects.get(run)
    labels = labels_of(obj) if obj is not None else {}
    if match["kind"] == "c" or (
        packs
        and (
            labels.get(TEST, "").startswith(PACK_PREFIX)
            if obj is not None
            else _pack_by_name(site, packs, match["base"]) is not None
        )
    ):
        return _place_pack(site, packed, match, obj)
    dcgm = match["kind"] == "n"
    if obj is not None:
        unit = _by_labels(units, labels.get(STAGE, ""), labels.get(TEST, ""))
        round_ = int(labels.get(ROUND) or match["round"])
    else:
        unit = _by_name(site, units, match["base"], dcgm=dcgm)
        round_ = int(match["round"])
    if unit is None:
        return f"{name}: no planned test of this site runs as {run}"
    if kind_of(unit.test).per_node != dcgm:
        return f"{name}: the name does not fit test {unit.test.name} (-g for NCCL, -n for DCGM)"
    index = int(match["index"]) if match["index"] is not None else None
    nodes = _nodes(unit, index)
    if index is not None and not nodes:
        return f"{name}: test {unit.test.name} has no node or group {index}"
    return Placed(unit, run, round_, index, nodes, obj)


def _place_pack(
    site: str, index: PackIndex, match: re.Match[str], obj: Obj | None
) -> PackPlaced | str:
    """A packed run's log: the pack by its labels (else its name), its chunk or group."""
    name, run, packs = match[0], match["run"], index.packs
    if obj is not None:
        labels = labels_of(obj)
        pack = pack_of(list(packs), labels.get(STAGE, ""), labels.get(TEST, ""))
        round_ = int(labels.get(ROUND) or match["round"])
    else:
        pack = _pack_by_name(site, packs, match["base"])
        round_ = int(match["round"])
    if pack is None:
        return f"{name}: no pack of this site runs as {run}"
    kind = "c" if pack.per_node else "g"
    if match["kind"] != kind:
        return f"{name}: the name does not fit {pack.name} (-c for a node pack, -g for a group's)"
    at = int(match["index"])
    slots = index.slots(pack)
    if at >= len(slots.runs) or not slots.runs[at]:
        what = "chunk" if pack.per_node else "node group"
        return f"{name}: {pack.first.stage.name} {pack.name} has no {what} {at}"
    return PackPlaced(pack, run, round_, at, slots.runs[at], slots, obj)


def _place_period(
    site: str, index: PackIndex, name: str, objects: Mapping[str, Obj]
) -> PackPlaced | str:
    """A periodic Job's log (or its pod's): the pack by the Job's labels, else its name."""
    match = _PERIODIC.match(name)
    if match is None:
        return f"{name}: not the name of a periodic Job of this site or of its pod"
    run = match["run"]
    obj = objects.get(run)
    packs = [p for p in index.packs if p.name.startswith(PERIODIC_PREFIX)]
    if obj is not None:
        labels = labels_of(obj)
        pack = pack_of(packs, labels.get(STAGE, ""), labels.get(TEST, ""))
    else:
        pack = _pack_by_name(site, packs, match["base"])
    if pack is None:
        return f"{name}: no periodic pack of this site runs as {run}"
    at = int(match["index"])
    slots = index.slots(pack)
    if at >= len(slots.runs):
        return f"{name}: {pack.first.stage.name} {pack.name} has no chunk {at}"
    return PackPlaced(pack, run, 1, at, slots.runs[at], slots, obj)


def _pack_by_name(site: str, packs: Sequence[Pack], base: str) -> Pack | None:
    """The pack whose run names start with `base`; a prefix cut to fit the limit counts."""
    return one_named(base, [(p, _prefixes(site, p.first.stage.name, p.name)) for p in packs])


def _by_labels(units: Sequence[TestUnit], stage: str, test: str) -> TestUnit | None:
    return next((u for u in units if u.stage.name == stage and u.test.name == test), None)


def _by_name(site: str, units: Sequence[TestUnit], base: str, *, dcgm: bool) -> TestUnit | None:
    """The unit whose name prefix is `base`; a prefix cut to fit the length limit counts."""
    fits = [u for u in units if kind_of(u.test).per_node == dcgm]
    return one_named(base, [(u, _prefixes(site, u.stage.name, u.test.name)) for u in fits])


def one_named(base: str, named: Sequence[tuple[T, tuple[str, ...]]]) -> T | None:
    """The one item a run name's prefix `base` names, of (item, its name prefixes) pairs.

    A prefix equal to `base` names its item; else one that `base` cuts at a `-` (a name
    cut to fit the length limit). None when no item or more than one is named so.
    """
    exact = [item for item, keys in named if base in keys]
    cut = [item for item, keys in named if any(k.startswith(f"{base}-") for k in keys)]
    found = exact or cut
    return found[0] if len(found) == 1 else None


def _prefixes(site: str, stage: str, name: str) -> tuple[str, str]:
    """The name prefixes a test's (or pack's) runs may have: without and with the site."""
    short = f"{stage}-{name}"
    return short, f"{site}-{short}"


def _nodes(unit: TestUnit, index: int | None) -> tuple[str, ...]:
    if index is None:
        return ()
    if kind_of(unit.test).per_node:
        nodes = unit.pool.spec.nodes or []
        return (nodes[index],) if index < len(nodes) else ()
    groups = node_groups(unit)
    return groups[index] if index < len(groups) else ()


def period_of(run: str) -> str:
    """The period of a periodic Job's name: its scheduled minutes since the epoch.

    As `collect --period` takes it; "" for any other run's name, a pod's included.
    """
    match = _PERIODIC.match(run)
    return match["period"] if match is not None and match["run"] == run else ""


def objects_by_name(objects: Sequence[Obj], namespace: str) -> dict[str, Obj]:
    """The exported TrainJobs and Jobs of one namespace, by name."""
    return {
        str(metadata(o).get("name")): o
        for o in objects
        if o.get("kind") in {"TrainJob", "Job"} and metadata(o).get("namespace") == namespace
    }
