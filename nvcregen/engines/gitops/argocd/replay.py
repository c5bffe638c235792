"""Argo CD's sync waves as the replay's steps (pure; shared/reference/execution.md section 3).

An Application applies the files under its `source.path` (subfolders with
`directory.recurse`) wave by wave: a wave starts when every resource of the earlier waves
is Healthy. Only kinds with a health check are waited on: those in the tree's `argocd-cm`
(`resource.customizations.health.<group>_<kind>`), and batch/v1 Jobs that no Kueue queue
suspends (the built-in check calls a Job Kueue resumed Healthy while it runs). The last
wave of a sync is not waited on: runs there are unreported unless a later wave follows.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence

from nvcregen.core.fields import list_at, mapping_at
from nvcregen.core.kueuekeys import KUEUE_PREFIX, PREBUILT_LABEL, QUEUE_LABEL
from nvcregen.plan.facts import PlanFacts
from nvcregen.replay.gating import Gating, Step, folder, relative, under, wave_of
from nvcregen.replay.gitopsmodel import Held
from nvcregen.replay.model import Run, TreeObject

HEALTH_KEY = "resource.customizations.health."
_WILDCARD_KEY = "resource.customizations"
_APPLICATION = ("argoproj.io", "Application")


def applications(objects: Iterable[TreeObject], root: str) -> list[tuple[TreeObject, str, bool]]:
    """The tree's Applications reading this site's folder: (object, folder, recurse)."""
    found = []
    for item in objects:
        if (item.group, item.kind) != _APPLICATION:
            continue
        sources = list_at(item.spec, "sources")
        first = mapping_at(sources[0]) if sources else None
        source = mapping_at(item.spec, "source") or first or {}
        base = relative(str(source.get("path", "")), root)
        if base is not None:
            recurse = (mapping_at(source, "directory") or {}).get("recurse")
            found.append((item, base, bool(recurse)))
    return found


def health_checks(objects: Iterable[TreeObject]) -> frozenset[str]:
    """`<group>_<kind>` of every health check the tree's `argocd-cm` configures."""
    keys: set[str] = set()
    for item in objects:
        if item.kind != "ConfigMap" or item.name != "argocd-cm":
            continue
        data = mapping_at(item.obj, "data") or {}  # else NVC602 reports it
        keys |= {str(k).removeprefix(HEALTH_KEY) for k in data if str(k).startswith(HEALTH_KEY)}
        for line in str(data.get(_WILDCARD_KEY, "")).splitlines():
            if line and not line.startswith(" ") and line.rstrip().endswith(":"):
                keys.add(line.rstrip()[:-1].replace("/", "_"))
    return frozenset(keys)


WORKLOAD_CHECK = "kueue.x-k8s.io_Workload"
APPLICATION_CHECK = "argoproj.io_Application"


def deactivation_seen(
    objects: Iterable[TreeObject], runs: Iterable[Run], checks: frozenset[str] | None
) -> frozenset[str]:
    """Runs whose deactivation by Kueue Argo CD would see (Degraded), by path.

    Each names a prebuilt Workload (its label) that the tree applies, in its namespace,
    and `argocd-cm` has a health check for Workloads (`checks` None: the site says the
    checks are installed elsewhere). Otherwise a deactivated run looks queued to Argo CD
    and holds its sync until someone ends it.
    """
    if checks is not None and WORKLOAD_CHECK not in checks:
        return frozenset()
    workloads = {
        (o.namespace, o.name)
        for o in objects
        if o.kind == "Workload" and o.group == KUEUE_PREFIX.rstrip("/")
    }
    return frozenset(
        run.source.path
        for run in runs
        if (run.source.namespace, (mapping_at(run.source.meta, "labels") or {}).get(PREBUILT_LABEL))
        in workloads
    )


