"""NCCL environment and nccl-tests command lines for WorkloadRuns (pure)."""

from __future__ import annotations

from nvcregen.core import units
from nvcregen.core.manifest import Obj
from nvcregen.kinds.nccl.kind import KIND as NCCL
from nvcregen.plan.model import TestUnit

MPIRUN = "/usr/local/mpi/bin/mpirun"


def nccl_env(unit: TestUnit) -> dict[str, str]:
    """NCCL variables that pin the transport a test is meant to measure.

    Socket tests forbid RDMA outright; RDMA tests demand the IB transport (also used
    for RoCE), so a missing RDMA path fails the job instead of silently falling back
    to TCP. NCCL_DEBUG makes the chosen transport visible in the log for collect.
    """
    env = {"NCCL_DEBUG": "INFO", "NCCL_DEBUG_SUBSYS": "INIT,NET"}
    nics = unit.pool.spec.nics
    if unit.network == "socket":
        env |= {"NCCL_NET": "Socket", "NCCL_IB_DISABLE": "1"}
    elif unit.network == "rdma" and nics is not None:
        env["NCCL_NET"] = "IB"
        if nics.hcas:
            # A leading '=' makes NCCL match names exactly (mlx5_1 must not match mlx5_10).
            env["NCCL_IB_HCA"] = "=" + ",".join(nics.hcas)
        if nics.gid_index is not None:
            env["NCCL_IB_GID_INDEX"] = str(nics.gid_index)
    if unit.network != "none" and nics is not None and nics.socket_interface:
        env["NCCL_SOCKET_IFNAME"] = nics.socket_interface
    return env


def nccl_args(unit: TestUnit) -> list[str]:
    """nccl-tests arguments: message-size sweep, iterations and cycles from the catalog."""
    nccl = NCCL.block_or_none(unit.test)
    assert nccl is not None
    return [
        "-b", units.nccl_size_arg(units.parse_size(nccl.min_bytes)),
        "-e", units.nccl_size_arg(units.parse_size(nccl.max_bytes)),
        "-f", str(nccl.step_factor),
        "-n", str(nccl.iterations),
        "-N", str(nccl.cycles),
    ]  # fmt: skip


def mpi_framework(unit: TestUnit, env: dict[str, str]) -> Obj:
    """The WorkloadRun `framework.mpi` block; every NCCL variable reaches every rank via -x."""
    nccl = NCCL.block_or_none(unit.test)
    assert nccl is not None
    mpi_args = [arg for name, value in env.items() for arg in ("-x", f"{name}={value}")]
    return {
        "binary": nccl.binary,
        "mpirunPath": MPIRUN,
        "mpiImplementation": "OpenMPI",
        "args": nccl_args(unit),
        "mpiArgs": mpi_args,
    }
