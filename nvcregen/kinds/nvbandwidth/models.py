"""Records read from nvbandwidth's output (text of v0.4-v0.8, JSON of `-j`): frozen, with JSON.

A testcase that ran holds its matrix as nvbandwidth prints it: row and column labels
(GPU indices; the host's row where one side is the CPU), one cell a pair, `None` where it
prints `N/A` (a GPU and itself, or no peer), and its `SUM` line. A waived testcase (one
that needs two GPUs on a one-GPU node, or GPUs that are no peers) has no matrix; v0.7 and
later print its status without its name, so `name` is None where the order could not
say it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

from nvcregen.ingest.models import Json

Form = Literal["text", "json"]
Status = Literal["passed", "waived", "truncated"]
"""`passed`: it ran and printed its SUM; `waived`: nvbandwidth skipped it; `truncated`:
the output ends inside it (no SUM)."""


@dataclass(frozen=True)
class Matrix:
    """A testcase's figures: `cells[r][c]` is row `rows[r]`, column `columns[c]`."""

    rows: tuple[int, ...]
    columns: tuple[int, ...]
    cells: tuple[tuple[float | None, ...], ...]

    def pairs(self) -> Iterator[tuple[int, int, float]]:
        """Every measured cell as (row, column, value); `N/A` cells are left out."""
        for r, row in zip(self.rows, self.cells, strict=True):
            for c, value in zip(self.columns, row, strict=True):
                if value is not None:
                    yield r, c, value

    def to_json(self) -> Json:
        """Its labels and cells (null for N/A)."""
        return {
            "rows": list(self.rows),
            "columns": list(self.columns),
            "cells": [list(row) for row in self.cells],
        }


@dataclass(frozen=True)
class Testcase:
    """One nvbandwidth testcase as its output shows it."""

    name: str | None
    status: Status
    line: int  # where it starts in the file (1 for JSON)
    description: str | None = None  # `memcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)`
    matrix: Matrix | None = None
    sum: float | None = None

    @property
    def unit(self) -> str | None:
        """What its cells measure: `GB/s`, `ns` (latency), or None when it says nothing."""
        if self.description is None:
            return None
        if self.description.endswith("(GB/s)"):
            return "GB/s"
        return "ns" if self.description.endswith("(ns)") else None

    def to_json(self) -> Json:
        """Its name (null where unknown), status, unit, matrix and SUM."""
        return {
            "name": self.name,
            "status": self.status,
            "line": self.line,
            "description": self.description,
            "unit": self.unit,
            "matrix": None if self.matrix is None else self.matrix.to_json(),
            "sum": self.sum,
        }


@dataclass(frozen=True)
class Device:
    """A `Device N: NAME (PCI bus)` line (JSON: an entry of `GPU Device list`)."""

    index: int
    name: str
    bus_id: str | None = None

    def to_json(self) -> Json:
        """Index, name and PCI bus (null before v0.7)."""
        return {"index": self.index, "name": self.name, "bus_id": self.bus_id}


@dataclass(frozen=True)
class NvbwRun:
    """One nvbandwidth run read from one file."""

    file: str
    form: Form
    version: str | None
    git_version: str | None
    cuda_runtime: int | None
    cuda_driver: int | None
    driver: str | None
    host: str | None  # v0.8 prints the host name (JSON: in the device list)
    devices: tuple[Device, ...]
    testcases: tuple[Testcase, ...]

    @property
    def truncated(self) -> bool:
        """Whether its output ends inside a testcase."""
        return any(t.status == "truncated" for t in self.testcases)

    def named(self, name: str) -> Testcase | None:
        """The testcase of that name, if the run shows it."""
        return next((t for t in self.testcases if t.name == name), None)

    def to_json(self) -> Json:
        """The run as `nvcregen ingest nvbandwidth --format json` prints it."""
        return {
            "file": self.file,
            "form": self.form,
            "version": self.version,
            "git_version": self.git_version,
            "cuda_runtime": self.cuda_runtime,
            "cuda_driver": self.cuda_driver,
            "driver": self.driver,
            "host": self.host,
            "devices": [d.to_json() for d in self.devices],
            "testcases": [t.to_json() for t in self.testcases],
        }
