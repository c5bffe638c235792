"""Evidence bound to the plan, and numbers the links allow (pure; docs/design/0012-evidence.md).

Binding. A round read from a log names who ran each rank (`# Rank 3 ... on HOST device
3 [0x5b] MODEL`). It is bound to its planned run when

- every host is a node the run is pinned to (its group's nodes; another node of the
  pool is not: its log is another run's evidence), or a pod of that very run
  (`<run>-...`: Kubernetes names a pod's host after the pod, and the run's pods are
  pinned to the planned nodes by its node affinity) (NVC730 otherwise);
- every device is the pool's GPU model: GPU Feature Discovery's product label is the
  driver's device name with blanks made dashes, so `NVIDIA H100 80GB HBM3` is
  `NVIDIA-H100-80GB-HBM3` (`-SHARED` added when time-sliced), compared with the pool's
  product labels (NVC731); a device the driver does not name (`NVIDIA Graphics
  Device`) is not checked (NVC739);
- there are as many ranks, on as many hosts, as the plan runs, each host with its
  GPUs per node (NVC732: 16 ranks on one host are not two nodes of 8).

A round from NVCRE's objects names its group's nodes: a node the pool does not name is
NVC733, fewer nodes than `nodesPerJob` NVC732. A log whose launcher pod the API placed
on a node the plan does not name (`spec.nodeName`, cluster collections) is NVC733 too.
A log without a device list cannot be bound (NVC734). A selector pool names no node:
its rounds are bound by model and count only, and a note says so (NVC739).

Plausibility. Every bus bandwidth is compared with the run's ceiling from the physics
model (`plan.physics.ceiling_busbw`: the lowest line-rate bound over the links every
byte must cross, for the collective, scope and transport, lifted by baselines measured
on the same path, as NVC351 uses it) plus MARGIN: a final round's figure above it is
implausible (NVC735), however it came about (a wrong rank count, an edited log, a clock
that stalled). Provisional rounds count for nothing and are not checked.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from nvcregen.catalog.load import Catalog
from nvcregen.core import codes, units
from nvcregen.plan import bandwidth, evidence, physics
from nvcregen.plan.model import TestUnit
from nvcregen.plan.run import run_of
from nvcregen.results.findings import Finding
from nvcregen.results.models import BandwidthMeasurement, Finality
from nvcregen.results.runs import RunResult
from nvcregen.results.words import Word

MARGIN = 0.05  # timing jitter of nccl-tests: a figure may exceed its ceiling by 5 %
UNNAMED = frozenset({"", "NVIDIA Graphics Device", "Graphics Device"})


def bind(
    run: RunResult, unit: TestUnit, catalog: Catalog, *, by_name: bool = True
) -> list[Finding]:
    """Binding and plausibility findings of every bandwidth round of one run."""
    found: list[Finding] = []
    for m in run.bandwidth:
        if by_name:
            found += _bound(run, unit, m) if m.from_log else _nodes(run, unit, m)
        found += _plausible(run, unit, catalog, m)
    if unit.pool.spec.nodes is None and any(m.from_log and m.ranks for m in run.bandwidth):
        text = (
            f"pool {unit.pool.spec.name} names no node (a selector pool): the rounds are"
            f" bound by GPU model ({_labels(unit)}) and count ({_expected(unit)}) only"
        )
        found.append(_finding(codes.NVC739.code, "bound", Word.PASS, run, None, text))
    return found


def _finding(
    code: str,
    kind: str,
    word: Word,
    run: RunResult,
    m: BandwidthMeasurement | None,
    message: str,
    sizes: Sequence[int] = (),
) -> Finding:
    return Finding.model_validate(
        {
            "code": code,
            "kind": kind,
            "word": word,
            "stage": run.stage,
            "test": run.test,
            "group": m.group if m else "",
            "round": m.iteration if m else None,
            "source": m.ref.name if m else "",
            "sizes": tuple(sizes),
            "message": message,
        }
    )


def _expected(unit: TestUnit) -> str:
    nodes = unit.nodes_per_job
    return f"{nodes} node{'s' if nodes > 1 else ''} x {unit.pool.gpus_per_node} GPUs"


def _labels(unit: TestUnit) -> str:
    return ", ".join(dict.fromkeys((*unit.pool.product_labels, *unit.pool.hardware.product_labels)))


def _bound(run: RunResult, unit: TestUnit, m: BandwidthMeasurement) -> list[Finding]:
    """A log's ranks against the plan: hosts, models, counts."""
    if not m.ranks:
        text = (
            "the log names no rank (no `# Rank N ... on HOST device D` list):"
            " who produced these numbers cannot be checked against the plan"
        )
        return [_finding(codes.NVC734.code, "unbound", Word.INCOMPLETE, run, m, text)]
    found = []
    # a log is evidence for the run whose pinned nodes produced it: its group's nodes
    # (a selector pool pins none), never another node of the pool
    planned = m.nodes
    members = frozenset(planned)  # looked up once a host: a group may hold the whole pool
    elsewhere = [n for n in m.scheduled_on if planned and n not in members]
    if elsewhere:
        text = (
            f"its launcher pod was scheduled on {', '.join(elsewhere)}, which the"
            f" plan does not name (expected {', '.join(planned)})"
        )
        found.append(_finding(codes.NVC733.code, "unbound", Word.FAIL, run, m, text))
    hosts = list(dict.fromkeys(r.host for r in m.ranks))
    by_name = bool(planned) or bool(unit.pool.spec.nodes)  # a selector pool: model and count
    foreign = [h for h in hosts if by_name and not _is_planned(h, members, m.ref.name)]
    if foreign:
        expected = ", ".join(planned) or f"one node group of pool {unit.pool.spec.name}"
        text = (
            f"ranks ran on {', '.join(foreign)}, which the plan does not name for this run"
            f" (expected {expected})"
        )
        found.append(_finding(codes.NVC730.code, "unbound", Word.FAIL, run, m, text))
    labels = {
        label.removesuffix("-SHARED")  # GFD's suffix on a time-sliced GPU's label
        for label in (*unit.pool.product_labels, *unit.pool.hardware.product_labels)
    }
    models = list(dict.fromkeys(r.model for r in m.ranks if r.model not in UNNAMED))
    other = [x for x in models if x.replace(" ", "-") not in labels]
    if other:
        per_host: dict[str, int] = {}
        for r in m.ranks:
            if r.model in other:
                per_host[r.host] = per_host.get(r.host, 0) + 1
        shown = ", ".join(f"{n} on {host}" for host, n in per_host.items())
        found.append(
            _finding(
                codes.NVC731.code, "unbound", Word.FAIL, run, m, _model_text(unit, other, shown)
            )
        )
    if any(r.model in UNNAMED for r in m.ranks):
        text = "the driver does not name the devices: their model is not checked"
        found.append(_finding(codes.NVC739.code, "bound", Word.PASS, run, m, text))
    ranks = unit.nodes_per_job * unit.pool.gpus_per_node
    counted = Counter(r.host for r in m.ranks)
    uneven = any(n != unit.pool.gpus_per_node for n in counted.values())
    if len(m.ranks) != ranks or uneven:  # then the hosts are nodes_per_job too
        fewer = len(m.ranks) < ranks or len(hosts) < unit.nodes_per_job
        shown = f" ({', '.join(f'{n} on {h}' for h, n in counted.items())})" if uneven else ""
        text = (
            f"{len(m.ranks)} ranks on {len(hosts)} host(s){shown}, where the plan runs"
            f" {_expected(unit)} ({ranks} ranks){': fewer' if fewer else ''}"
        )
        found.append(_finding(codes.NVC732.code, "unbound", Word.FAIL, run, m, text))
    return found


