"""Site + catalog -> an ordered list of test units: what runs where, and how (pure)."""

from __future__ import annotations

from nvcregen.catalog.load import Catalog, model_key
from nvcregen.catalog.models import TestEntry
from nvcregen.core import units
from nvcregen.core.metrics import METRICS
from nvcregen.fabric.groups import Grouping, paired, plan_groups
from nvcregen.fabric.inventory import Inventory
from nvcregen.fabric.placement import place
from nvcregen.kindapi.registry import kind_of
from nvcregen.plan import physics
from nvcregen.plan.images import resolve_image
from nvcregen.plan.model import CompiledThreshold, Mode, Network, Pool, TestUnit
from nvcregen.plan.run import run_for
from nvcregen.spec.v1alpha1 import NodePool, Site, Stage, Threshold


def resolve_pools(
    site: Site, catalog: Catalog, inventory: Inventory | None = None
) -> dict[str, Pool]:
    """Attach catalog hardware (and fabric placement) to every pool the catalog knows."""
    pools: dict[str, Pool] = {}
    for index, spec in enumerate(site.spec.node_pools):
        hardware = catalog.find_hardware(spec.model)
        if hardware is None:
            continue
        labels = tuple(spec.product_labels or hardware.product_labels)
        gpus = spec.gpus_per_node or hardware.gpus_per_node
        origin = catalog.origin("hardware", model_key(hardware.model))
        placement = place(spec, inventory)
        pools[spec.name] = Pool(
            spec,
            index,
            hardware,
            gpus,
            labels,
            origin,
            placement,
            inventory,
            (site.spec.inventory or "") if inventory is not None else "",
        )
    return pools


def stage_pool_name(site: Site, stage: Stage) -> str:
    """Return the pool a stage runs on: the one it names, else the site's first pool."""
    return stage.pool or site.spec.node_pools[0].name


def network_for(test: TestEntry, pool: NodePool, scope: str) -> Network:
    """Which network a test's traffic crosses: RDMA NICs, TCP sockets, or none."""
    if test.transport == "socket":
        return "socket"
    if test.transport == "none" or (scope == "intra-node" and test.transport != "rdma"):
        return "none"  # inside a node NCCL uses NVLink; an RDMA rails test still its NICs
    nics = pool.nics
    if nics is None or nics.fabric == "tcp" or nics.count == 0:
        return "socket"
    return "rdma"


def mode_for(
    test: TestEntry, stage: Stage, network: Network, site: Site, *, nvcre_knows_model: bool = True
) -> Mode:
    """NVCRE catalog category when it can express the test, else a WorkloadRun.

    RDMA collectives become WorkloadRuns when the stage pins the transport, and on models
    NVCRE 0.7.0 does not know (`nvcre_knows_model` false: H20, H20-3e, L20): what NVCRE
    makes of `mlnxPerNode` and `nicResourceName` there is not documented, and a
    Certification that requests no NICs runs over TCP without a word. A WorkloadRun names
    the NICs in its own `resources` and pins `NCCL_NET=IB`, so they are certainly used.
    """
    if test.nvcre is None:
        return "workloadrun"
    if (
        kind_of(test).collective
        and network == "rdma"
        and (stage.pin_transport or not nvcre_knows_model)
    ):
        return "workloadrun"
    hostengine = site.spec.dependencies.dcgm.hostengine
    if test.nvcre.hostengine is not None and hostengine not in {None, test.nvcre.hostengine}:
        return "workloadrun"
    return "category"


CLIQUE = "nvidia.com/gpu.clique"  # the NVLink domain label NVCRE's intra-rack groups by


def nvcre_runs_groups(stage: Stage, pool: NodePool) -> bool:
    """Whether NVCRE forms a fabric-aware stage's groups itself (a `testScale` can say it).

    `pool` is `full-scale`, `diagnose` is NVCRE's own, and `accelerator` is `intra-rack`
    when the pool's NVLink label is the one NVCRE groups by (`nvidia.com/gpu.clique`);
    `leaf` and `cross-leaf` never: those are a WorkloadRun per group.
    """
    if stage.groups in {"pool", "diagnose"}:
        return True
    fabric = pool.fabric
    return (
        stage.groups == "accelerator" and fabric is not None and fabric.levels.accelerator == CLIQUE
    )


def nvcre_requests_nics(pool: Pool) -> bool:
    """Whether NVCRE is known to request the pool's RDMA NICs from `mlnxPerNode`.

    Documented for the models in NVCRE 0.7.0's defaults table; for others only when the
    site says it checked (`nics.nvcreNicsChecked`).
    """
    nics = pool.spec.nics
    return pool.hardware.nvcre.known or (nics is not None and nics.nvcre_nics_checked)


