"""GitOps references to a Helm chart in an OCI registry, written by the site's engine.

When nvcregen does not render a chart itself, it writes the objects that make the GitOps
engine install it; each engine's package holds them (`engines/gitops/<engine>/
chartref.py`, `CHART_REF`: for Flux an `OCIRepository` plus a `HelmRelease`, for Argo CD
an `Application` with a Helm source), found through the registry and asked through
`ChartReference`. A chart pinned by digest is pulled by that digest.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeGuard, runtime_checkable

from nvcregen.core.manifest import Obj
from nvcregen.engineapi.protocol import GitOpsEngine
from nvcregen.engineapi.registry import GITOPS, parts, required_part


@dataclass(frozen=True)
class ChartRelease:
    """One Helm release of a chart from an OCI registry.

    Attributes:
        name: Name of the generated objects (and the Helm release).
        ref: `oci://host/path/chart`.
        version: Chart version (an OCI tag).
        digest: OCI manifest digest (`sha256:...`) that pins the chart, if known.
        namespace: Namespace the release is installed into.
        values: Helm values.

    """

    name: str
    ref: str
    version: str
    digest: str | None
    namespace: str
    values: Obj = field(default_factory=dict)

    @property
    def repository(self) -> str:
        """The registry and path without the chart: `oci://ghcr.io/a/b` -> `ghcr.io/a`."""
        return self.ref.removeprefix("oci://").rsplit("/", 1)[0]

    @property
    def chart(self) -> str:
        """The chart name: the last path element of the reference."""
        return self.ref.rsplit("/", 1)[-1]


# (chart reference without oci://, version, digest, Helm values) of one chart install
ChartPull = tuple[str, str, str | None, Obj]


@runtime_checkable
class ChartReference(Protocol):
    """A GitOps engine's objects installing a chart from an OCI registry."""

    def objects(self, release: ChartRelease, app_name: str, project: str) -> list[Obj]:
        """The objects that make the engine install `release` (module doc)."""
        ...

    def pulls(self, objects: Sequence[Obj]) -> Iterator[ChartPull]:
        """What each chart install among `objects` written by the engine pulls (`images.txt`)."""
        ...

    def release_values(self, obj: Mapping[str, Any]) -> tuple[str, Any] | None:
        """The Helm release an object of the engine installs, and the values it sets.

        None for any object that installs no chart with this engine (read as untrusted:
        the values are whatever the object holds).
        """
        ...


def is_chart_reference(found: object) -> TypeGuard[ChartReference]:
    """Whether an engine's `CHART_REF` writes chart references."""
    return isinstance(found, ChartReference)


def chart_reference(engine: GitOpsEngine) -> ChartReference:
    """The engine's writer of chart references.

    Raises:
        LookupError: The engine's package holds none (every registered engine has one).

    """
    return required_part(
        engine, "chartref", "CHART_REF", is_chart_reference, "writes no chart reference"
    )


def chart_references() -> tuple[ChartReference, ...]:
    """Every registered GitOps engine's chart references, in registry order."""
    return parts(GITOPS, "chartref", "CHART_REF", is_chart_reference)


def reference_objects(
    release: ChartRelease, engine: GitOpsEngine, *, app_name: str, project: str
) -> list[Obj]:
    """The objects that make `engine` install the release.

    `app_name` and `project` name the Argo CD Application and its AppProject; Flux objects
    are named after the release and live in its namespace.
    """
    return chart_reference(engine).objects(release, app_name, project)


def reference_notes(release: ChartRelease, engine: GitOpsEngine) -> tuple[str, ...]:
    """What a reader of index.json should know about how the chart is pinned."""
    pin = f"digest {release.digest}" if release.digest else "tag only (no chart digest pinned)"
    return (
        f"chart {release.ref} {release.version}, {pin}",
        *engine.pull_notes(release.repository, release.digest),
    )
