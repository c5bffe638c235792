"""What the engines running a tree can hold (`catalog/engines.yaml`): units, admission, workers.

Facts about Argo CD, Flux, etcd and Kueue, each with its source in the file: how many
objects and bytes one GitOps unit may apply, how large the status the engine writes for
it may grow, how fast Kueue admits, and how many Kustomizations Flux reconciles at once.
The replay refuses a unit over a limit (NVC677) and `plan` states admission and workers.
"""

from __future__ import annotations

import functools
from typing import Annotated

from pydantic import Field

from nvcregen.core import codes, units
from nvcregen.core.datafiles import data_dir
from nvcregen.core.errors import NvcregenError
from nvcregen.spec.fast import fast_document
from nvcregen.spec.parse import parse_model
from nvcregen.spec.v1alpha1 import Duration, Size, StrictModel


class UnitLimits(StrictModel):
    """What one Argo CD Application or Flux Kustomization may apply, and its status."""

    max_objects: Annotated[int, Field(ge=1, le=100_000)]
    max_manifests: Size
    max_status: Size


class ArgoCdFacts(StrictModel):
    """Argo CD's Application status: bytes per resource it lists."""

    status_per_resource: Size


class FluxFacts(StrictModel):
    """Flux's Kustomization inventory and workers."""

    inventory_per_entry: Size
    workers: Annotated[int, Field(ge=1, le=1024)]


class KueueFacts(StrictModel):
    """Kueue's admission: one workload per ClusterQueue per cycle, and pod sets."""

    cycle_expected: Duration
    cycle_worst: Duration
    max_pod_sets: Annotated[int, Field(ge=1, le=64)]


class EngineFacts(StrictModel):
    """Everything in `catalog/engines.yaml`."""

    unit: UnitLimits
    argocd: ArgoCdFacts
    flux: FluxFacts
    kueue: KueueFacts
    sources: list[str] = Field(min_length=1)

    @property
    def max_manifest_bytes(self) -> int:
        """The largest manifests of one unit, in bytes."""
        return units.parse_size(self.unit.max_manifests)

    @property
    def max_status_bytes(self) -> int:
        """The largest status an engine may write for one unit, in bytes."""
        return units.parse_size(self.unit.max_status)

    @property
    def argocd_status_per_resource(self) -> int:
        """Bytes of Application status per resource."""
        return units.parse_size(self.argocd.status_per_resource)

    @property
    def flux_inventory_per_entry(self) -> int:
        """Bytes of Kustomization inventory per entry beyond its id and version."""
        return units.parse_size(self.flux.inventory_per_entry)

    @property
    def cycle_expected_ms(self) -> int:
        """Kueue's expected time per admission, in milliseconds."""
        return units.parse_duration(self.kueue.cycle_expected)

    @property
    def cycle_worst_ms(self) -> int:
        """Kueue's worst observed time per admission, in milliseconds."""
        return units.parse_duration(self.kueue.cycle_worst)


@functools.cache
def engine_facts() -> EngineFacts:
    """The packaged `catalog/engines.yaml`, read once; NvcregenError when it is invalid."""
    path = data_dir("catalog") / "engines.yaml"
    fast = fast_document(path, "catalog/engines.yaml")
    if fast is not None:
        facts, diags = parse_model(fast, EngineFacts, code=codes.NVC220.code)
        if facts is not None:
            return facts
        raise NvcregenError(diags)
    from nvcregen.spec.load import load_file

    _, diags = load_file(path, "catalog/engines.yaml")
    raise NvcregenError(diags)
