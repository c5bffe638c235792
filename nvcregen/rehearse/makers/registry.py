"""Every test kind's rehearsal log maker, found by the kind's registered name (pure).

A kind that holds its own maker has a module `maker.py` in its package whose `MAKER` is
a `printer.Maker` (found by name through `kindapi.registry.part_of`; this layer never
imports a kind); every kind's maker is in its package. A kind the twin can make no log
of says why in its package's `maker.py` (`REFUSED`, a reason; `refusal_of`).
`tests/unit/rehearse/test_rehearse_makers.py` holds every registered kind to one of the
two. A site naming a test of a kind in neither is refused
before the twin starts (`unmade`, exit 2), never rehearsed to a verdict that could only
say its logs are missing.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeGuard

from nvcregen.kindapi.registry import kind_of, part_of
from nvcregen.plan.model import TestUnit
from nvcregen.rehearse.printer import Maker


def makes_logs(found: object) -> TypeGuard[Maker]:
    """Whether a kind's `maker.MAKER` is a maker (a callable; its types are mypy's to hold)."""
    return callable(found)


def is_reason(found: object) -> TypeGuard[str]:
    """Whether a kind's `maker.REFUSED` is a reason (text, not blank)."""
    return isinstance(found, str) and bool(found.strip())


def refusal_of(kind: str) -> str | None:
    """Why the twin makes no log of a kind: its package's `maker.REFUSED`."""
    return part_of(kind, "maker", "REFUSED", is_reason)


def maker_of(kind: str) -> Maker | None:
    """The log maker of a kind (its registered name): its package's `maker.MAKER`, or None."""
    return part_of(kind, "maker", "MAKER", makes_logs)


def unmade(units: Iterable[TestUnit]) -> list[str]:
    """Why the plan cannot be rehearsed to verdicts: one line per kind without a maker.

    Each names the kind, its tests in the plan, and why (its package's `maker.REFUSED`, or
    that no maker is registered); [] when every test's kind has one.
    """
    tests: dict[str, list[str]] = {}
    for unit in units:
        kind = kind_of(unit.test).name
        if maker_of(kind) is None:
            named = tests.setdefault(kind, [])
            if unit.test.name not in named:
                named.append(unit.test.name)
    unregistered = (
        "no log maker is registered for the kind '{}' (a `MAKER` in its package's maker.py)"
    )
    return [
        f"no rehearsal log is made for {kind} tests ({', '.join(names)}): "
        + (refusal_of(kind) or unregistered.format(kind))
        for kind, names in tests.items()
    ]