def argocd_gating(
    objects: Sequence[TreeObject],
    runs: Sequence[Run],
    apps: Sequence[tuple[TreeObject, str, bool]],
    checks: frozenset[str] | None,
    *,
    last_wave_waits: bool = False,
) -> Gating:
    """Steps per Application and wave.

    `checks` None assumes a health check for every run kind; `last_wave_waits` that
    something outside the tree waits for the last wave (nothing is reported about it).
    An Application that another one applies (a child) is waited on by its parent's later
    waves when argocd-cm checks Applications: its steps come after every step of the
    children in the parent's earlier waves (and of what comes before the parent).
    """
    steps: dict[str, Step] = {}
    step_of: dict[str, str] = {}
    unwaited: dict[str, str] = {}
    unreported: dict[str, str] = {}
    run_paths = {r.source.path for r in runs}
    covering = _covering(objects, apps)
    parents = _parents(apps, covering, checks)
    for app, _, _ in sorted(apps, key=lambda a: a[0].name):
        covered = covering[app.path]
        mine = [o for o in covered if o.path in run_paths and o.path not in step_of]
        if not mine:
            continue
        waves = sorted({wave_of(o) for o in mine})
        last = max(wave_of(o) for o in covered)
        for index, wave in enumerate(waves):
            key = f"{app.name}#{wave}"
            after = tuple(f"{app.name}#{w}" for w in waves[:index])
            label = f"wave {wave} of Application {app.name}" if app.file else f"sync wave {wave}"
            steps[key] = Step(key, label, app.file, after)
        waited = _waited_by_parent(app, parents, covering)
        for item in mine:
            step_of[item.path] = f"{app.name}#{wave_of(item)}"
            reason = _unwaited(item, checks)
            if reason:
                unwaited[item.path] = reason
            elif wave_of(item) == last and not last_wave_waits and not waited:
                unreported[item.path] = (
                    f"it is in the last sync wave ({last}) of Application {app.name}, which "
                    "Argo CD does not wait on: the sync succeeds once it is applied"
                )
    steps = _after_parents(steps, apps, covering, parents)
    seen = deactivation_seen(objects, runs, checks)
    return Gating(steps, step_of, unwaited, unreported, seen)


def _covering(
    objects: Sequence[TreeObject], apps: Sequence[tuple[TreeObject, str, bool]]
) -> dict[str, list[TreeObject]]:
    """The objects each Application applies, by its path (the tree indexed by folder once)."""
    by_folder: dict[str, list[TreeObject]] = {}
    for o in objects:
        by_folder.setdefault(folder(o.path), []).append(o)
    found: dict[str, list[TreeObject]] = {}
    for app, base, recurse in apps:
        found[app.path] = [
            o
            for f, items in by_folder.items()
            if under(f"{f}/-", base, recurse=recurse)
            for o in items
        ]
    return found


def _parents(
    apps: Sequence[tuple[TreeObject, str, bool]],
    covering: Mapping[str, list[TreeObject]],
    checks: frozenset[str] | None,
) -> dict[str, tuple[TreeObject, int]]:
    """Each child Application's parent and its wave there, by the child's path.

    A parent's waves wait for its children only when argocd-cm checks Applications
    (without the check, none is found). An Application applied by several is taken as its
    most specific parent's (the one applying the fewest objects).
    """
    if checks is not None and APPLICATION_CHECK not in checks:
        return {}
    paths = {app.path for app, _, _ in apps}
    found: dict[str, tuple[TreeObject, int]] = {}
    for parent, _, _ in sorted(apps, key=lambda a: (-len(covering[a[0].path]), a[0].name)):
        for child in covering[parent.path]:
            if child.path in paths and child.path != parent.path:
                found[child.path] = (parent, wave_of(child))
    return found


def _waited_by_parent(
    app: TreeObject,
    parents: Mapping[str, tuple[TreeObject, int]],
    covering: Mapping[str, list[TreeObject]],
) -> bool:
    """Whether a wave of the child's parent comes after the child's (and so waits for it)."""
    if app.path not in parents:
        return False
    parent, wave = parents[app.path]
    return any(wave_of(o) > wave for o in covering[parent.path])