def _model_text(unit: TestUnit, seen: Sequence[str], shown: str) -> str:
    """NVC731: the device names seen, the product label each maps to, the pool fields to check.

    GPU Feature Discovery labels a node `nvidia.com/gpu.product` with the driver's device
    name, blanks made dashes: `NVIDIA H20` is `NVIDIA-H20`, which an `H20-3e` pool
    (`NVIDIA-H20-3e`) does not list.
    """
    pool = unit.pool
    at = f"spec.nodePools[{pool.index}]"
    mapped = ", ".join(f"{name} -> {name.replace(' ', '-')}" for name in seen)
    labels = (
        f"{at}.productLabels"
        if pool.spec.product_labels is not None
        else f"the catalog's product labels for {pool.spec.model} ({at}.productLabels unset)"
    )
    return (
        f"devices are {', '.join(seen)} ({shown}), where pool {pool.spec.name} plans"
        f" {pool.spec.model} ({_labels(unit)}); as nvidia.com/gpu.product labels: {mapped}."
        f" Check {at}.model and {labels} against the nodes' nvidia.com/gpu.product"
        " label, or whether the log is of these nodes"
    )


def _is_planned(host: str, pinned: frozenset[str], run_name: str) -> bool:
    """A node the run is pinned to, or a pod of the run itself (named after the run)."""
    short = host.split(".", maxsplit=1)[0]
    return short in pinned or host in pinned or short.startswith(f"{run_name}-")


