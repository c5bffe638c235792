"""The nccl kind's launch (`kinds/nccl/launch.py`), found by compile through `launch_of`."""

from __future__ import annotations

import pytest
from sitefactory import units_of

from nvcregen.compile.readiness.launch import launch_of
from nvcregen.kindapi.registry import kind_of
from nvcregen.kinds.nccl import launch
from nvcregen.plan.model import TestUnit


def collective() -> TestUnit:
    return next(u for u in units_of() if kind_of(u.test).collective and u.network == "rdma")


def test_compile_finds_the_nccl_launch_in_its_package() -> None:
    unit = collective()
    assert launch_of(unit) is launch.LAUNCH
    env = launch.LAUNCH.env(unit)
    assert env["NCCL_NET"] == "IB" and env == launch.nccl_env(unit)
    command = launch.LAUNCH.command(unit, env)
    assert command[:2] == [launch.MPIRUN, "--allow-run-as-root"]
    assert "NCCL_NET=IB" in command and command[-10:] == launch.nccl_args(unit)
    assert "--host" not in command
    here = launch.LAUNCH.command(unit, env, local=True)  # a node pack: no hostfile, no ssh
    gpus = f"localhost:{unit.pool.gpus_per_node}"
    assert here == [*command[:2], "--host", gpus, *command[2:]]
    framework = launch.LAUNCH.framework(unit, env)
    assert framework["mpirunPath"] == launch.MPIRUN and "NCCL_NET=IB" in framework["mpiArgs"]


def test_the_transport_a_run_pins_is_nccl_nets() -> None:
    found = launch.LAUNCH
    assert found.transport_variable == "NCCL_NET"
    assert (found.transport("IB"), found.transport("Socket")) == ("IB", "Socket")
    assert found.transport("ib") is None and found.transport("") is None


def test_a_kind_without_a_launch_is_named_not_guessed() -> None:
    unit = next(u for u in units_of() if not kind_of(u.test).collective)
    with pytest.raises(ValueError, match=rf"the {kind_of(unit.test).name} kind of test "):
        launch_of(unit)
