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

import functools
import importlib
import importlib.util
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Final, Generic, TypeGuard, TypeVar

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

E = TypeVar("E", GitOpsEngine, ReadinessEngine)
T = TypeVar("T")


def _defined(path: str) -> object:
    """The `ENGINE` a registered module defines (its family checked by the caller)."""
    return getattr(importlib.import_module(path), "ENGINE", None)


def _add(found: dict[str, tuple[E, str]], engine: E, path: str) -> None:
    """Register one engine by its name, with its package.

    Raises:
        ValueError: Another module registered that name.

    """
    if engine.name in found:
        raise ValueError(f"engine {engine.name!r} is registered twice ({path})")
    found[engine.name] = (engine, path.rpartition(".")[0])


@functools.cache
def _gitops() -> dict[str, tuple[GitOpsEngine, str]]:
    """Each GitOps engine by name, with its package; imported once, on first use.

    Raises:
        TypeError: A registered module defines no `GitOpsEngine` as `ENGINE`.
        ValueError: Two modules register one name.

    """
    found: dict[str, tuple[GitOpsEngine, str]] = {}
    for path in GITOPS_MODULES:
        engine = _defined(path)
        if not isinstance(engine, GitOpsEngine):
            raise TypeError(f"{path} defines no GitOpsEngine as ENGINE")
        _add(found, engine, path)
    return found


@functools.cache
def _readiness() -> dict[str, tuple[ReadinessEngine, str]]:
    """Each readiness engine by name, with its package; imported once, on first use.

    Raises:
        TypeError: A registered module defines no `ReadinessEngine` as `ENGINE`.
        ValueError: Two modules register one name.

    """
    found: dict[str, tuple[ReadinessEngine, str]] = {}
    for path in READINESS_MODULES:
        engine = _defined(path)
        if not isinstance(engine, ReadinessEngine):
            raise TypeError(f"{path} defines no ReadinessEngine as ENGINE")
        _add(found, engine, path)
    return found


class _Engines(Mapping[str, E], Generic[E]):
    """Every registered engine of a family by its name, loaded the first time it is read."""

    def __init__(self, loaded: Callable[[], dict[str, tuple[E, str]]]) -> None:
        self._loaded: Callable[[], dict[str, tuple[E, str]]] = loaded

    def __getitem__(self, name: str) -> E:
        return self._loaded()[name][0]

    def __iter__(self) -> Iterator[str]:
        return iter(self._loaded())

    def __len__(self) -> int:
        return len(self._loaded())


GITOPS: Final[Mapping[str, GitOpsEngine]] = _Engines(_gitops)
READINESS: Final[Mapping[str, ReadinessEngine]] = _Engines(_readiness)


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
    loaded = _gitops() if isinstance(engine, GitOpsEngine) else _readiness()
    registered, package = loaded[engine.name]
    if registered is not engine:
        raise KeyError(f"engine {engine.name!r} is not the registered one")
    return package


def part_of(
    engine: GitOpsEngine | ReadinessEngine,
    part: str,
    attribute: str,
    fits: Callable[[object], TypeGuard[T]],
) -> T | None:
    """What an engine implements of a layer's protocol: `attribute` of its module `part`.

    `fits` is the layer's check that the object implements its protocol (an `isinstance`
    of a runtime-checkable `Protocol`). None when the engine's package has no such module,
    or the module nothing under `attribute` (the engine has no such part).

    Raises:
        KeyError: The engine is not registered.
        TypeError: The module holds something under `attribute` that does not fit (a bug
            of the engine).

    """
    name = f"{package_of(engine)}.{part}"
    if importlib.util.find_spec(name) is None:
        return None
    module = importlib.import_module(name)
    if not hasattr(module, attribute):
        return None
    found = getattr(module, attribute)
    if not fits(found):
        raise TypeError(f"{name}.{attribute} does not fit {fits.__name__}")
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
