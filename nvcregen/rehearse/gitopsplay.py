"""What the rehearsal asks of a GitOps engine: its order, its health, its own play.

The order it applies a tree in and how it reads a live object's health (pure), and
whether the twin runs its own controllers to play the tree (`play`).
Each GitOps engine's package holds its player (`engines/gitops/<engine>/rehearse.py`,
`PLAYER`), found through the registry (`engineapi.registry.part_of`) and asked through
`GitOpsPlayer`: the rehearsal names no engine, reads no engine's health checks and starts
no engine's play itself.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, TypeGuard, runtime_checkable

from nvcregen.engineapi.protocol import GitOpsEngine
from nvcregen.engineapi.registry import GITOPS, required_part
from nvcregen.rehearse.health import Health
from nvcregen.rehearse.steps import ApplyStep, Order, StepOutcome, by_waves, whole
from nvcregen.rehearse.twin import Twin
from nvcregen.rehearse.watch import Watch
from nvcregen.replay.gitopsmodel import Held, read_units
from nvcregen.replay.model import TreeObject

PART = "rehearse"  # the module of an engine's package holding its player


@runtime_checkable
class GitOpsPlayer(Protocol):
    """One GitOps engine as the rehearsal plays it."""

    def order(
        self,
        engine: GitOpsEngine,
        objects: Sequence[TreeObject],
        units: Sequence[Held],
        checks_elsewhere: bool,
    ) -> Order:
        """The steps of a tree whose `units` (the engine's, read by its replay model) apply it.

        `checks_elsewhere`: the site's health checks are installed outside the tree
        (`gitops.healthChecks: existing`); the engine's own are then taken as installed.
        """
        ...

    def bare(self, objects: Sequence[TreeObject], checks_elsewhere: bool) -> Order | None:
        """The steps of a tree holding no GitOps unit, as the engine would apply it; or None."""
        ...

    def health(
        self, order: Order, step: ApplyStep, item: TreeObject, live: Mapping[str, Any] | None
    ) -> Health | None:
        """The engine's health of one object of a step; None when the engine does not wait."""
        ...

    def play(
        self,
        twin: Twin,
        objects: Sequence[TreeObject],
        root: str,
        order: Order,
        watch: Watch,
        *,
        timeout_s: float,
        poll_s: float,
        speed: float,
    ) -> list[StepOutcome] | None:
        """Each step's outcome, the engine's own controllers playing the tree on the twin.

        None when the twin runs none of them: the rehearsal then applies the steps itself.
        """
        ...

    def note(self, ran: bool) -> str:
        """What the report says played the engine (`ran`: its own controllers did)."""
        ...

    def skip_reason(self, item: TreeObject) -> str:
        """Why the rehearsal leaves an object of the engine's own to it ("" if not its own).

        Asked of every engine for every object (`steps.skip_reason`).
        """
        ...


def is_player(found: object) -> TypeGuard[GitOpsPlayer]:
    """Whether an engine's `PLAYER` plays a tree."""
    return isinstance(found, GitOpsPlayer)


def player_of(engine: GitOpsEngine) -> GitOpsPlayer:
    """The engine's player.

    Raises:
        LookupError: The engine's package holds none (every registered engine has one).

    """
    return required_part(engine, PART, "PLAYER", is_player, "has no rehearsal player")


def read_order(
    objects: Sequence[TreeObject], root: str, *, checks_elsewhere: bool = False
) -> Order:
    """The steps of a tree as its engine applies them (`steps.py` says how).

    A tree holding no GitOps unit is applied as the first engine (registry order) that
    applies a bare tree would; with none, sync wave by sync wave, every run waited on.
    `checks_elsewhere`: the site's health checks are installed outside the tree
    (`gitops.healthChecks: existing`, the replay's `external_health_checks`).
    """
    found = read_units(objects, root)
    if found:
        engine, _, units = found
        return player_of(engine).order(engine, objects, units, checks_elsewhere)
    for engine in GITOPS.values():
        bare = player_of(engine).bare(objects, checks_elsewhere)
        if bare is not None:
            return bare
    return by_waves(objects, [whole()], {}, None, None)
