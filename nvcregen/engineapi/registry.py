"""Every readiness and GitOps engine, registered once by module name, loaded on first use.

`GITOPS_MODULES` and `READINESS_MODULES` are the registration lines: each module defines
`ENGINE`, its `GitOpsEngine` or `ReadinessEngine`, and is imported with `importlib` the
first time a layer asks (`gitops_of(site)`, `readiness_of(site)`, `GITOPS`, `READINESS`),
so the layers below `nvcregen.engines` never import an engine. A layer that needs more of
an engine than its traits (a replay model, a collector) defines the small protocol it
needs and finds the engine's implementation with `part_of`: the module of that name in
the engine's package, holding one object under a name the layer gives.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Final, TypeGuard, TypeVar

from nvcregen.core.plugins import Plugins
from nvcregen.engineapi.names import DEFAULT_GITOPS_NAME, DEFAULT_READINESS_NAME
from nvcregen.engineapi.protocol import GitOpsEngine, ReadinessEngine

if TYPE_CHECKING:
    from nvcregen.spec.v1alpha1 import Site

# The registration lines: an engine's module (`ENGINE` in it). GitOps engines in the order
# the replay and the rehearsal try their units: a tree holding Kustomizations reading the
# site's folder is read as Flux's, whatever Applications it also holds.
GITOPS_MODULES: Final = (
    "nvcregen.engines.gitops.flux.engine",
    "nvcregen.engines.gitops.argocd.engine",
)
READINESS_MODULES: Final = (
    "nvcregen.engines.readiness.nvcre.engine",
    "nvcregen.engines.readiness.trainer.engine",
)
DEFAULT_GITOPS: Final = DEFAULT_GITOPS_NAME  # what `init` writes unless told
DEFAULT_READINESS: Final = DEFAULT_READINESS_NAME  # a site that names no readiness engine

T = TypeVar("T")


def _is_gitops(found: object) -> TypeGuard[GitOpsEngine]:
    return isinstance(found, GitOpsEngine)


def _is_readiness(found: object) -> TypeGuard[ReadinessEngine]:
    return isinstance(found, ReadinessEngine)


# Every registered engine of a family by its name, loaded the first time it is read.
GITOPS: Final[Plugins[GitOpsEngine]] = Plugins(
    lambda: GITOPS_MODULES, "ENGINE", _is_gitops, "GitOpsEngine", "engine"
)
READINESS: Final[Plugins[ReadinessEngine]] = Plugins(
    lambda: READINESS_MODULES, "ENGINE", _is_readiness, "ReadinessEngine", "engine"
)


def gitops_engine(name: str) -> GitOpsEngine:
    """The GitOps engine of that name.

    Raises:
        ValueError: No such engine (the site schema refuses it first).

    """
    found = GITOPS.get(name)
    if found is None:
        raise ValueError(f"GitOps engine {name!r} is not one of {sorted(GITOPS)}")
    return found


def readiness_engine(name: str) -> ReadinessEngine:
    """The readiness engine of that name.

    Raises:
        ValueError: No such engine (the site schema refuses it first).

    """
    found = READINESS.get(name)
    if found is None:
        raise ValueError(f"readiness engine {name!r} is not one of {sorted(READINESS)}")
    return found


def gitops_of(site: Site) -> GitOpsEngine:
    """The site's GitOps engine (`spec.gitops.engine`)."""
    return gitops_engine(site.spec.gitops.engine)


def readiness_of(site: Site) -> ReadinessEngine:
    """The site's readiness engine (`spec.readiness.engine`)."""
    return readiness_engine(site.spec.readiness.engine)


def package_of(engine: GitOpsEngine | ReadinessEngine) -> str:
    """The package an engine's code lives in (`nvcregen.engines.<family>.<engine>`).

    Raises:
        KeyError: The engine is not the registered one of its name.

    """
    family = _family(engine)
    if family.get(engine.name) is not engine:
        raise KeyError(f"engine {engine.name!r} is not the registered one")
    return family.package_of(engine.name)


def part_of(
    engine: GitOpsEngine | ReadinessEngine,
    part: str,
    attribute: str,
    fits: Callable[[object], TypeGuard[T]],
) -> T | None:
    """What an engine implements of a layer's protocol (`Plugins.part_of`).

    Raises:
        KeyError: The engine is not registered.
        TypeError: The module holds something under `attribute` that does not fit (a bug
            of the engine).

    """
    package_of(engine)  # the registered engine, not one of its name
    return _family(engine).part_of(engine.name, part, attribute, fits)


def required_part(
    engine: GitOpsEngine | ReadinessEngine,
    part: str,
    attribute: str,
    fits: Callable[[object], TypeGuard[T]],
    lacking: str,
) -> T:
    """`part_of` for a part every registered engine of the family implements.

    Raises:
        LookupError: The engine's package holds none: "<family> engine <name> <lacking>".

    """
    found = part_of(engine, part, attribute, fits)
    if found is None:
        family = "GitOps" if isinstance(engine, GitOpsEngine) else "readiness"
        raise LookupError(f"{family} engine {engine.name} {lacking}")
    return found


def parts(
    engines: Mapping[str, GitOpsEngine] | Mapping[str, ReadinessEngine],
    part: str,
    attribute: str,
    fits: Callable[[object], TypeGuard[T]],
) -> tuple[T, ...]:
    """What each engine of a family implements of a layer's protocol, in registry order."""
    found = (part_of(engine, part, attribute, fits) for engine in engines.values())
    return tuple(item for item in found if item is not None)


def _family(
    engine: GitOpsEngine | ReadinessEngine,
) -> Plugins[GitOpsEngine] | Plugins[ReadinessEngine]:
    return GITOPS if isinstance(engine, GitOpsEngine) else READINESS
