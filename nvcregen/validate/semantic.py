"""Semantic checks of a schema-valid Site: references, units, fabric, budget."""

from __future__ import annotations

import difflib
from collections.abc import Iterator

from nvcregen.catalog.load import Catalog
from nvcregen.core import codes, units
from nvcregen.core.errors import Diagnostic, Severity, has_errors
from nvcregen.core.metrics import BANDWIDTH_FIELDS, METRICS
from nvcregen.core.secrets import shown
from nvcregen.core.units import check_unit
from nvcregen.kindapi.registry import kind_of
from nvcregen.plan.budget import hours, worst_case
from nvcregen.plan.images import is_pinned, source_image
from nvcregen.plan.resolve import network_for, stage_pool_name
from nvcregen.plan.resolved import Plan
from nvcregen.spec.positions import Document
from nvcregen.spec.v1alpha1 import Site
from nvcregen.validate.admission import admission_problems
from nvcregen.validate.feasibility import label_problems, physics_problems, pool_problems
from nvcregen.validate.labelmaps import label_map_problems
from nvcregen.validate.nvcreform import nvcre_form_problems
from nvcregen.validate.periodic import periodic_problems
from nvcregen.validate.slips import nic_slips
from nvcregen.validate.trainer import trainer_mode_problems


class _Report:
    """Collects diagnostics for one document."""

    def __init__(self, doc: Document) -> None:
        self.doc = doc
        self.diagnostics: list[Diagnostic] = []

    def add(
        self,
        where: str,
        code: str,
        message: str,
        hint: str = "",
        *,
        severity: Severity = Severity.ERROR,
        notes: tuple[str, ...] = (),
    ) -> None:
        self.diagnostics.append(
            Diagnostic(self.doc.span(where), severity, code, message, where, hint, notes)
        )


def check_references(
    site: Site, catalog: Catalog, doc: Document, *, strict: bool = False
) -> list[Diagnostic]:
    """Return every semantic problem of a site but its physics and budget (`check_plan`)."""
    report = _Report(doc)
    _check_units(site, report)
    _check_pools(site, catalog, report)
    _check_stages(site, catalog, report)
    _check_thresholds(site, catalog, report)
    _check_images(site, catalog, report, strict=strict)
    report.diagnostics += trainer_mode_problems(site, catalog, doc)  # engine: trainer only
    report.diagnostics += nvcre_form_problems(site, catalog, doc)  # engine: nvcre only
    report.diagnostics += periodic_problems(site, catalog, doc)  # readiness.periodic
    report.diagnostics += admission_problems(site, catalog, doc)  # Kueue or gang scheduler
    report.diagnostics += label_problems(site, catalog, doc) + pool_problems(site, doc)
    report.diagnostics += label_map_problems(site, doc)  # NVC115
    return sorted(report.diagnostics, key=Diagnostic.sort_key)


def _unit_fields(site: Site) -> Iterator[tuple[str, str, str]]:
    """Yield (pointer, unit kind, value) for every unit-bearing field of a site."""
    readiness = site.spec.readiness
    yield "/spec/readiness/window/deadline", "duration", readiness.window.deadline
    for i, stage in enumerate(readiness.stages):
        if stage.timeout_per_job:
            yield f"/spec/readiness/stages/{i}/timeoutPerJob", "duration", stage.timeout_per_job
    for i, pool in enumerate(site.spec.node_pools):
        if pool.nics:
            yield f"/spec/nodePools/{i}/nics/speed", "bandwidth", pool.nics.speed
    for i, t in enumerate(site.spec.thresholds):
        if t.at:
            yield f"/spec/thresholds/{i}/at", "size", t.at
        for field in BANDWIDTH_FIELDS:
            if value := getattr(t, field):
                yield f"/spec/thresholds/{i}/{field}", "bandwidth-comparison", value
        if t.goodput:
            yield f"/spec/thresholds/{i}/goodput", "ratio-comparison", t.goodput


def _check_units(site: Site, report: _Report) -> None:
    for where, kind, value in _unit_fields(site):
        problem = check_unit(kind, value)
        if problem is not None:
            report.add(where, codes.NVC309.code, problem[0], problem[1])
        elif kind == "bandwidth-comparison":
            comparison = units.parse_comparison(value, unit_kind="bandwidth")
            if "Gb" in comparison.written or "bps" in comparison.written:
                report.add(
                    where,
                    codes.NVC316.code,
                    f"{comparison.written} is in bits per second; compiled as "
                    f"{comparison.op} {units.format_gbs(comparison.value)} GB/s (bytes), "
                    "the unit nccl-tests report",
                    severity=Severity.INFO,
                )


