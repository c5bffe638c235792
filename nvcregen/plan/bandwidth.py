"""The links a collective's bytes must cross, and the bus bandwidth each allows (pure).

A *cut* is a set of links every byte of a collective crosses: each GPU's own link
(NVLink, or PCIe on cards without it) and, across nodes, each node's NICs. How many bytes
a collective must push through a cut is fixed by what it computes, whatever algorithm
NCCL picks, so each cut bounds the time, hence the algorithm bandwidth `S / t`, hence the
bus bandwidth nccl-tests prints (`algbw x factor`). With n ranks, g per node, m nodes and
line rate R per direction (docs/design/0005-physics.md derives each):

- GPU link, all-reduce: each GPU sends and receives >= 2(n-1)/n S without in-switch
  reduction (busbw <= R), >= S with it (NVLS on NVSwitch; busbw <= 2(n-1)/n R).
- GPU link, all-gather and all-to-all: each GPU receives (n-1)/n S: busbw <= R.
- Node NICs, all-reduce: each node sends >= 2(m-1)/m S (>= S when an InfiniBand fabric
  reduces in the switches, SHARP): busbw <= 2(n-1)/n R m / (2(m-1)), or 2(n-1)/n R.
- Node NICs, all-gather: each node receives (n-g)/n S: busbw <= R (n-1) / (n-g).
- Node NICs, all-to-all: each node sends g(n-g)/n S: busbw <= R (n-1) / (g (n-g)).

`ceiling` allows every reduction in-switch the hardware could do (a sound bound);
`typical` assumes NCCL's default algorithms (NVLS inside a node where there is NVSwitch,
no SHARP across nodes), which expected figures and durations start from.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from nvcregen.catalog.physics_data import Collective, PathKind, PhysicsData
from nvcregen.core import units
from nvcregen.plan.run import Run


@dataclass(frozen=True)
class Cut:
    """One set of links every byte crosses, and the bus bandwidth it allows (GB/s).

    Attributes:
        path: The kind of link, which sets the expected efficiency and latency.
        rate: Line rate per direction of one member (a GPU's link or a node's NICs).
        ceiling: The bus bandwidth no algorithm can exceed through this cut.
        typical: The bus bandwidth NCCL's default algorithms reach at line rate.
        text: The links in words, for messages.

    """

    path: PathKind
    rate: float
    ceiling: float
    typical: float
    text: str


def bus_factor(collective: Collective, ranks: int) -> float:
    """nccl-tests' busbw / algbw: 2(n-1)/n for all-reduce, (n-1)/n for the others."""
    share = (ranks - 1) / ranks
    return 2 * share if collective == "all_reduce" else share


def pcie_rate(data: PhysicsData, gen: int | None) -> float:
    """Per-direction GB/s of an x16 link of `gen` (gen 4 when the catalog does not say)."""
    wanted = gen or 4
    rates = {r.gen: r.rate for r in data.pcie_x16}
    return units.parse_bandwidth(rates.get(wanted, rates[max(rates)])).gbytes_per_s


def gpu_link(run: Run, data: PhysicsData) -> tuple[PathKind, float, str]:
    """A GPU's own link: its kind, per-direction rate (GB/s) and description."""
    hardware = run.hardware
    if hardware.nvlink_bandwidth:
        rate = units.parse_bandwidth(hardware.nvlink_bandwidth).gbytes_per_s / 2
        sharp = hardware.nvlink_sharp and run.collective == "all_reduce"
        kind: PathKind = "nvls" if sharp else "nvlink"
        what = "NVLink with in-switch reduction (NVLS)" if sharp else "NVLink"
        return kind, rate, f"{what} {_gbs(rate)} GB/s per GPU and direction"
    rate = pcie_rate(data, hardware.pcie_gen)
    gen = hardware.pcie_gen or 4
    return "pcie", rate, f"PCIe gen {gen} x16 {_gbs(rate)} GB/s per GPU and direction"


