"""A Flux site played by Flux itself: source-controller and kustomize-controller on the twin.

The rehearsal commits every object its steps apply (`rehearse/steps.py`: what the twin
can take),
at its path in the site's folder, into a bare repository served on loopback by `git
http-backend` (`rehearse/gitserver.py`), and applies a GitRepository for it and the site's own
Kustomizations. From then on the real kustomize-controller decides: it applies each
Kustomization once its `dependsOn` are Ready, waits on `wait: true` with its own status
readers and the site's `healthCheckExprs`, and marks it Ready or failed. The rehearsal
only reads what happened.

What differs from a cluster, and why:
- Each Kustomization reads the rehearsal's GitRepository at the folder its source would
  have given it (its replay model's units, `replay.py`):
  source-watcher, which turns the site's ArtifactGenerator into an ExternalArtifact, is
  not run.
- `dependsOn` keeps only Kustomizations the rehearsal runs; the others (the platform's
  Helm charts, monitoring: the twin runs Kueue, JobSet and Trainer itself) are taken as
  Ready, as the replay takes them.
- `suspend` is lifted, as an operator's `flux resume` starts a manual plan.
- kustomize-controller looks again at an unready dependency every `requeue_s` (30 s by
  default), scaled with the pods' speed.

Per step: applied when one of its objects first exists, done when its Kustomization is
Ready for the generation applied, failed when kustomize-controller says so (a health check
failed, an object was refused, the build failed). Steps behind a failed one stay unapplied
(their dependency is never Ready), as on a cluster.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from nvcregen.engines.gitops.flux.controllers import start_flux
from nvcregen.engines.gitops.flux.layer import FLUX_NAMESPACE
from nvcregen.rehearse.apply import Discovery, apply
from nvcregen.rehearse.gitserver import git_repository
from nvcregen.rehearse.steps import ApplyStep, Order, StepOutcome
from nvcregen.rehearse.twin import Twin
from nvcregen.rehearse.watch import Watch
from nvcregen.replay.gitopsmodel import model_of
from nvcregen.replay.model import TreeObject

REHEARSAL_REPOSITORY = "nvcregen-rehearsal"
SOURCE_API = "source.toolkit.fluxcd.io/v1"
KUSTOMIZE_API = "/apis/kustomize.toolkit.fluxcd.io/v1"
FAILED_REASONS = frozenset(
    {"HealthCheckFailed", "ReconciliationFailed", "BuildFailed", "ArtifactFailed", "PruneFailed"}
)
SOURCE_TIMEOUT_S = 60.0
MIN_REQUEUE_S = 1.0


def repository_files(order: Order) -> dict[str, str]:
    """Path in the site folder -> the file's text: every object a step applies.

    Objects of one file are written as one multi-document file, in their order.
    """
    documents: dict[str, list[str]] = {}
    for step in order.steps:
        for item in step.objects:
            documents.setdefault(item.path, []).append(json.dumps(item.obj, sort_keys=True))
    return {path: "---\n".join(f"{d}\n" for d in docs) for path, docs in sorted(documents.items())}


def git_source(url: str) -> dict[str, Any]:
    """The GitRepository every rehearsed Kustomization reads."""
    return {
        "apiVersion": SOURCE_API,
        "kind": "GitRepository",
        "metadata": {"name": REHEARSAL_REPOSITORY, "namespace": FLUX_NAMESPACE},
        "spec": {"interval": "10m", "url": url, "ref": {"branch": "main"}},
    }


def rehearsed_kustomizations(
    objects: Sequence[TreeObject], root: str, order: Order
) -> list[dict[str, Any]]:
    """The site's Kustomizations of the steps, as the rehearsal applies them (module doc)."""
    held = model_of(order.gitops).units(objects, root) if order.gitops is not None else []
    folders = {_key(item): folder for item, folder, _ in held}
    found = []
    for step in order.steps:
        unit = step.unit
        if unit is None or step.key not in folders:
            continue
        spec = {k: v for k, v in unit.spec.items() if k not in {"suspend", "dependsOn"}}
        spec["sourceRef"] = {"kind": "GitRepository", "name": REHEARSAL_REPOSITORY}
        spec["path"] = f"./{folders[step.key]}"
        depends = _depends_on(step, order)
        if depends:
            spec["dependsOn"] = [
                {"name": key.partition("/")[2], "namespace": key.partition("/")[0]}
                for key in depends
            ]
        meta = {"name": unit.name, "namespace": unit.namespace or FLUX_NAMESPACE}
        found.append({"apiVersion": unit.obj["apiVersion"], "kind": unit.kind, "metadata": meta,
                      "spec": spec})  # fmt: skip
    return found