def _check_pools(site: Site, catalog: Catalog, report: _Report) -> None:
    names = [p.name for p in site.spec.node_pools]
    for i, pool in enumerate(site.spec.node_pools):
        at = f"/spec/nodePools/{i}"
        if names.count(pool.name) > 1 and names.index(pool.name) != i:
            report.add(f"{at}/name", codes.NVC305.code, f"node pool '{pool.name}' is defined twice")
        hardware = catalog.find_hardware(pool.model)
        if hardware is None:
            known = sorted(h.model for h in catalog.hardware.values())
            close = difflib.get_close_matches(pool.model, known, n=1, cutoff=0.5)
            hint = f"did you mean '{close[0]}'?" if close else f"known models: {', '.join(known)}"
            model = shown(pool.model, quote="'")  # free text: shown only when known safe
            report.add(f"{at}/model", codes.NVC301.code, f"unknown GPU model {model}", hint)
            continue
        if pool.gpus_per_node and pool.gpus_per_node != hardware.gpus_per_node:
            report.add(
                f"{at}/gpusPerNode",
                codes.NVC315.code,
                f"{pool.gpus_per_node} GPUs per node differs from the catalog's "
                f"{hardware.gpus_per_node} for {hardware.model}",
                "fine for a smaller shape; check `kubectl get node -o yaml` allocatable",
                severity=Severity.WARNING,
            )
        if not hardware.label_certain and pool.product_labels is None:
            report.add(
                f"{at}/model",
                codes.NVC317.code,
                f"the nvidia.com/gpu.product label for {hardware.model} is not confirmed "
                f"(catalog assumes {', '.join(hardware.product_labels)})",
                "check a node (kubectl get node -L nvidia.com/gpu.product); set productLabels",
                severity=Severity.INFO,
            )
        if pool.nodes is None and pool.node_count is None:
            report.add(
                f"{at}/selector",
                codes.NVC311.code,
                "a selector pool needs nodeCount",
                "nodeCount is the number of nodes the selector should match; the budget needs it",
            )
        _check_nics(site, i, report)
        gpus = pool.gpus_per_node or hardware.gpus_per_node
        report.diagnostics += nic_slips(report.doc, i, pool, gpus)
        _check_topology(site, i, hardware.gpus_per_node, report)


def _check_nics(site: Site, index: int, report: _Report) -> None:
    nics = site.spec.node_pools[index].nics
    if nics is None:
        return
    at = f"/spec/nodePools/{index}/nics"
    if nics.hcas and len(nics.hcas) != nics.count:
        report.add(
            f"{at}/hcas",
            codes.NVC312.code,
            f"{len(nics.hcas)} HCAs listed but count is {nics.count}",
            "list one HCA per NIC, as `ibv_devices` shows them",
        )
    if nics.fabric != "tcp" and nics.count and not nics.resource_name:
        report.add(
            f"{at}/count",
            codes.NVC312.code,
            "RDMA NICs without resourceName: NVCRE will request nvidia.com/mlnxnics",
            "set resourceName to the RDMA device plugin's resource, e.g. rdma/hca",
            severity=Severity.WARNING,
        )


def _check_topology(site: Site, index: int, catalog_gpus: int, report: _Report) -> None:
    pool = site.spec.node_pools[index]
    gpus = pool.gpus_per_node or catalog_gpus
    if pool.topology is None or not pool.topology.numa:
        return
    listed = [g for node in pool.topology.numa for g in node]
    if sorted(listed) != list(range(gpus)):
        report.add(
            f"/spec/nodePools/{index}/topology/numa",
            codes.NVC320.code,
            f"NUMA groups list GPUs {sorted(listed)}, expected each of 0..{gpus - 1} once",
            "copy the CPU/NUMA affinity columns of `nvidia-smi topo -m`",
        )


