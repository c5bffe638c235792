"""nccl-tests' records: a run, its rows, its ranks, the medians over rounds (frozen, JSON).

Field names follow the `nvcregen ingest --format json` contract of issue #5: sizes in
bytes, times in microseconds, bandwidths in GB/s as nccl-tests prints them, and `None`
(JSON null) wherever the log prints `N/A` or says nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from nvcregen.core import codes
from nvcregen.ingest.models import Json, RunStatus


@dataclass(frozen=True)
class Measurement:
    """One half of an nccl-tests row: out-of-place or in-place.

    Attributes:
        time_us: Time per iteration in microseconds.
        algbw_gbs: Algorithm bandwidth, GB/s.
        busbw_gbs: Bus bandwidth, GB/s (the figure comparable across collectives).
        wrong: The `#wrong` count (or the old `error` value); None where it says N/A.

    """

    time_us: float | None
    algbw_gbs: float | None
    busbw_gbs: float | None
    wrong: int | float | None

    def to_json(self) -> Json:
        """The JSON object of this measurement."""
        return {
            "time_us": self.time_us,
            "algbw_gbs": self.algbw_gbs,
            "busbw_gbs": self.busbw_gbs,
            "wrong": self.wrong,
        }


@dataclass(frozen=True)
class NcclRow:
    """One result row of an nccl-tests table (one message size)."""

    size_bytes: int
    count: int
    type: str
    redop: str | None
    out_of_place: Measurement
    in_place: Measurement

    def to_json(self) -> Json:
        """The JSON object of this row."""
        return {
            "size_bytes": self.size_bytes,
            "count": self.count,
            "type": self.type,
            "redop": self.redop,
            "out_of_place": self.out_of_place.to_json(),
            "in_place": self.in_place.to_json(),
        }


@dataclass(frozen=True)
class Rank:
    """One line of the device list: who produced a rank's numbers.

    `# Rank 3 Group 0 Pid 1277 on node-a device 3 [0x5b] NVIDIA H20-3e`: the host the
    process ran on (a node's name, or a pod's under Kubernetes), the CUDA device index
    and the device name the driver reports (GPU Feature Discovery derives the node label
    `nvidia.com/gpu.product` from it, spaces made dashes). `device` is None and `model`
    "" where an old or cut line does not print them.
    """

    rank: int
    host: str
    device: int | None = None
    model: str = ""

    def to_json(self) -> Json:
        """The JSON object of this rank."""
        return {"rank": self.rank, "host": self.host, "device": self.device, "model": self.model}


@dataclass(frozen=True)
class PluginFailure:
    """A network plugin NCCL could not bring up on a host (`Failed to initialize NET plugin`).

    `host` is the name NCCL prints before the line (`node-a:1274:1290 [0] NCCL INFO ...`),
    "" where the line has none.
    """

    host: str
    plugin: str

    def to_json(self) -> Json:
        """The JSON object of this failure."""
        return {"host": self.host, "plugin": self.plugin}

    @property
    def message(self) -> str:
        """The finding about the host, as the run's warnings carry it."""
        where = self.host or "a host the log does not name"
        return (
            f"{codes.NVC824.code}: {where}: NCCL's {self.plugin} network plugin failed to "
            "initialize (check the node's RDMA devices and drivers if the run needed them)"
        )


