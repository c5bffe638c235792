"""NVCRE mode's readiness layer: a Certification per stage, WorkloadRuns, their LogProfile."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import groupby
from typing import Any

from nvcregen.compile.queue.workloads import gang_scheduler, queue_labels
from nvcregen.compile.readiness.components import READINESS
from nvcregen.compile.readiness.launch import launch_of
from nvcregen.compile.readiness.mpi import GPU_PRESENT, GPU_PRODUCT
from nvcregen.compile.readiness.nodescript import node_env, node_script
from nvcregen.compile.readiness.pods import devices, pod_resources, taint_selectors
from nvcregen.core import units
from nvcregen.core.labels import SITE, STAGE, TEST
from nvcregen.core.manifest import Manifest, Obj, content_hash, hashed_name
from nvcregen.core.nvcre import CERTIFICATION_NAME_MAX, NVCRE_API, WORKLOADRUN_NAME_MAX
from nvcregen.kindapi.registry import kind_of
from nvcregen.plan.model import Pool, TestUnit
from nvcregen.plan.resolve import nvcre_runs_groups
from nvcregen.spec.v1alpha1 import Site

NCCL_LOG_PROFILE = "nccl-bandwidth"  # after `nvcregen-<site>-`: LogProfiles are cluster-scoped
DIAGNOSE_MIN_GROUP = 2  # a link fault needs two nodes to show; NVCRE's default too


def readiness_manifests(site: Site, test_units: Sequence[TestUnit]) -> list[Manifest]:
    """Build the readiness layer for a planned site."""
    manifests: list[Manifest] = []
    for _, group in groupby(test_units, key=lambda u: u.stage_index):
        stage_units = list(group)
        categories = [u for u in stage_units if u.mode == "category"]
        if categories:
            manifests.append(stage_certification(site, categories))
        manifests += [
            run
            for u in stage_units
            if u.mode == "workloadrun"
            for run in (grouped_runs(site, u) if _own_groups(u) else [workload_run(site, u)])
        ]
    if any(_uses_nccl_profile(u) for u in test_units):
        manifests.append(nccl_log_profile(site))
    return manifests


def nvcre_target(pool: Pool) -> Obj:
    """Select a pool's nodes: GPU nodes of the product, named ones, and their taints.

    NVCRE gives the pods the tolerations matching `taintSelectors`.
    """
    selector = {GPU_PRESENT: "true", **(pool.spec.selector or {})}
    spec: Obj = {
        "nodeSelector": selector,
        "matchExpressions": [
            {"key": GPU_PRODUCT, "operator": "In", "values": list(pool.product_labels)}
        ],
    }
    if pool.spec.nodes is not None:
        spec["nodeNames"] = list(pool.spec.nodes)
    if selectors := taint_selectors(pool):
        spec["taintSelectors"] = selectors
    return spec


def node_counts(unit: TestUnit) -> Obj:
    """Every per-node count, written explicitly so NVCRE's 4-GPU/0-NIC fallback never applies."""
    result: Obj = {"gpusPerNode": unit.pool.gpus_per_node, "mlnxPerNode": unit.nics_per_node}
    if unit.nic_resource is not None:
        result["nicResourceName"] = unit.nic_resource[0]
    return result


def stage_certification(site: Site, stage_units: Sequence[TestUnit]) -> Manifest:
    """One Certification for a stage's tests that NVCRE's catalog knows."""
    first = stage_units[0]
    window = site.spec.readiness.window
    spec: Obj = {
        "target": nvcre_target(first.pool),
        **node_counts(first),
        "maxConcurrent": window.max_concurrent_jobs,
        "repeatCount": site.spec.readiness.rounds,
        "workloadMetadata": {"labels": nvcre_workload_labels(site, first)},
        "categories": [_category(u) for u in stage_units],
    }
    if gang := gang_scheduler(site):
        spec["gangScheduler"] = gang
    name = hashed_name(
        [site.metadata.name, first.stage.name], content_hash(spec), CERTIFICATION_NAME_MAX
    )
    obj = _object("Certification", name, site.spec.nvcre.namespace, spec)
    return Manifest(
        obj,
        READINESS,
        f"/spec/readiness/stages/{first.stage_index}",
        _catalog_files(stage_units),
        tuple(t.derivation for u in stage_units for t in u.thresholds),
    )


