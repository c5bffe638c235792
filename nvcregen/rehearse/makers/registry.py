"""Every test kind's rehearsal log maker, keyed by the kind's registered name (pure).

`kinds/` sits below `rehearse/` (pyproject's import contract), so a kind cannot name its
maker: a new kind adds its module here (`makers/<kind>.py`, a `printer.Maker`) and one
line to `MAKERS`, or, when the twin can make no log of it, a line to `REFUSED` saying
why. `tests/unit/rehearse/test_rehearse_makers.py` holds every kind of
`kindapi/registry.py` to one of the two. A site naming a test of a kind in neither is
refused before the twin starts (`unmade`, exit 2), never rehearsed to a verdict that
could only say its logs are missing.
"""

from __future__ import annotations

from collections.abc import Iterable

from nvcregen.kindapi.registry import kind_of
from nvcregen.plan.model import TestUnit
from nvcregen.rehearse.makers.burnin import burnin_output
from nvcregen.rehearse.makers.dcgm import dcgm_output
from nvcregen.rehearse.makers.linkcounters import link_counters_output
from nvcregen.rehearse.makers.nccl import nccl_output
from nvcregen.rehearse.makers.node import node_health_output
from nvcregen.rehearse.makers.nvbandwidth import nvbandwidth_output
from nvcregen.rehearse.makers.rdma import rails_output
from nvcregen.rehearse.makers.rdmapair import rdma_pair_output
from nvcregen.rehearse.printer import Maker

MAKERS: dict[str, Maker] = {
    "burnin": burnin_output,
    "dcgm": dcgm_output,
    "linkcounters": link_counters_output,
    "nccl": nccl_output,
    "node": node_health_output,
    "nvbandwidth": nvbandwidth_output,
    "rdma": rails_output,
    "rdmapair": rdma_pair_output,
}
REFUSED: dict[str, str] = {
    "training": (
        "checkpointed training has no trainer-mode form (NVC322) and its goodput is read"
        " from NVCRE's GoodputMeasurement, not from a log the twin's pods could serve"
    ),
}


def maker_of(kind: str) -> Maker | None:
    """The log maker of a kind (its registered name), None for a kind without one."""
    return MAKERS.get(kind)


def unmade(units: Iterable[TestUnit]) -> list[str]:
    """Why the plan cannot be rehearsed to verdicts: one line per kind without a maker.

    Each names the kind, its tests in the plan, and why (REFUSED's reason, or that no
    maker is registered); [] when every test's kind has one.
    """
    tests: dict[str, list[str]] = {}
    for unit in units:
        kind = kind_of(unit.test).name
        if kind not in MAKERS:
            named = tests.setdefault(kind, [])
            if unit.test.name not in named:
                named.append(unit.test.name)
    return [
        f"no rehearsal log is made for {kind} tests ({', '.join(names)}): "
        + REFUSED.get(kind, f"no log maker is registered for the kind '{kind}'"
                      " (nvcregen/rehearse/makers/registry.py)")
        for kind, names in tests.items()
    ]  # fmt: skip