@dataclass(frozen=True)
class NcclRun:
    """One nccl-tests run read from a log.

    Attributes:
        file: The log it came from, as named on the command line.
        collective: `all_reduce`, `all_gather`, `alltoall`, ... or `unknown`.
        status: ok, failed or truncated.
        errors: Why the run failed or is truncated, in the log's words where it has them.
        transports: Sorted network names from NCCL_DEBUG lines (`IB`, `Socket`, ...);
            empty when the log shows none (NVLink/SHM only, or no NCCL_DEBUG).
        avg_busbw_gbs: The `Avg bus bandwidth` summary, None when the log has none.
        rows: The result rows in log order.
        gdrdma: Whether a `via NET/.../GDRDMA` line shows GPUDirect RDMA in use.
        nccl_versions: Distinct `NCCL version` strings the log prints, in order seen.
        warnings: Doubts that do not change the status (an edited summary line, a
            network plugin that failed on a host: NVC824).
        hosts: The hosts of the device list (`# Rank 0 ... on node-a device 0`), in
            order seen; empty when the log has no device list.
        ranks: Every line of the device list, in order seen.
        cuda_driver: The CUDA driver versions NCCL_DEBUG lines name (`cudaDriverVersion
            12040` is `12.4`), in order seen.
        networks: Sorted networks NCCL selected (`IB`, `Socket`, `AWS Libfabric`), also
            when `transports` is empty because every communicator was single-node.
        plugin_failures: Network plugins that failed to initialize, per host.

    """

    file: str
    collective: str
    status: RunStatus
    errors: tuple[str, ...]
    transports: tuple[str, ...]
    avg_busbw_gbs: float | None
    rows: tuple[NcclRow, ...]
    gdrdma: bool = False
    nccl_versions: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    hosts: tuple[str, ...] = ()
    ranks: tuple[Rank, ...] = ()
    cuda_driver: tuple[str, ...] = ()
    networks: tuple[str, ...] = ()
    plugin_failures: tuple[PluginFailure, ...] = ()

    def to_json(self) -> Json:
        """The JSON object of this run, exactly the fields of the ingest contract."""
        return {
            "file": self.file,
            "collective": self.collective,
            "status": self.status,
            "errors": list(self.errors),
            "warnings": list(self.warnings),
            "transports": list(self.transports),
            "networks": list(self.networks),
            "plugin_failures": [failure.to_json() for failure in self.plugin_failures],
            "hosts": list(self.hosts),
            "ranks": [rank.to_json() for rank in self.ranks],
            "nccl_versions": list(self.nccl_versions),
            "cuda_driver": list(self.cuda_driver),
            "avg_busbw_gbs": self.avg_busbw_gbs,
            "rows": [row.to_json() for row in self.rows],
        }


@dataclass(frozen=True)
class SummaryRow:
    """Medians over rounds (runs) of like runs at one message size.

    Runs are like when they measured the same collective, data type and operation, on
    the same node set, over the same transports: nothing else is pooled. Each median is
    taken over that figure's own per-round values; no bandwidth is ever derived from
    other medians. `spread` is (max - min) / median of the bus bandwidths, None when the
    median is zero.

    Attributes:
        nodes: The hosts of the runs' device lists, sorted; empty when not printed.
        scope: `1 node`, `2 nodes`, ... from `nodes`, or `unknown`.
        transports: The transports the runs used (empty: not shown in the logs).

    """

    collective: str
    size_bytes: int
    rounds: int
    median_busbw_gbs: float | None
    median_algbw_gbs: float | None
    median_time_us: float | None
    spread: float | None
    type: str = ""
    redop: str | None = None
    nodes: tuple[str, ...] = ()
    transports: tuple[str, ...] = ()

    @property
    def scope(self) -> str:
        """How many nodes ran the rounds, in words."""
        if not self.nodes:
            return "unknown"
        return f"{len(self.nodes)} node" + ("s" if len(self.nodes) > 1 else "")

    def to_json(self) -> Json:
        """The JSON object of this summary item."""
        return {
            "collective": self.collective,
            "type": self.type,
            "redop": self.redop,
            "scope": self.scope,
            "nodes": list(self.nodes),
            "transports": list(self.transports),
            "size_bytes": self.size_bytes,
            "rounds": self.rounds,
            "median_busbw_gbs": self.median_busbw_gbs,
            "median_algbw_gbs": self.median_algbw_gbs,
            "median_time_us": self.median_time_us,
            "spread": self.spread,
        }
