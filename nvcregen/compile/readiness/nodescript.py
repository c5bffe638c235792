"""The script, container and environment of a per-node test, shared by both engines (pure).

The kind (`nvcregen/kinds/`) says which template its run renders and with what; this
module renders it against the unit and the site, with the outer deadline of every run
(`kindapi.protocol.outer_deadline_s`: kinds check their own steps fit inside it).
"""

from __future__ import annotations

from nvcregen.compile.templating import render_packaged
from nvcregen.core import units
from nvcregen.core.manifest import Obj
from nvcregen.kindapi.protocol import NodeRun, outer_deadline_s
from nvcregen.kindapi.registry import kind_of
from nvcregen.plan.model import TestUnit
from nvcregen.spec.v1alpha1 import Site

__all__ = ["node_container", "node_env", "node_run", "node_script", "outer_deadline_s"]


def node_run(site: Site, unit: TestUnit) -> NodeRun:
    """What a kind's script of one run is told: GPUs, deadlines, the pool's HCAs and rate."""
    nics = unit.pool.spec.nics
    return NodeRun(
        gpus=unit.pool.gpus_per_node,
        timeout_ms=unit.timeout_ms,
        outer_deadline_s=outer_deadline_s(unit.timeout_ms),
        hostengine=site.spec.dependencies.dcgm.hostengine,
        hcas=tuple(nics.hcas) if nics else (),
        nic_gbps=units.parse_bandwidth(nics.speed).gbytes_per_s * 8 if nics else 0.0,
        model=unit.pool.hardware.model,
    )


def node_script(site: Site, unit: TestUnit) -> str:
    """The script one run of a per-node test runs on its node.

    Raises:
        ValueError: The test's kind does not run per node (the plan never asks it to).

    """
    found = kind_of(unit.test).node_script(unit.test, node_run(site, unit))
    if found is None:
        raise ValueError(f"test {unit.test.name} has no script to run on a node")
    return render_packaged(found.package, found.template, **found.values)


def node_env(unit: TestUnit) -> list[Obj]:
    """The environment a per-node test's script reads."""
    return kind_of(unit.test).node_env()


def node_container(site: Site, unit: TestUnit) -> Obj:
    """The container of a per-node test's Job: its kind's name, the script, its env.

    Raises:
        ValueError: The test's kind does not run per node.

    """
    name = kind_of(unit.test).node_container
    if name is None:
        raise ValueError(f"test {unit.test.name} has no container to run on a node")
    return {
        "name": name,
        "image": unit.image,
        "command": ["/bin/bash", "-c", node_script(site, unit)],
        "env": node_env(unit),
    }
