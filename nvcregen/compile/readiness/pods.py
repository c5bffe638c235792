"""What every readiness pod nvcregen writes carries besides its command (pure).

- cpu and memory requests and limits from `catalog/pods.yaml`, by the kind of test, so no
  pod is BestEffort (evicted first, counted as nothing by Kueue), with the GPUs and RDMA
  NICs it holds added to its limits;
- the tolerations of its pool's taints (`nodePools[].tolerations`): trainer mode puts them
  on every pod template, NVCRE mode names the taints as `target.taintSelectors`, for which
  NVCRE adds the matching tolerations itself.
"""

from __future__ import annotations

from collections.abc import Mapping

from nvcregen.compile.readiness.mpi import GPU
from nvcregen.core import codes
from nvcregen.core.errors import Diagnostic, Severity
from nvcregen.core.manifest import Obj
from nvcregen.engineapi.registry import readiness_of
from nvcregen.plan.model import Pool, TestUnit
from nvcregen.spec.positions import Document
from nvcregen.spec.v1alpha1 import Site


def pod_resources(unit: TestUnit, devices: Mapping[str, int]) -> Obj:
    """A container's `resources`: the test kind's cpu and memory, and `devices` as limits.

    Extended resources (GPUs, RDMA NICs) are limits only: their requests follow them.
    """
    requests: dict[str, str] = {}
    limits: dict[str, str | int] = dict(devices)
    if unit.pod is not None:
        requests |= unit.pod.requests.as_resources()
        limits |= unit.pod.limits.as_resources()
    resources: Obj = {"limits": limits}
    if requests:
        resources = {"requests": requests, **resources}
    return resources


def devices(unit: TestUnit) -> dict[str, int]:
    """The GPUs and RDMA NICs a run's pods hold: every GPU of a node, the unit's NICs.

    A WorkloadRun names them in its own `resources`: NVCRE derives them from `gpusPerNode`,
    `mlnxPerNode` and `nicResourceName` too, but what it does with the NIC fields on a
    model it does not know is not documented; resources named there are requested whatever
    NVCRE derives. A per-node Job of trainer mode holds the same.
    """
    found = {GPU: unit.pool.gpus_per_node}
    if unit.nic_resource is not None:
        name, count = unit.nic_resource
        found[name] = count
    return found


def tolerations(pool: Pool) -> list[Obj]:
    """The pool's tolerations as pod-template `tolerations`."""
    return [t.as_toleration() for t in pool.spec.tolerations]


def taint_selectors(pool: Pool) -> list[Obj]:
    """NVCRE's `target.taintSelectors` for the pool's keyed tolerations.

    NVCRE selects nodes carrying every listed taint and gives the pods the matching
    tolerations; a toleration without a key (tolerate everything) has no selector form.
    """
    found: list[Obj] = []
    for toleration in pool.spec.tolerations:
        if toleration.key is None:
            continue
        selector: Obj = {"key": toleration.key}
        if toleration.value is not None:
            selector["value"] = toleration.value
        if toleration.effect is not None:
            selector["effect"] = toleration.effect
        found.append(selector)
    return found


def check_tolerations(site: Site, doc: Document) -> list[Diagnostic]:
    """NVC374: NVCRE mode loses a pool's toleration without a key beside keyed ones.

    NVCRE gives its pods a blanket `Exists` toleration unless the target names taints;
    with `taintSelectors` the pods tolerate those taints alone, and a toleration without a
    key (tolerate everything) has no selector form, so it is lost.
    """
    if not readiness_of(site).taint_selectors:
        return []
    found = []
    for index, pool in enumerate(site.spec.node_pools):
        keyless = [i for i, t in enumerate(pool.tolerations) if t.key is None]
        if not keyless or len(keyless) == len(pool.tolerations):
            continue
        where = f"/spec/nodePools/{index}/tolerations/{keyless[0]}"
        message = (
            f"pool {pool.name}: a toleration without a key has no NVCRE taintSelectors form, "
            "and the keyed ones replace NVCRE's blanket toleration, so NVCRE's pods will not "
            "tolerate every taint"
        )
        hint = (
            "name each taint the pool's nodes carry (key, effect), or leave only the "
            "keyless toleration: NVCRE's pods then tolerate every taint"
        )
        found.append(
            Diagnostic(doc.span(where), Severity.WARNING, codes.NVC374.code, message, where, hint)
        )
    return found
