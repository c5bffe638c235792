"""Verdicts of one nvbandwidth run: per GPU (host<->device) and per ordered pair of GPUs.

Each measured cell of a testcase with a direction (`kinds/nvbandwidth/physics.py`) is
held to the model's floor (failed below it) and its ceiling (`impossible` above it: no
link carries that, so the figure is no evidence). Host testcases print the GPUs as
columns (`CPU(row) -> GPU(column)`); device-to-device ones a pair as row <- column. A
testcase asked for and not shown, waived on a node of two GPUs or more, shown without a
figure in GB/s, or cut off, and a run on another number of GPUs than the node's, are
problems of the run: they fail the node, since its links went unmeasured.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from nvcregen.ingest.models import Json
from nvcregen.kinds.nvbandwidth.models import NvbwRun, Testcase
from nvcregen.kinds.nvbandwidth.params import NvbandwidthFloor
from nvcregen.kinds.nvbandwidth.physics import Ceilings, Direction, direction, floor_of

Outcome = Literal["passed", "failed", "impossible"]


@dataclass(frozen=True)
class CellVerdict:
    """One GPU's (or one pair's) figure of one testcase against its floor and ceiling."""

    testcase: str
    direction: Direction
    gpu: int
    peer: int | None  # the other GPU of a device-to-device pair
    value: float
    floor: float | None
    ceiling: float | None
    outcome: Outcome

    @property
    def where(self) -> str:
        """`GPU 3`, or `GPU 3 <- GPU 5` for a pair (the row's GPU reads or is written)."""
        return f"GPU {self.gpu}" if self.peer is None else f"GPU {self.gpu} <- GPU {self.peer}"

    def to_json(self) -> Json:
        """The verdict with its bounds (GB/s)."""
        return {
            "testcase": self.testcase,
            "direction": self.direction,
            "gpu": self.gpu,
            "peer": self.peer,
            "value_gbs": self.value,
            "floor_gbs": self.floor,
            "ceiling_gbs": self.ceiling,
            "outcome": self.outcome,
        }


@dataclass(frozen=True)
class RunVerdict:
    """Every cell verdict of a run and what the run itself lacks."""

    cells: tuple[CellVerdict, ...]
    problems: tuple[str, ...]

    @property
    def passed(self) -> bool:
        """Whether every cell passed and the run lacks nothing."""
        return not self.problems and all(c.outcome == "passed" for c in self.cells)

    def to_json(self) -> Json:
        """Cells and problems."""
        return {
            "passed": self.passed,
            "cells": [c.to_json() for c in self.cells],
            "problems": list(self.problems),
        }


def judge(
    run: NvbwRun,
    floor: NvbandwidthFloor | None,
    limits: Ceilings | None,
    asked: Sequence[str] = (),
    gpus: int | None = None,
) -> RunVerdict:
    """The verdicts of a run against a model's floor and ceilings (either may be None).

    `gpus`: the GPUs the node has; a run that saw another number measured other links
    than the node's (a device-to-device testcase is waived below two GPUs, unflagged).
    """
    cells: list[CellVerdict] = []
    problems: list[str] = []
    if gpus is not None and len(run.devices) != gpus:
        problems.append(f"{len(run.devices)} GPU(s) measured: the node has {gpus}")
    for name in asked:
        shown = run.named(name)
        if shown is None:
            problems.append(f"{name}: asked for and not in the output")
        elif shown.status == "waived":
            if len(run.devices) >= 2:
                problems.append(f"{name}: waived on {len(run.devices)} GPUs (are they no peers?)")
        elif direction(name) is not None and not _cells(shown, floor, limits):
            # passed, yet no figure: only N/A cells, a SUM without its matrix, another unit
            problems.append(f"{name}: no figure in GB/s to judge")
    for test in run.testcases:
        if test.status == "truncated":
            problems.append(f"{test.name or 'a testcase'}: the output ends inside it")
        cells += _cells(test, floor, limits)
    return RunVerdict(tuple(cells), tuple(problems))


def _cells(
    test: Testcase, floor: NvbandwidthFloor | None, limits: Ceilings | None
) -> list[CellVerdict]:
    way = direction(test.name or "")
    if way is None or test.matrix is None or test.unit != "GB/s" or test.name is None:
        return []
    low = None if floor is None else floor_of(floor, way)
    high = None if limits is None else limits.of(way)
    found = []
    for row, column, value in test.matrix.pairs():
        gpu, peer = (row, column) if way == "deviceToDevice" else (column, None)
        outcome: Outcome = "passed"
        if high is not None and value > high + 1e-9:
            outcome = "impossible"
        elif low is not None and value < low:
            outcome = "failed"
        found.append(CellVerdict(test.name, way, gpu, peer, value, low, high, outcome))
    return found
