"""The nccl kind's launch: NCCL's environment and nccl-tests under mpirun (pure).

What `compile/readiness/launch.py` asks of a collective kind (`LAUNCH`): the variables
pinning the transport a test measures, NVCRE's `framework.mpi` block and trainer mode's
`mpirun` line, both giving every rank those variables.
"""

from __future__ import annotations

from nvcregen.core import units
from nvcregen.core.manifest import Obj
from nvcregen.kinds.nccl.kind import KIND
from nvcregen.kinds.nccl.params import NcclParams
from nvcregen.plan.model import TestUnit

MPIRUN = "/usr/local/mpi/bin/mpirun"
TRANSPORTS = {"IB": "IB", "Socket": "Socket"}  # NCCL_NET's values, as the transport gate names them


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


def _block(unit: TestUnit) -> NcclParams:
    """The test's `nccl` block."""
    return KIND.block(unit.test)


def nccl_args(unit: TestUnit) -> list[str]:
    """nccl-tests arguments: message-size sweep, iterations and cycles from the catalog."""
    nccl = _block(unit)
    return [
        "-b", units.nccl_size_arg(units.parse_size(nccl.min_bytes)),
        "-e", units.nccl_size_arg(units.parse_size(nccl.max_bytes)),
        "-f", str(nccl.step_factor),
        "-n", str(nccl.iterations),
        "-N", str(nccl.cycles),
    ]  # fmt: skip


def mpi_framework(unit: TestUnit, env: dict[str, str]) -> Obj:
    """The WorkloadRun `framework.mpi` block; every NCCL variable reaches every rank via -x."""
    mpi_args = [arg for name, value in env.items() for arg in ("-x", f"{name}={value}")]
    return {
        "binary": _block(unit).binary,
        "mpirunPath": MPIRUN,
        "mpiImplementation": "OpenMPI",
        "args": nccl_args(unit),
        "mpiArgs": mpi_args,
    }


def mpirun_args(unit: TestUnit, env: dict[str, str], *, local: bool = False) -> list[str]:
    """The `mpirun` and nccl-tests arguments; `-x` gives every rank the NCCL variables.

    Ranks on the workers are started through ssh and inherit none of the container's
    environment: `-x NAME=value` sets each variable, `-x NAME` forwards the launcher's.
    `local`: one node's ranks, which mpirun starts itself (`--host localhost:GPUS`: no
    hostfile and no ssh).
    """
    gpus = unit.pool.gpus_per_node
    exported = [arg for k, v in env.items() for arg in ("-x", f"{k}={v}")]
    here = ["--host", f"localhost:{gpus}"] if local else []
    return [
        MPIRUN, "--allow-run-as-root", *here,
        "-np", str(unit.nodes_per_job * gpus),
        "--map-by", f"ppr:{gpus}:node", "--bind-to", "none",
        "-x", "PATH", "-x", "LD_LIBRARY_PATH", *exported,
        _block(unit).binary, *nccl_args(unit),
    ]  # fmt: skip


class NcclLaunch:
    """The nccl kind's `Launch` (`compile/readiness/launch.py`)."""

    transport_variable = "NCCL_NET"

    def transport(self, value: str) -> str | None:
        """NCCL_NET's `IB` or `Socket`; None for any other value."""
        return TRANSPORTS.get(value)

    def env(self, unit: TestUnit) -> dict[str, str]:
        """NCCL's variables (`nccl_env`)."""
        return nccl_env(unit)

    def framework(self, unit: TestUnit, env: dict[str, str]) -> Obj:
        """NVCRE's MPI block (`mpi_framework`)."""
        return mpi_framework(unit, env)

    def command(self, unit: TestUnit, env: dict[str, str], *, local: bool = False) -> list[str]:
        """The mpirun line running nccl-tests (`mpirun_args`)."""
        return mpirun_args(unit, env, local=local)


LAUNCH = NcclLaunch()  # what `compile/readiness/launch.py` finds by the kind's name