def thresholds_for(
    site: Site, test: str, scope: str, pool: str | None = None
) -> list[tuple[int, Threshold]]:
    """Return the site's thresholds (with their index) for one test at one scope.

    With `pool`, thresholds that name another pool are left out.
    """
    return [
        (i, t)
        for i, t in enumerate(site.spec.thresholds)
        if t.test == test and t.scope == scope and (pool is None or t.pool in (None, pool))
    ]


def compile_thresholds(
    site: Site, test: str, scope: str, pool: str | None = None
) -> tuple[CompiledThreshold, ...]:
    """Compile typed thresholds into NVCRE's `key -> CEL over value` expressions.

    NVCRE compares the maximum over all message sizes; the per-size check of a
    threshold with `at:` happens when results are collected.
    """
    compiled: list[CompiledThreshold] = []
    for index, threshold in thresholds_for(site, test, scope, pool):
        for field, metric in METRICS.items():
            text = getattr(threshold, field)
            if text is None:
                continue
            comparison = units.parse_comparison(text, unit_kind=metric.unit_kind)
            derivation = _derivation(field, threshold, comparison)
            compiled.append(
                CompiledThreshold(metric.nvcre_key, comparison.cel(), derivation, index)
            )
    return tuple(compiled)


def _derivation(field: str, threshold: Threshold, comparison: units.Comparison) -> str:
    unit = f" ({comparison.unit})" if comparison.unit else ""
    text = f"{field} {comparison.written} -> {comparison.cel()}{unit}"
    if threshold.at is not None:
        text += f"; written for {threshold.at}, NVCRE checks the maximum over message sizes"
    return text


def plan(site: Site, catalog: Catalog, inventory: Inventory | None = None) -> list[TestUnit]:
    """Resolve every stage's tests, in the order the site lists them.

    With the site's inventory, pools with a fabric are placed, and stages that name
    `groups` get their fabric-aware groups.
    """
    pools = resolve_pools(site, catalog, inventory)
    return [
        _unit(site, catalog, stage, index, pools[stage_pool_name(site, stage)], catalog.tests[name])
        for index, stage in enumerate(site.spec.readiness.stages)
        for name in stage.tests
    ]


def _unit(
    site: Site, catalog: Catalog, stage: Stage, stage_index: int, pool: Pool, test: TestEntry
) -> TestUnit:
    network = network_for(test, pool.spec, stage.scope)
    kind = kind_of(test)
    alone = stage.scope == "intra-node" or kind.one_node
    grouping = None if alone else stage_grouping(stage, pool)
    nodes_per_job = 1 if alone else (stage.nodes_per_job or pool.node_count or 2)
    if kind.pair and not alone:  # a server and its client: the stage's groups in pairs
        grouping = paired(grouping) if grouping is not None else None
        nodes_per_job = 2
    elif grouping is not None and grouping.largest > 1:
        nodes_per_job = grouping.largest
    elif (
        not alone and stage.groups == "diagnose" and stage.nodes_per_job is None and pool.node_count
    ):
        nodes_per_job = diagnose_group(
            pool.node_count, site.spec.readiness.window.max_concurrent_jobs
        )
    run = run_for(
        test, pool.hardware, pool.spec, pool.gpus_per_node, stage.scope, network, nodes_per_job
    )
    expected_ms = physics.expected_ms(run, catalog)
    factor = site.spec.readiness.window.timeout_factor
    mode = mode_for(test, stage, network, site, nvcre_knows_model=nvcre_requests_nics(pool))
    if grouping is not None and not nvcre_runs_groups(stage, pool.spec):
        mode = "workloadrun"  # NVCRE cannot form these groups: a WorkloadRun per group
    return TestUnit(
        stage=stage,
        stage_index=stage_index,
        test=test,
        pool=pool,
        mode=mode,
        network=network,
        nodes_per_job=nodes_per_job,
        timeout_ms=(
            units.parse_duration(stage.timeout_per_job)
            if stage.timeout_per_job
            else physics.timeout_ms(expected_ms, factor)
        ),
        expected_ms=expected_ms,
        image=resolve_image(site, catalog, test.image),
        thresholds=compile_thresholds(site, test.name, stage.scope, pool.spec.name),
        test_file=catalog.origin("tests", test.name),
        pod=catalog.pods.named(kind_of(test).pod_size),
        grouping=grouping,
    )


def diagnose_group(nodes: int, at_once: int) -> int:
    """NVCRE diagnose's screening group: the pool split over the jobs the window runs at once.

    Every node is screened in the first wave; bisection then goes down to `minGroupSize`.
    """
    return max(2, -(-nodes // max(1, at_once)))


def stage_grouping(stage: Stage, pool: Pool) -> Grouping | None:
    """A stage's fabric-aware groups; None without `groups`, a placed pool, or at `diagnose`.

    `diagnose` hands grouping to NVCRE, which splits the pool itself.
    """
    if stage.groups in {None, "diagnose"} or stage.scope != "inter-node" or pool.placement is None:
        return None
    assert stage.groups is not None
    return plan_groups(stage.groups, pool.placement)