def _check_stages(site: Site, catalog: Catalog, report: _Report) -> None:
    pools = {p.name: p for p in site.spec.node_pools}
    stage_names = [s.name for s in site.spec.readiness.stages]
    for i, stage in enumerate(site.spec.readiness.stages):
        at = f"/spec/readiness/stages/{i}"
        if stage_names.index(stage.name) != i:
            report.add(f"{at}/name", codes.NVC305.code, f"stage '{stage.name}' is defined twice")
        if stage.pool is None and len(pools) > 1:
            report.add(
                at,
                codes.NVC304.code,
                f"stage '{stage.name}' must name its pool",
                f"add pool: one of {', '.join(pools)}",
            )
        pool = pools.get(stage_pool_name(site, stage))
        if pool is None:
            report.add(
                f"{at}/pool",
                codes.NVC304.code,
                f"unknown node pool '{stage.pool}'",
                f"defined pools: {', '.join(pools)}",
            )
            continue
        _check_stage_tests(site, catalog, i, report)
        if stage.scope == "inter-node":
            _check_inter_node(site, i, report)


def _check_stage_tests(site: Site, catalog: Catalog, index: int, report: _Report) -> None:
    stage = site.spec.readiness.stages[index]
    pool = next(p for p in site.spec.node_pools if p.name == stage_pool_name(site, stage))
    for j, name in enumerate(stage.tests):
        at = f"/spec/readiness/stages/{index}/tests/{j}"
        test = catalog.tests.get(name)
        if stage.tests.index(name) != j:
            report.add(
                at, codes.NVC305.code, f"test '{name}' is listed twice in stage '{stage.name}'"
            )
        if test is None:
            close = difflib.get_close_matches(name, sorted(catalog.tests), n=1, cutoff=0.5)
            hint = f"did you mean '{close[0]}'?" if close else "see `catalog/tests/`"
            report.add(at, codes.NVC302.code, f"unknown test '{name}'", hint)
            continue
        if stage.scope not in test.scopes:
            report.add(
                at,
                codes.NVC303.code,
                f"test '{name}' does not run at scope {stage.scope}",
                f"it runs at: {', '.join(test.scopes)}",
            )
        if kind_of(test).needs_hostengine(test) and not site.spec.dependencies.dcgm.hostengine:
            report.add(
                at,
                codes.NVC310.code,
                f"{name} needs a standalone DCGM hostengine",
                "set spec.dependencies.dcgm.hostengine (e.g. nvidia-dcgm.gpu-operator.svc:5555)",
            )
        if (
            test.transport == "fabric"
            and network_for(test, pool, stage.scope) == "socket"
            and stage.scope == "inter-node"
        ):
            report.add(
                at,
                codes.NVC318.code,
                f"{name} will run over TCP: pool '{pool.name}' has no RDMA NICs",
                "declare nics with fabric roce or ib, or use the -tcp test",
                severity=Severity.WARNING,
            )
        hardware = catalog.find_hardware(pool.model)
        gap = None if hardware is None else kind_of(test).model_gap(test, hardware.model)
        if gap is not None:
            report.add(
                at,
                codes.NVC337.code,
                gap,
                "add the model's figures, with their sources, to the test's catalog entry"
                " (catalog/tests/), or run the test on another pool",
            )
        nics = pool.nics
        if test.transport == "rdma" and (nics is None or nics.fabric == "tcp" or not nics.hcas):
            report.add(
                at,
                codes.NVC833.code,
                f"{name} measures each RDMA NIC, but pool '{pool.name}' names none in nics.hcas",
                "declare the pool's nics with fabric roce or ib and their hcas (mlx5_0, ...)",
            )


def _check_inter_node(site: Site, index: int, report: _Report) -> None:
    stage = site.spec.readiness.stages[index]
    pool = next(p for p in site.spec.node_pools if p.name == stage_pool_name(site, stage))
    count = len(pool.nodes) if pool.nodes is not None else pool.node_count
    per_job = stage.nodes_per_job or count or 2
    at = f"/spec/readiness/stages/{index}"
    if per_job < 2:
        report.add(
            f"{at}/nodesPerJob",
            codes.NVC311.code,
            "an inter-node stage needs at least 2 nodes per job",
        )
    elif count is not None and count < per_job:
        report.add(
            f"{at}/nodesPerJob",
            codes.NVC311.code,
            f"{per_job} nodes per job but pool '{pool.name}' has {count} nodes",
        )