def ready_state(obj: Mapping[str, Any] | None) -> tuple[str, str]:
    """("ready" | "failed" | "", message) of a Kustomization, read as untrusted."""
    if not isinstance(obj, Mapping):
        return "", ""
    meta, status = obj.get("metadata"), obj.get("status")
    if not isinstance(meta, Mapping) or not isinstance(status, Mapping):
        return "", ""
    if status.get("observedGeneration") != meta.get("generation"):
        return "", ""  # not yet read by the controller since it was applied
    for condition in status.get("conditions") or []:
        if not isinstance(condition, Mapping) or condition.get("type") != "Ready":
            continue
        message = str(condition.get("message") or "")
        if condition.get("status") == "True":
            return "ready", message
        if condition.get("status") == "False" and condition.get("reason") in FAILED_REASONS:
            return "failed", f"{condition.get('reason')}: {message}"
    return "", ""


@dataclass
class _Progress:
    """What kustomize-controller has done with each step so far (seconds of the watch)."""

    applied: dict[str, float] = field(default_factory=dict)
    done: dict[str, float] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)
    refused: dict[str, str] = field(default_factory=dict)  # Kustomizations the server refused

    def settled(self, key: str) -> bool:
        return key in self.done or key in self.failed or key in self.refused

    def outcome(self, step: ApplyStep) -> StepOutcome:
        refused = self.refused.get(step.key)
        return StepOutcome(
            step.key,
            step.label,
            self.applied.get(step.key),
            self.done.get(step.key),
            (f"Kustomization/{step.key}: {refused}",) if refused else (),
            self.failed.get(step.key, ""),
        )


def play_flux(
    twin: Twin,
    objects: Sequence[TreeObject],
    root: str,
    order: Order,
    watch: Watch,
    *,
    timeout_s: float,
    poll_s: float,
    requeue_s: float,
) -> list[StepOutcome]:
    """Start Flux, hand it the site, and record each step as it goes (module doc)."""
    server = twin.git_server()
    git_repository(server.root, REHEARSAL_REPOSITORY, repository_files(order))
    start_flux(twin, requeue_dependency_s=max(MIN_REQUEUE_S, requeue_s))
    discovery = Discovery(twin.plane)
    progress = _Progress()
    why = apply(twin.plane, discovery, git_source(server.url(REHEARSAL_REPOSITORY)))
    if why:
        progress.refused = {s.key: f"its GitRepository was refused: {why}" for s in order.steps}
    for kustomization in [] if why else rehearsed_kustomizations(objects, root, order):
        meta = kustomization["metadata"]
        refused = apply(twin.plane, discovery, kustomization)
        if refused:
            progress.refused[f"{meta['namespace']}/{meta['name']}"] = refused
    plan = _Plan(
        {s.key: _depends_on(s, order) for s in order.steps},
        {s.key: _probe(discovery, s) for s in order.steps},
    )
    while (
        not progress.refused
        and not progress.failed
        and watch.now() <= timeout_s
        and not all(progress.settled(s.key) for s in order.steps)
    ):
        watch.poll()
        _look(twin, order, plan, watch, progress)
        watch.pause(poll_s)
    return [progress.outcome(s) for s in order.steps]


@dataclass(frozen=True)
class _Plan:
    """Per step, worked out once: the steps it waits for, and the object showing it applied."""

    depends: dict[str, tuple[str, ...]]
    probes: dict[str, str | None]  # the URL of its first run (or first object)


def _look(twin: Twin, order: Order, plan: _Plan, watch: Watch, progress: _Progress) -> None:
    """One round: which steps Flux has applied, and which are Ready or failed."""
    now = watch.now()
    for step in order.steps:
        if progress.settled(step.key):
            continue
        due = all(d in progress.done for d in plan.depends[step.key])
        probe = plan.probes[step.key]
        if step.key not in progress.applied and due and probe and twin.get(probe) is not None:
            progress.applied[step.key] = now
            for run in watch.runs:
                if run.step == step.key and run.applied_s is None:
                    run.applied_s = now
        state, message = ready_state(twin.get(_path(step)))
        if state == "ready":
            progress.applied.setdefault(step.key, now)
            progress.done[step.key] = now
        elif state == "failed":
            progress.failed[step.key] = message


def _key(item: TreeObject) -> str:
    return f"{item.namespace}/{item.name}"


def _path(step: ApplyStep) -> str:
    namespace, _, name = step.key.partition("/")
    return f"{KUSTOMIZE_API}/namespaces/{namespace or FLUX_NAMESPACE}/kustomizations/{name}"


def _depends_on(step: ApplyStep, order: Order) -> tuple[str, ...]:
    keys = {s.key for s in order.steps}
    unit = step.unit
    if unit is None:
        return ()
    return tuple(
        key
        for d in unit.spec.get("dependsOn") or []
        if isinstance(d, dict)
        for key in [f"{d.get('namespace') or unit.namespace}/{d.get('name')}"]
        if key in keys
    )


def _probe(discovery: Discovery, step: ApplyStep) -> str | None:
    """The URL of the object whose existence says Flux applied the step.

    Its first run, else its first object; None when the API server serves neither.
    """
    runs = set(step.runs)
    probes = [o for o in step.objects if o.path in runs] or list(step.objects)
    return discovery.path(probes[0].obj) if probes else None