def _nodes(run: RunResult, unit: TestUnit, m: BandwidthMeasurement) -> list[Finding]:
    """NVCRE's rounds name their group's nodes: each one the pool names, as many as planned."""
    found = []
    if m.nodes and len(m.nodes) < unit.nodes_per_job:
        text = (
            f"measured on {len(m.nodes)} node(s) ({', '.join(m.nodes)}), where"
            f" the plan runs {_expected(unit)}: fewer"
        )
        found.append(_finding(codes.NVC732.code, "unbound", Word.FAIL, run, m, text))
    named = unit.pool.spec.nodes
    members = frozenset(named or ())
    foreign = [n for n in m.nodes if named is not None and n not in members]
    if foreign and named is not None:
        text = (
            f"measured on {', '.join(foreign)}, which pool {unit.pool.spec.name}"
            f" does not name (it names {', '.join(named)})"
        )
        found.append(_finding(codes.NVC733.code, "unbound", Word.FAIL, run, m, text))
    return found


def ceiling_text(unit: TestUnit, catalog: Catalog) -> tuple[float, str] | None:
    """The most busbw a run's links allow (GB/s) with the margin, and how it is derived."""
    run = run_of(unit)
    cut = bandwidth.ceiling(run, catalog.physics)
    top = physics.ceiling_busbw(unit, catalog)
    if cut is None or top is None or run.collective is None:
        return None
    ratio, baseline = evidence.calibration(run, catalog)
    how = f"{run.collective} over {run.ranks} ranks, {cut[0].text}: {cut[1]:.4g} GB/s"
    if baseline is not None:
        how += f", x{ratio:.3g} as baseline {baseline.name} measured"
    how += f", +{MARGIN:.0%} margin"
    return top * (1 + MARGIN), how


def _plausible(
    run: RunResult, unit: TestUnit, catalog: Catalog, m: BandwidthMeasurement
) -> list[Finding]:
    found = ceiling_text(unit, catalog)
    if found is None or m.finality is not Finality.FINAL:
        return []  # a provisional figure counts for nothing, so it cannot mislead
    limit, how = found
    over = [r for r in m.rows if float(r.bus_bw) > limit + 1e-9]
    if not over:
        return []
    top = max(over, key=lambda r: r.bus_bw)
    sizes = ", ".join(units.format_size(r.size_bytes) for r in over[:6])
    text = (
        f"busbw {float(top.bus_bw):g} GB/s at {units.format_size(top.size_bytes)}"
        f" is above the {limit:.4g} GB/s the plan's links allow ({how}); implausible at"
        f" {sizes}{' ...' if len(over) > 6 else ''}"
    )
    return [
        _finding(
            codes.NVC735.code, "implausible", Word.FAIL, run, m, text, [r.size_bytes for r in over]
        )
    ]
