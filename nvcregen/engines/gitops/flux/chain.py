"""Flux: the Kustomizations that apply the readiness steps in order and wait for each (pure).

The readiness Kustomization becomes the head of a chain: it applies `00-common/` and,
when `readiness.trigger` is manual, is the one suspended object. One Kustomization per
step follows it with `dependsOn` on the step before, `wait: true`, the step's timeout and
the CEL health checks of the kinds it runs (`healthCheckExprs`, from
`compile/gitops/healthchecks.py`), so a step applies only after the one before it was
healthy for the same revision. A `<site>-gitops` Kustomization keeps the GitOps objects
themselves as in Git, so a `flux resume` of the head is undone before any later commit
can be applied (docs/design/0006-stage-gating.md).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from nvcregen.compile.gitops.common import COMPONENT, SOURCE, layer_path
from nvcregen.compile.gitops.healthchecks import HealthCheck
from nvcregen.compile.gitops.shardpack import NAME_MAX
from nvcregen.compile.gitops.steps import COMMON_FOLDER, Step
from nvcregen.core.manifest import Manifest, Obj, content_hash, hashed_name
from nvcregen.engines.gitops.flux.layer import (
    FLUX_KUSTOMIZE_API,
    FLUX_NAMESPACE,
    flux_path,
    flux_spec,
)
from nvcregen.spec.v1alpha1 import Site


def health_expr(check: HealthCheck) -> Obj:
    """A health check as one Flux Kustomization `healthCheckExprs` entry."""
    return {
        "apiVersion": check.api_version,
        "kind": check.kind,
        "current": check.current,
        "failed": check.failed,
    }


def chain_readiness(
    site: Site, gitops: Sequence[Manifest], steps: Sequence[Step]
) -> list[Manifest]:
    """Turn the readiness Kustomization into the head of one Kustomization per step.

    Args:
        site: The site.
        gitops: The GitOps layer (`nvcregen.compile.gitops.layer.gitops_manifests`).
        steps: The readiness steps, in order.

    Returns:
        The GitOps layer with the readiness head, the step Kustomizations and the
        `<site>-gitops` Kustomization; unchanged without a readiness Kustomization.

    """
    head_name = f"{site.metadata.name}-readiness"
    heads = [m for m in gitops if m.kind == "Kustomization" and m.name == head_name]
    if not heads or not steps:
        return list(gitops)
    chained = [_head(site, m) if m in heads else m for m in gitops]
    return [*chained, gitops_kustomization(site), *step_kustomizations(site, steps)]


def _head(site: Site, head: Manifest) -> Manifest:
    """The readiness Kustomization, applying `00-common/` after the GitOps objects."""
    spec = dict(head.obj["spec"])
    spec["path"] = flux_path(site, f"{layer_path(site, 'readiness')}/{COMMON_FOLDER}")
    # The head applies a revision only after `<site>-gitops` applied it, and with it the
    # `suspend: true` Git says: a resumed head is suspended again before a later commit.
    spec["dependsOn"] = [*spec.get("dependsOn", []), {"name": _gitops_name(site)}]
    obj = {**head.obj, "spec": spec}
    return dataclasses.replace(head, obj=obj)


def _gitops_name(site: Site) -> str:
    return f"{site.metadata.name}-gitops"


def gitops_kustomization(site: Site) -> Manifest:
    """`<site>-gitops`: applies `gitops/` itself, so Flux keeps those objects as in Git.

    New or renamed stages add or remove step Kustomizations, and a `flux resume` of the
    readiness head is reverted to the `suspend: true` of Git at the next reconcile.
    """
    spec = flux_spec(site, layer_path(site, COMPONENT))
    note = "applies gitops/ from Git, itself included; apply gitops/ once by hand to start"
    return _kustomization(_gitops_name(site), spec, (note,))


def step_kustomizations(site: Site, steps: Sequence[Step]) -> list[Manifest]:
    """One Kustomization per step, each waiting on the step before it (the first on the head)."""
    previous = f"{site.metadata.name}-readiness"
    found: list[Manifest] = []
    for step in steps:
        name = step_kustomization_name(site, step)
        found.append(_step(site, step, name, previous))
        previous = name
    return found


def step_kustomization_name(site: Site, step: Step) -> str:
    """`<site>-readiness-<NN>-<stage>[-r<R>]`, cut to a label value's 63 characters."""
    parts = [site.metadata.name, "readiness", step.folder.replace("/round-", "-r")]
    name = "-".join(parts)
    return name if len(name) <= NAME_MAX else hashed_name(parts, content_hash(name), NAME_MAX)


def _step(site: Site, step: Step, name: str, previous: str) -> Manifest:
    spec = flux_spec(site, f"{layer_path(site, 'readiness')}/{step.folder}") | {
        "dependsOn": [{"name": previous}],
        "wait": True,
        "timeout": step.timeout,
        "healthCheckExprs": [health_expr(check) for check in step.checks],
    }
    note = f"step {step.number}: applied once {previous} is ready for the same revision"
    return _kustomization(name, spec, (note,))


def _kustomization(name: str, spec: Obj, notes: tuple[str, ...]) -> Manifest:
    obj = {
        "apiVersion": FLUX_KUSTOMIZE_API,
        "kind": "Kustomization",
        "metadata": {"name": name, "namespace": FLUX_NAMESPACE},
        "spec": spec,
    }
    return Manifest(obj, COMPONENT, SOURCE, (), notes)
