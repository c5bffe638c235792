"""What a Helm chart installs, per chart version: kinds, namespaces and images (pure).

nvcregen references some charts without rendering them (Kubeflow Trainer, Kueue, NVCRE
from its registry): the GitOps engine renders them on the cluster. What they will create
still matters here. An Argo CD AppProject must allow every cluster-scoped kind and every
namespace a chart writes to, or Argo CD refuses the sync ("not permitted in project"); a
mirror must serve every image the chart pulls. `catalog/charts/<chart>-<version>.yaml`
holds those facts, read from the chart's templates at that version (provenance in each
file's `sources` and `catalog/SOURCES.md`).

A chart renders some objects only for some values (Trainer's bundled JobSet only with
`jobset.install`); such a part names the values it needs (`when`), with the chart's own
default for each, and `ChartEntry.installs(values)` evaluates them against the values
nvcregen sets.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import Field

from nvcregen.spec.v1alpha1 import StrictModel

GroupKind = tuple[str, str]
_GROUP_KIND = r"^([a-z0-9.-]+/)?[A-Z][A-Za-z0-9]*$"


def parse_group_kind(text: str) -> GroupKind:
    """`rbac.authorization.k8s.io/ClusterRole` -> (group, kind); a bare kind is core (`""`)."""
    group, _, kind = text.rpartition("/")
    return group, kind


def show_group_kind(group_kind: GroupKind) -> str:
    """(group, kind) as `group/Kind`, or `Kind` for the core group."""
    group, kind = group_kind
    return f"{group}/{kind}" if group else kind


class Condition(StrictModel):
    """A chart value a part needs: `path` (dotted) must equal `equals` (`default` if unset)."""

    path: str
    equals: bool | str | int
    default: bool | str | int | None = None

    def holds(self, values: Mapping[str, Any]) -> bool:
        """Whether the values (with the chart's default where unset) meet the condition."""
        found: Any = values
        for key in self.path.split("."):
            if not isinstance(found, Mapping) or key not in found:
                return self.default == self.equals
            found = found[key]
        return bool(found == self.equals)


class ChartPart(StrictModel):
    """Objects a chart renders together, always or under conditions on its values.

    `clusterKinds` are the cluster-scoped kinds (`group/Kind`); `namespaces` the
    namespaces other than the release's it writes namespaced objects to.
    """

    name: str
    when: list[Condition] = Field(default_factory=list)
    cluster_kinds: list[Annotated[str, Field(pattern=_GROUP_KIND)]] = Field(default_factory=list)
    namespaces: list[str] = Field(default_factory=list)

    def active(self, values: Mapping[str, Any]) -> bool:
        """Whether the chart renders this part with these values."""
        return all(condition.holds(values) for condition in self.when)


class ChartImage(StrictModel):
    """An image a chart pulls, and the values keys that set it.

    `image` is the reference the chart pulls by default. `registry`, `repository`, `tag`
    and `digest` name the dotted values keys that hold each part (a chart without a
    registry key takes `registry/repository` in `repository`; one without a digest key
    takes `tag@sha256:...` in `tag`, which its templates join as `repository:tag`).
    """

    name: str
    when: list[Condition] = Field(default_factory=list)
    image: str
    registry: str | None = None
    repository: str
    tag: str | None = None
    digest: str | None = None

    def active(self, values: Mapping[str, Any]) -> bool:
        """Whether the chart runs this image with these values."""
        return all(condition.holds(values) for condition in self.when)

    def reference(self, values: Mapping[str, Any]) -> str:
        """The image the chart pulls with `values`: each part from its key, else the default."""
        registry, repository, tag = split_image(self.image, registry=self.registry is not None)
        registry = str(lookup(values, self.registry) or registry)
        repository = str(lookup(values, self.repository) or repository)
        tag = str(lookup(values, self.tag) or tag)
        digest = lookup(values, self.digest)
        ref = f"{registry}/{repository}" if self.registry else repository
        if tag and not digest:
            ref += f":{tag}"
        return f"{ref}@{digest}" if digest else ref


def split_image(image: str, *, registry: bool) -> tuple[str, str, str]:
    """(registry, repository, tag) of a reference.

    The registry stays in the repository when the chart has no key of its own for it.
    """
    name, _, tag = image.rpartition(":") if ":" in image.rsplit("/", 1)[-1] else (image, "", "")
    if registry:
        host, _, path = name.partition("/")
        return host, path, tag
    return "", name, tag


def lookup(values: Mapping[str, Any], path: str | None) -> Any:
    """The value at a dotted path, or None."""
    if path is None:
        return None
    found: Any = values
    for key in path.split("."):
        if not isinstance(found, Mapping) or key not in found:
            return None
        found = found[key]
    return found or None


class ChartEntry(StrictModel):
    """One chart version: where it comes from, what it installs, what it pulls."""

    name: str
    version: str
    ref: str
    parts: list[ChartPart] = Field(min_length=1)
    images: list[ChartImage] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    sources: list[str] = Field(min_length=1)

    @property
    def key(self) -> str:
        """`<name>@<version>`, how the catalog keys charts."""
        return chart_key(self.name, self.version)

    def installs(self, values: Mapping[str, Any]) -> ChartInstall:
        """The cluster-scoped kinds and extra namespaces the chart creates with `values`."""
        parts = [part for part in self.parts if part.active(values)]
        kinds = {parse_group_kind(k) for part in parts for k in part.cluster_kinds}
        namespaces = {ns for part in parts for ns in part.namespaces}
        return ChartInstall(frozenset(kinds), frozenset(namespaces))

    def pulled(self, values: Mapping[str, Any]) -> list[ChartImage]:
        """The images the chart runs with `values`."""
        return [image for image in self.images if image.active(values)]


@dataclass(frozen=True)
class ChartInstall:
    """What a chart release creates that an Argo CD project must allow."""

    cluster_kinds: frozenset[GroupKind]
    namespaces: frozenset[str]


def chart_key(name: str, version: str) -> str:
    """How the catalog keys a chart version: `kubeflow-trainer@2.2.1`."""
    return f"{name}@{version.removeprefix('v')}"