def _check_thresholds(site: Site, catalog: Catalog, report: _Report) -> None:
    stages = site.spec.readiness.stages
    planned = {(name, s.scope, stage_pool_name(site, s)): s for s in stages for name in s.tests}
    pools = {p.name: p for p in site.spec.node_pools}
    for i, t in enumerate(site.spec.thresholds):
        at = f"/spec/thresholds/{i}"
        if t.pool is not None and t.pool not in pools:
            continue  # NVC355
        stage = next(
            (s for (n, scope, p), s in planned.items() if (n, scope) == (t.test, t.scope)
             and t.pool in (None, p)),
            None,
        )  # fmt: skip
        test = catalog.tests.get(t.test)
        if stage is None or test is None:
            runs = sorted({f"{n} ({s})" for n, s, _ in planned})
            on_pool = f" on pool {t.pool}" if t.pool else ""
            report.add(
                f"{at}/test",
                codes.NVC306.code,
                f"the plan does not run {t.test} at scope {t.scope}{on_pool}",
                f"planned: {', '.join(runs)}",
            )
            continue
        for field, metric in METRICS.items():
            if getattr(t, field) is not None and test.measurement != metric.measurement:
                report.add(
                    f"{at}/{field}",
                    codes.NVC308.code,
                    f"{t.test} does not measure {field}",
                    f"it measures: {test.measurement}",
                )
        pool = pools.get(stage_pool_name(site, stage))
        if pool is not None and t.transport is not None:
            _check_transport(
                t.transport, network_for(test, pool, t.scope), f"{at}/transport", report
            )


def _check_transport(expected: str, network: str, where: str, report: _Report) -> None:
    if expected == "IB" and network != "rdma":
        report.add(
            where,
            codes.NVC307.code,
            f"threshold expects RDMA (IB) but this test runs over {network}",
            "RDMA needs inter-node scope and a pool with roce or ib NICs",
        )
    if expected == "Socket" and network != "socket":
        report.add(
            where,
            codes.NVC307.code,
            f"threshold expects Socket but this test runs over {network}",
            "use the -tcp variant of the test for a TCP baseline",
        )


def _check_images(site: Site, catalog: Catalog, report: _Report, *, strict: bool) -> None:
    roles = sorted(
        {
            catalog.tests[n].image
            for s in site.spec.readiness.stages
            for n in s.tests
            if n in catalog.tests
        }
    )
    for role in roles:
        image = source_image(site, catalog, role)
        if not is_pinned(image):
            pinned_by_site = getattr(site.spec.images, role) is not None
            where = f"/spec/images/{role}" if pinned_by_site else "/spec/images"
            report.add(
                where,
                codes.NVC314.code,
                f"{role} image {image} is pinned by tag only",
                "append @sha256:<digest> so every node runs the same bytes",
                severity=Severity.ERROR if strict else Severity.WARNING,
            )


def check_plan(plan: Plan) -> list[Diagnostic]:
    """The plan against physics (timeouts, bounds, sizes), then, if that holds, its budget."""
    found = physics_problems(plan)  # durations, bounds, sizes
    if has_errors(found):
        return found
    report = _Report(plan.doc)
    _budget(plan, report)
    return found + report.diagnostics


def _budget(plan: Plan, report: _Report) -> None:
    window = plan.site.spec.readiness.window
    budget = plan.budget
    attempts, retests = 1 + window.retests, window.retests
    stages = tuple(
        f"stage {name}: expected {hours(expected)}, "
        f"worst case {worst_case(hours(worst), hours(worst / attempts), retests)}"
        for name, (expected, worst) in budget.stages().items()
    )
    if budget.gpu_hours > window.gpu_hours + 1e-9:
        largest = ", ".join(f"{c.name} {c.gpu_hours:.1f} GPU-h" for c in budget.largest())
        report.add(
            "/spec/readiness/window/gpuHours",
            codes.NVC313.code,
            f"the plan's worst case needs {budget.worst_gpu_hours} GPU-hours (expected "
            f"{budget.expected_gpu_hours:.1f}), over the budget of {window.gpu_hours:g}",
            f"largest: {largest}; raise gpuHours or cut rounds, tests or retests",
            notes=stages,
        )
    deadline_h = units.parse_duration(window.deadline) / 3_600_000
    if budget.wall_hours > deadline_h + 1e-9:
        longest = budget.largest(by="wall_hours")
        named = ", ".join(f"{c.name} {hours(c.wall_hours)}" for c in longest)
        report.add(
            "/spec/readiness/window/deadline",
            codes.NVC313.code,
            f"the plan's worst case takes {budget.worst_wall} (expected "
            f"{hours(budget.expected_wall_hours)}), past the deadline of {window.deadline}",
            f"longest: {named}; raise maxConcurrentJobs or the deadline, or cut rounds or tests",
            notes=stages,
        )
