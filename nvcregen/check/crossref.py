"""Checks across the objects of one output tree: references, identities, counts (pure)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from nvcregen.check.findings import Finding
from nvcregen.check.policy import find_key
from nvcregen.core import codes
from nvcregen.core import labels as labels_
from nvcregen.core.fields import list_at, mapping_at
from nvcregen.core.kueuekeys import PREBUILT_LABEL
from nvcregen.core.nvcre import NVCRE_GROUP
from nvcregen.spec.positions import pointer

if TYPE_CHECKING:  # the plan's models (pydantic) stay out of a check worker's imports
    from nvcregen.plan.model import TestUnit

# LogProfiles the NVCRE 0.7.0 chart installs (templates/*.yaml): they exist on any
# cluster with NVCRE, so references to them need no generated object.
BUILTIN_LOG_PROFILES = frozenset(
    {"nccl-bandwidth", "nccl-loopback", "megatron-training", "megatron-bridge", "nemo-4-training"}
)
COUNTED_KINDS = frozenset({"Certification", "WorkloadRun"})


@dataclass(frozen=True)
class Located:
    """An object and the file it was read from."""

    file: str
    obj: Mapping[str, Any]

    @property
    def identity(self) -> tuple[str, str, str, str]:
        """(apiVersion group, kind, namespace, name): what the API server keys it by."""
        meta = mapping_at(self.obj, "metadata") or {}
        group = str(self.obj.get("apiVersion", "")).rpartition("/")[0]
        return (
            group,
            str(self.obj.get("kind")),
            str(meta.get("namespace", "")),
            str(meta.get("name")),
        )


@dataclass(frozen=True)
class PoolCounts:
    """What a pool has per node, for checking the counts objects request."""

    gpus: int
    nics: int


def stage_counts(test_units: Iterable[TestUnit]) -> dict[str, PoolCounts]:
    """What the pool of each planned stage has per node, by stage name."""
    counts: dict[str, PoolCounts] = {}
    for unit in test_units:
        nics = unit.pool.spec.nics
        counts[unit.stage.name] = PoolCounts(unit.pool.gpus_per_node, nics.count if nics else 0)
    return counts


def stage_of(obj: Mapping[str, Any]) -> str | None:
    """The plan stage a generated object belongs to, from its `nvcregen.io/stage` label."""
    found = mapping_at(obj, "metadata", "labels") or {}
    stage = found.get(labels_.STAGE)
    return str(stage) if stage is not None else None


def check_log_profiles(objects: list[Located]) -> Iterator[tuple[str, Finding]]:
    """Every `logProfileRef` names a generated LogProfile or one the chart installs.

    The field is NVCRE's, so only NVCRE's objects are searched for it: at fleet size the
    rest (tens of thousands of TrainJobs and Workloads) cost more than the whole check.
    """
    known = BUILTIN_LOG_PROFILES | {
        str((mapping_at(o.obj, "metadata") or {}).get("name"))
        for o in objects
        if o.obj.get("kind") == "LogProfile"
    }
    for located in objects:
        if not str(located.obj.get("apiVersion", "")).startswith(f"{NVCRE_GROUP}/"):
            continue
        for path, value in find_key(located.obj, "logProfileRef"):
            if isinstance(value, str) and value not in known:
                message = f"LogProfile '{value}' is neither generated nor installed by the chart"
                hint = "add the test's LogProfile, or use a built-in one"
                yield located.file, Finding(pointer(path), codes.NVC630.code, message, hint=hint)


def check_identities(objects: list[Located]) -> Iterator[tuple[str, Finding]]:
    """No two files define the same object."""
    seen: dict[tuple[str, str, str, str], str] = {}
    for located in objects:
        first = seen.setdefault(located.identity, located.file)
        if first != located.file:
            _, kind, _, name = located.identity
            yield (
                located.file,
                Finding(
                    "/metadata/name", codes.NVC633.code, f"{kind} {name} is also defined in {first}"
                ),
            )


def check_counts(located: Located, pool: PoolCounts) -> Iterator[Finding]:
    """GPU and NIC counts are explicit and match the pool the object's stage runs on."""
    if located.obj.get("kind") not in COUNTED_KINDS:
        return
    spec = mapping_at(located.obj, "spec") or {}  # a spec of another type: NVC602
    places: list[tuple[str, Mapping[str, Any]]] = [("/spec", spec)]
    for index, category in enumerate(list_at(spec, "categories")):
        options = category.get("options") if isinstance(category, Mapping) else []
        if options is None or isinstance(options, Mapping):  # else NVC602 reports it
            places.append((f"/spec/categories/{index}/options", options or {}))
    for where, block in places:
        yield from _counts_in(where, block, pool)


def _counts_in(where: str, block: Mapping[str, Any], pool: PoolCounts) -> Iterator[Finding]:
    gpus = block.get("gpusPerNode")
    if gpus != pool.gpus:
        yield Finding(
            f"{where}/gpusPerNode",
            codes.NVC631.code,
            f"gpusPerNode is {gpus}, but the pool has {pool.gpus} GPUs per node",
            hint="NVCRE falls back to 4 GPUs for models it does not know; write the count",
        )
    nics = block.get("mlnxPerNode")
    if not isinstance(nics, int) or nics > pool.nics:
        yield Finding(
            f"{where}/mlnxPerNode",
            codes.NVC631.code,
            f"mlnxPerNode is {nics}, but the pool has {pool.nics} RDMA NICs per node",
            hint="write mlnxPerNode explicitly: 0 to opt out, at most the pool's NIC count",
        )


def check_prebuilt_workloads(objects: list[Located]) -> Iterator[tuple[str, Finding]]:
    """NVC383: a run's prebuilt Workload is in the tree, in the run's own folder.

    Kueue never starts a run labelled with a prebuilt Workload it cannot find (it stops it
    as "missing workload", `jobframework/reconciler.go`, `handleJobWithNoWorkload`), and
    a Workload in another folder is applied by another step: the run's step cannot fail on
    its health (docs/design/0006-stage-gating.md).
    """
    workloads = {
        o.identity[2:]: o
        for o in objects
        if o.obj.get("kind") == "Workload"
        and str(o.obj.get("apiVersion", "")).startswith("kueue.x-k8s.io/")
    }
    for located in objects:
        meta = mapping_at(located.obj, "metadata") or {}
        name = (mapping_at(meta, "labels") or {}).get(PREBUILT_LABEL)
        if name is None or located.obj.get("kind") == "Workload":
            continue
        where = pointer(["metadata", "labels", PREBUILT_LABEL])
        found = workloads.get((str(meta.get("namespace", "")), str(name)))
        if found is None:
            message = (
                f"the prebuilt Workload '{name}' is not in the tree: Kueue never starts this run"
            )
            hint = "render the site again (each queued run's Workload is generated beside it)"
            yield located.file, Finding(where, codes.NVC383.code, message, hint=hint)
        elif found.file.rpartition("/")[0] != located.file.rpartition("/")[0]:
            message = (
                f"the prebuilt Workload '{name}' is in {found.file}, not beside the run: "
                "another step applies it, so this step cannot fail on its health"
            )
            hint = "keep a run's Workload in the run's folder"
            yield located.file, Finding(where, codes.NVC383.code, message, hint=hint)
