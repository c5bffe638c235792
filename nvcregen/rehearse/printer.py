"""What a rehearsal's logs are made from, and what one test's log maker returns (pure).

`Printer` holds the plan's units, the catalog and what fails (`failing.py`); a test's
section of a pod's log (`Section`: the pod, when it starts, how long, whether it fails)
is given to the maker of its kind (`makers/`), which returns the test's `Output`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from nvcregen.catalog.load import Catalog
from nvcregen.plan.model import TestUnit

FAILED_RC = 1
FAILING_SHARE = 0.1  # a failing node's figure: a tenth of the expected one, or of the floor
# the bus IDs of an HGX board's eight GPUs (tests/fixtures/node/README.md)
HGX_BUSES = (0x18, 0x2A, 0x3A, 0x5D, 0x9A, 0xAB, 0xBA, 0xDB)
Role = Literal["", "client", "server"]


@dataclass(frozen=True)
class Printer:
    """What every log is made from: the plan's units, the catalog, the failing nodes."""

    units: Sequence[TestUnit]
    catalog: Catalog
    failing: frozenset[str] = frozenset()  # nodes whose every section fails
    links: frozenset[frozenset[str]] = frozenset()  # leaf pairs: a run across one fails
    leaves: Mapping[str, str] = field(default_factory=dict)  # each node's leaf (inventory)

    def fails(self, nodes: Sequence[str]) -> bool:
        """Whether a run on `nodes` fails: it holds a failing node, or crosses a failing link."""
        if self.failing.intersection(nodes):
            return True
        held = {self.leaves[n] for n in nodes if n in self.leaves}
        return any(link <= held for link in self.links)

    def unit(self, stage: str, test: str, node: str = "") -> TestUnit | None:
        """The plan's unit of a stage's test, on the pool naming `node` when one does."""
        first, on_node = self._index
        named = on_node.get((stage, test, node)) if node else None
        return named or first.get((stage, test))

    @functools.cached_property
    def _index(
        self,
    ) -> tuple[dict[tuple[str, str], TestUnit], dict[tuple[str, str, str], TestUnit]]:
        """The units read once: the first of each (stage, test), and of each pool node."""
        first: dict[tuple[str, str], TestUnit] = {}
        on_node: dict[tuple[str, str, str], TestUnit] = {}
        for unit in self.units:
            key = (unit.stage.name, unit.test.name)
            first.setdefault(key, unit)
            for node in unit.pool.spec.nodes or ():
                on_node.setdefault((*key, node), unit)
        return first, on_node


@dataclass(frozen=True)
class Output:
    """One test's output inside a section, its exit code, and how long it ran (s)."""

    text: str
    rc: int
    seconds: int
    exit_line: bool = True  # False: its own script prints its exit line (DCGM's)


@dataclass(frozen=True)
class PackPod:
    """One pod of a packed run, as its log needs it.

    `nodes`: the node a node pack's pod ran on, or the nodes of a group pack's pods;
    `pod`: the pod (a node pack's ranks run on its host, named after it) or the run;
    `round`: the run's round, which keeps each round's tables apart; `role`: a pair
    run's side, `server` (its worker, on `nodes[0]`) or `client` (its launcher, on
    `nodes[0]`), "" for any other pod; `run`: the pair run's TrainJob.
    """

    stage: str
    tests: tuple[str, ...]
    round: int
    nodes: tuple[str, ...]
    pod: str
    start: datetime
    role: Role = ""
    run: str = ""


@dataclass(frozen=True)
class Section:
    """Where one test's output is printed: a pack's pod, the test's start, its duration (s)."""

    pack: PackPod
    start: datetime
    seconds: int
    failing: bool


Maker = Callable[[Printer, TestUnit, Section], Output]
"""A kind's log maker: one test's output on a pod, as its script would print it."""


def stamp(at: datetime) -> str:
    """A time as the scripts' begin lines print it (`date -u +%Y-%m-%dT%H:%M:%SZ`)."""
    return at.strftime("%Y-%m-%dT%H:%M:%SZ")


def gpu_name(unit: TestUnit) -> str:
    """The name the driver gives the pool's GPUs, as GPU Feature Discovery's label reads it.

    GFD makes the product label from the driver's name with dashes for blanks
    (`NVIDIA H100 80GB HBM3` -> `NVIDIA-H100-80GB-HBM3`), and evidence binding (NVC731)
    and node-health (NVC817) hold a name to the pool's labels that way: `NVIDIA <model>`
    where it reads as one of them (`NVIDIA H20-3e`), else the first label with blanks for
    its dashes, else `NVIDIA <model>` for a pool without labels.
    """
    labels = (*unit.pool.product_labels, *unit.pool.hardware.product_labels)
    named = f"NVIDIA {unit.pool.spec.model}"
    if not labels or named.replace(" ", "-") in labels:
        return named
    return labels[0].replace("-", " ")


def bus_ids(gpus: int) -> list[str]:
    """Each GPU's PCI address, `DDDDDDDD:BB:DD`: an HGX board's eight, then domain 1's buses."""
    board = [f"00000000:{bus:02X}:00" for bus in HGX_BUSES[:gpus]]
    return board + [f"00000001:{i % 256:02X}:{i // 256:02X}" for i in range(max(0, gpus - 8))]