def _after_parents(
    steps: Mapping[str, Step],
    apps: Sequence[tuple[TreeObject, str, bool]],
    covering: Mapping[str, list[TreeObject]],
    parents: Mapping[str, tuple[TreeObject, int]],
) -> dict[str, Step]:
    """Each child's steps after every step of its parent's earlier waves and their children."""
    if not parents:
        return dict(steps)
    by_app: dict[str, list[str]] = {}
    names = {app.path: app.name for app, _, _ in apps}
    for key in steps:
        by_app.setdefault(key.rpartition("#")[0], []).append(key)
    children: dict[str, list[tuple[int, str]]] = {}
    for child, (parent, wave) in parents.items():
        children.setdefault(parent.path, []).append((wave, child))

    def subtree(path: str, seen: set[str]) -> list[str]:
        if path in seen:  # Applications applying each other (a hand-edited tree)
            return []
        seen.add(path)
        own = by_app.get(names[path], [])
        return own + [k for _, c in children.get(path, []) for k in subtree(c, seen)]

    gates: dict[str, tuple[str, ...]] = {}

    def gate(path: str, visiting: set[str]) -> tuple[str, ...]:
        if path in gates or path in visiting:
            return gates.get(path, ())
        visiting.add(path)
        parent, wave = parents.get(path, (None, 0))
        earlier: list[str] = []
        if parent is not None:
            earlier = [*gate(parent.path, visiting)]
            for w, sibling in sorted(children[parent.path]):
                if w < wave:
                    earlier += subtree(sibling, {path})
        gates[path] = tuple(dict.fromkeys(earlier))
        return gates[path]

    found = dict(steps)
    for path, name in names.items():
        before = gate(path, set())
        for key in by_app.get(name, []) if before else []:
            step = found[key]
            found[key] = dataclasses.replace(step, after=(*before, *step.after))
    return found


def _unwaited(item: TreeObject, checks: frozenset[str] | None) -> str:
    """Why Argo CD does not wait for this run ("" when it does)."""
    key = f"{item.group}_{item.kind}"
    if checks is None or key in checks:
        return ""
    labels: Mapping[str, str] = item.meta.get("labels") or {}
    if item.kind == "Job" and item.group == "batch":
        if not labels.get(QUEUE_LABEL):
            return ""
        return (
            "Argo CD's built-in Job check calls a Job Kueue resumed Healthy while it runs, and "
            f"the tree's argocd-cm has no {HEALTH_KEY}{key}"
        )
    return (
        f"Argo CD has no health check for {item.kind}: the tree's argocd-cm lacks {HEALTH_KEY}{key}"
    )


def waves_only(objects: Sequence[TreeObject], runs: Sequence[Run]) -> Gating:
    """No GitOps objects in the tree: waves as one Application with every check would run."""
    item = TreeObject("", "", {"metadata": {"name": "waves"}})
    return argocd_gating(objects, runs, [(item, "", True)], None, last_wave_waits=True)


class ArgoCdModel:
    """Argo CD as the replay models it (`replay.gitopsmodel.GitOpsModel`)."""

    worker_steps = None  # an Application's wave holds no worker of a limited pool

    def units(self, objects: Sequence[TreeObject], root: str) -> list[Held]:
        """Each Application reading the site's folder, with its subfolders if it recurses."""
        return applications(objects, root)

    def gating(
        self,
        objects: Sequence[TreeObject],
        runs: Sequence[Run],
        units: Sequence[Held],
        facts: PlanFacts,
    ) -> Gating:
        """Steps per Application and wave, held to the tree's health checks."""
        checks = None if facts.external_health_checks else health_checks(objects)
        return argocd_gating(objects, runs, units, checks)

    def bare(self, objects: Sequence[TreeObject], runs: Sequence[Run]) -> Gating | None:
        """Waves as one Application with every check would run them."""
        return waves_only(objects, runs)


MODEL = ArgoCdModel()