def _category(unit: TestUnit) -> Obj:
    assert unit.test.nvcre is not None
    options: Obj = {
        **node_counts(unit),
        "nodesPerJob": unit.nodes_per_job,
        "timeoutPerJob": units.format_duration(unit.timeout_ms),
        "image": unit.image,
        "testScale": _test_scale(unit),
    }
    if unit.stage.groups == "diagnose":
        options["minGroupSize"] = DIAGNOSE_MIN_GROUP
    options.update(kind_of(unit.test).nvcre_options(unit.test))
    if unit.thresholds:
        options["thresholds"] = _threshold_map(unit)
    return {
        "domain": unit.test.nvcre.domain,
        "variant": unit.test.nvcre.variant,
        "options": options,
    }


def _own_groups(unit: TestUnit) -> bool:
    """Whether a unit's fabric groups are WorkloadRuns of their own (NVCRE cannot form them)."""
    return unit.grouping is not None and not nvcre_runs_groups(unit.stage, unit.pool.spec)


def grouped_runs(site: Site, unit: TestUnit) -> list[Manifest]:
    """One WorkloadRun per fabric group (a leaf, a leaf pair, an NVLink domain).

    NVCRE splits a target's sorted nodes into consecutive groups and cannot group by a
    leaf label, so each group is its own WorkloadRun, targeting exactly its nodes.
    """
    assert unit.grouping is not None
    return [
        workload_run(site, unit, (index, group)) for index, group in enumerate(unit.grouping.groups)
    ]


def workload_run(
    site: Site, unit: TestUnit, group: tuple[int, tuple[str, ...]] | None = None
) -> Manifest:
    """A WorkloadRun for a test NVCRE's catalog cannot express as asked (or one fabric group)."""
    window = site.spec.readiness.window
    selected = nvcre_target(unit.pool)
    if group is not None:
        selected["nodeNames"] = list(group[1])
    spec: Obj = {
        "image": unit.image,
        "numNodes": len(group[1]) if group is not None else unit.nodes_per_job,
        **node_counts(unit),
        "target": selected,
        "orchestration": {
            "testScale": _test_scale(unit),
            "repeatCount": site.spec.readiness.rounds,
            "maxConcurrent": 1 if group is not None else window.max_concurrent_jobs,
            "timeoutPerJob": units.format_duration(unit.timeout_ms),
        },
        "workloadMetadata": {"labels": nvcre_workload_labels(site, unit)},
        **_workload(site, unit),
    }
    if unit.pod is not None:
        spec["resources"] = pod_resources(unit, devices(unit))
    if gang := gang_scheduler(site, label_key=False):
        spec["gangScheduler"] = gang
    if unit.thresholds:
        spec["thresholds"] = _threshold_map(unit)
    parts = [site.metadata.name, unit.stage.name, unit.test.name]
    if group is not None:
        parts.append(f"g{group[0]}")
    name = hashed_name(parts, content_hash(spec), WORKLOADRUN_NAME_MAX)
    obj = _object("WorkloadRun", name, site.spec.nvcre.namespace, spec)
    source = (
        f"/spec/readiness/stages/{unit.stage_index}/tests/{unit.stage.tests.index(unit.test.name)}"
    )
    notes = tuple(t.derivation for t in unit.thresholds)
    return Manifest(obj, READINESS, source, _catalog_files([unit]), notes)


