"""Every test kind's rehearsal log maker, found by the kind's registered name (pure).

A kind that holds its own maker has a module `maker.py` in its package whose `MAKER` is
a `printer.Maker` (found by name through `kindapi.registry.part_of`; this layer never
imports a kind). The kinds not yet moved into their packages have theirs here
(`makers/<kind>.py`, one line of `MAKERS`), and a kind the twin can make no log of a
line of `REFUSED` saying why. `tests/unit/rehearse/test_rehearse_makers.py` holds every
registered kind to one of the two. A site naming a test of a kind in neither is refused
before the twin starts (`unmade`, exit 2), never rehearsed to a verdict that could only
say its logs are missing.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeGuard

from nvcregen.kindapi.registry import kind_of, part_of
from nvcregen.plan.model import TestUnit
from nvcregen.rehearse.makers.dcgm import dcgm_output
from nvcregen.rehearse.makers.linkcounters import link_counters_output
from nvcregen.rehearse.makers.nccl import nccl_output
from nvcregen.rehearse.makers.node import node_health_output
from nvcregen.rehearse.makers.rdma import rails_output
from nvcregen.rehearse.makers.rdmapair import rdma_pair_output
from nvcregen.rehearse.printer import Maker

MAKERS: dict[str, Maker] = {
    "dcgm": dcgm_output,
    "linkcounters": link_counters_output,
    "nccl": nccl_output,
    "node": node_health_output,
    "rdma": rails_output,
    "rdmapair": rdma_pair_output,
}
REFUSED: dict[str, str] = {
    "training": (
        "checkpointed training has no trainer-mode form (NVC322) and its goodput is read"
        " from NVCRE's GoodputMeasurement, not from a log the twin's pods could serve"
    ),
}


def makes_logs(found: object) -> TypeGuard[Maker]:
    """Whether a kind's `maker.MAKER` is a maker (a callable; its types are mypy's to hold)."""
    return callable(found)


def maker_of(kind: str) -> Maker | None:
    """The log maker of a kind (its registered name): its package's, else `MAKERS`' or None."""
    return MAKERS.get(kind) or part_of(kind, "maker", "MAKER", makes_logs)


def unmade(units: Iterable[TestUnit]) -> list[str]:
    """Why the plan cannot be rehearsed to verdicts: one line per kind without a maker.

    Each names the kind, its tests in the plan, and why (REFUSED's reason, or that no
    maker is registered); [] when every test's kind has one.
    """
    tests: dict[str, list[str]] = {}
    for unit in units:
        kind = kind_of(unit.test).name
        if maker_of(kind) is None:
            named = tests.setdefault(kind, [])
            if unit.test.name not in named:
                named.append(unit.test.name)
    return [
        f"no rehearsal log is made for {kind} tests ({', '.join(names)}): "
        + REFUSED.get(kind, f"no log maker is registered for the kind '{kind}' (a `MAKER`"
                      " in its package's maker.py, or nvcregen/rehearse/makers/registry.py)")
        for kind, names in tests.items()
    ]  # fmt: skip
