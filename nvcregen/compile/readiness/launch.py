"""What compile asks of a collective kind: how its ranks are launched (a part of its package).

A collective kind (`TestKind.collective`: ranks across nodes, an MPI launcher) says in
its package's `launch` module, as `LAUNCH` (`Launch`), the environment its ranks get
(the variables pinning the transport a run measures), NVCRE's `framework` block of its
WorkloadRun, and the launcher's command line in trainer mode (a TrainJob's `args`, a
pack's line). The readiness engines' packages (NVCRE's `layer.py`, trainer mode's
`trainjobs.py` and `packed.py`) ask it through `launch_of`, and `results` reads the
transport a run pinned from the same variable (an exported TrainJob's, else the plan's);
this layer never imports a kind (`kindapi/registry.py` finds the module by name).
"""

from __future__ import annotations

from typing import Protocol, TypeGuard, runtime_checkable

from nvcregen.core.manifest import Obj
from nvcregen.kindapi.registry import kind_of, part_of
from nvcregen.plan.model import TestUnit


@runtime_checkable
class Launch(Protocol):
    """A collective kind's launch of one run's ranks.

    `transport_variable` names the variable of `env` that pins the transport a run
    measures (`NCCL_NET`); `transport` reads a value of it as the transport gate names
    one (`IB`, `Socket`), None for a value it names no transport by.
    """

    transport_variable: str

    def transport(self, value: str) -> str | None:
        """The transport a value of `transport_variable` pins, None when it names none."""
        ...

    def env(self, unit: TestUnit) -> dict[str, str]:
        """The variables every rank gets, in the order they are written."""
        ...

    def framework(self, unit: TestUnit, env: dict[str, str]) -> Obj:
        """NVCRE's `framework.mpi` block of the test's WorkloadRun, with `env` for every rank."""
        ...

    def command(self, unit: TestUnit, env: dict[str, str], *, local: bool = False) -> list[str]:
        """The launcher's command line in trainer mode, with `env` for every rank.

        `local`: the ranks of one node, started by the launcher itself in its own pod (a
        node pack's section), with no hostfile and no ssh.
        """
        ...


def launches(found: object) -> TypeGuard[Launch]:
    """Whether a kind's `launch.LAUNCH` is a `Launch`."""
    return isinstance(found, Launch)


def launch_of(unit: TestUnit) -> Launch:
    """The launch of a collective test's kind (its package's `launch.LAUNCH`).

    Raises:
        ValueError: The test's kind holds no launch (it is no collective kind).

    """
    kind = kind_of(unit.test)
    found = part_of(kind.name, "launch", "LAUNCH", launches)
    if found is None:
        raise ValueError(f"the {kind.name} kind of test {unit.test.name} holds no launch")
    return found