def _workload(site: Site, unit: TestUnit) -> Obj:
    kind = kind_of(unit.test)
    if kind.collective:
        swept = kind.sweep(unit.test)  # its collective is the measurement's testType
        if swept is None:
            raise TypeError(
                f"test {unit.test.name}: the {kind.name} kind is collective but sweeps nothing"
            )
        launch = launch_of(unit)
        env = launch.env(unit)
        return {
            "framework": {"mpi": launch.framework(unit, env)},
            "env": [{"name": k, "value": v} for k, v in env.items()],
            "bandwidthMeasurement": {
                "logProfileRef": log_profile_name(site),
                "testType": swept.test_type,
            },
        }
    if kind.per_node:
        command = ["/bin/bash", "-c", node_script(site, unit)]
        return {"framework": {"exec": {"command": command}}, "env": node_env(unit)}
    raise ValueError(f"test {unit.test.name} has no WorkloadRun form")


def _test_scale(unit: TestUnit) -> str:
    """NVCRE's `testScale` for a unit: a fabric group's own, else the stage scope's.

    `accelerator` groups are NVCRE's `intra-rack` when the pool's NVLink label is the
    one NVCRE groups by (`nvidia.com/gpu.clique`); otherwise each domain is a WorkloadRun
    running its group at full scale.
    """
    if unit.stage.scope == "intra-node" or kind_of(unit.test).one_node:  # node health
        return "intra-node"
    if unit.stage.groups == "diagnose":
        return "diagnose"
    if unit.stage.groups == "accelerator" and nvcre_runs_groups(unit.stage, unit.pool.spec):
        return "intra-rack"
    return "full-scale"


def _threshold_map(unit: TestUnit) -> dict[str, str]:
    merged: dict[str, list[str]] = {}
    for t in unit.thresholds:
        merged.setdefault(t.key, [])
        if t.expression not in merged[t.key]:
            merged[t.key].append(t.expression)
    return {key: " && ".join(exprs) for key, exprs in sorted(merged.items())}


def nvcre_workload_labels(site: Site, unit: TestUnit) -> dict[str, str]:
    """Labels NVCRE copies onto each TrainJob: site and stage, and the site's Kueue queue."""
    found = {SITE: site.metadata.name, STAGE: unit.stage.name}
    if unit.mode == "workloadrun":
        found[TEST] = unit.test.name
    return found | queue_labels(site, unit.stage_index)


def log_profile_name(site: Site) -> str:
    """`nvcregen-<site>-nccl-bandwidth`: LogProfiles are cluster-scoped, so one per site.

    Two sites on one cluster must not apply (and prune) the same object.
    """
    return f"nvcregen-{site.metadata.name}-{NCCL_LOG_PROFILE}"


def nccl_log_profile(site: Site) -> Manifest:
    """A LogProfile that reads nccl-tests result rows from the MPI launcher's log."""
    spec = {
        "timestamp": {"layout": "2006-01-02T15:04:05.999999999Z07:00"},
        "workerStrategy": {"type": "Single", "replicatedJobName": "launcher"},
        "patterns": {
            "bandwidthResult": {
                # Columns: size, count, type, redop, root, then out-of-place time, algbw, busbw.
                "regex": (
                    r"^\s*(?P<size>\d+)\s+\d+\s+\S+\s+\S+\s+-?\d+\s+[\d.]+\s+"
                    r"(?P<algBW>[\d.]+)\s+(?P<busBW>[\d.]+)"
                ),
                "example": (
                    "  1073741824     268435456     float     sum      -1   4709.6"
                    "  227.99  427.48      0   4712.1  227.87  427.26      0"
                ),
            }
        },
    }
    obj = {
        "apiVersion": NVCRE_API,
        "kind": "LogProfile",
        "metadata": {"name": log_profile_name(site)},
        "spec": spec,
    }
    return Manifest(obj, READINESS, "/spec/readiness")


def _uses_nccl_profile(unit: TestUnit) -> bool:
    return unit.mode == "workloadrun" and kind_of(unit.test).collective


def _object(kind: str, name: str, namespace: str, spec: Obj) -> Obj:
    metadata: dict[str, Any] = {"name": name, "namespace": namespace}
    return {"apiVersion": NVCRE_API, "kind": kind, "metadata": metadata, "spec": spec}


def _catalog_files(stage_units: Sequence[TestUnit]) -> tuple[str, ...]:
    files = {stage_units[0].pool.catalog_file} | {u.test_file for u in stage_units}
    return tuple(sorted(files))