def cuts(run: Run, data: PhysicsData) -> tuple[Cut, ...]:
    """Every cut of a run: the GPU link, and the node's network across nodes."""
    collective = run.collective
    if collective is None:
        return ()
    found = [_gpu_cut(run, collective, data)]
    if run.scope == "inter-node" and run.nodes > 1:
        found.append(_network_cut(run, collective, data))
    return tuple(found)


def _gpu_cut(run: Run, collective: Collective, data: PhysicsData) -> Cut:
    kind, rate, text = gpu_link(run, data)
    factor = bus_factor(collective, run.ranks)
    if run.ranks < 2:
        return Cut(kind, rate, 0.0, 0.0, text + " (one rank: nccl-tests prints busbw 0)")
    if collective != "all_reduce":
        return Cut(kind, rate, rate, rate, text)
    in_switch = kind == "nvls"
    sharp = run.network == "rdma" and run.fabric == "ib"
    typical = factor * rate if in_switch else rate
    ceiling = factor * rate if in_switch or sharp else rate
    return Cut(kind, rate, ceiling, typical, text)


def network_rates(run: Run, data: PhysicsData) -> tuple[PathKind, float, float, str]:
    """A node's network: kind, nominal and ceiling rate per direction (GB/s), words.

    RDMA runs use the NICs. Sockets use the NICs of a TCP pool; on an RDMA pool they use
    the pod's interface, assumed `socketInterface` fast, though at most (for the ceiling)
    they could use every NIC.
    """
    nics = run.nic_total_gbs
    if run.network == "rdma":
        return "rdma", nics, nics, f"{run.nics_text} per node"
    if run.fabric == "tcp" and nics > 0:
        return "socket", nics, nics, f"TCP over {run.nics_text} per node"
    assumed = units.parse_bandwidth(data.socket_interface).gbytes_per_s
    text = f"TCP over the pod interface (assumed {data.socket_interface}) per node"
    return "socket", assumed, max(assumed, nics), text


def _network_cut(run: Run, collective: Collective, data: PhysicsData) -> Cut:
    path, nominal, widest, text = network_rates(run, data)
    n, g, m = run.ranks, run.gpus_per_node, run.nodes
    if collective == "all_reduce":
        spread = m / (2 * (m - 1))
        factor = bus_factor(collective, n)
        in_network = path == "rdma" and run.fabric == "ib"  # SHARP: over RDMA on InfiniBand
        typical = factor * nominal * spread
        ceiling = factor * widest * (1.0 if in_network else spread)
    else:
        share = (n - 1) / (n - g) if collective == "all_gather" else (n - 1) / (g * (n - g))
        typical, ceiling = nominal * share, widest * share
    domain = run.hardware.nvlink_domain_gpus
    if domain is not None and n <= domain:
        ceiling = math.inf  # NVLink spans these nodes (MNNVL): the NICs need not carry it
    return Cut(path, nominal, ceiling, typical, text)


def binding(run: Run, data: PhysicsData) -> tuple[Cut, float] | None:
    """The cut that limits the expected bus bandwidth, and that figure (GB/s)."""
    collective = run.collective
    if collective is None:
        return None
    scored = [(c, c.typical * data.efficiency.of(c.path).of(collective)) for c in cuts(run, data)]
    return min(scored, key=lambda pair: pair[1])


def ceiling(run: Run, data: PhysicsData) -> tuple[Cut, float] | None:
    """The cut with the lowest ceiling, and that ceiling (GB/s)."""
    found = cuts(run, data)
    if not found:
        return None
    cut = min(found, key=lambda c: c.ceiling)
    return cut, cut.ceiling


def _gbs(value: float) -> str:
    """A rate for messages: 450 -> "450", 31.5 -> "31.5"."""
    return f"{value:.4g}" if value < 1000 else f"{value:.0f}"
