"""The replay as a check: of the objects render is about to write, and of a rendered tree.

`nvcregen.replay` models how Kueue, kube-scheduler, Argo CD and Flux would run a site's
tree and reports NVC670-NVC676 (docs/design/0008-replay.md). Render runs it on the objects
in memory, reporting at the site line each object came from; `nvcregen check` on the
files of each site folder, reporting at the file's lines.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from nvcregen.check.findings import Finding
from nvcregen.core.errors import Diagnostic
from nvcregen.core.manifest import Manifest
from nvcregen.emit.naming import manifest_path
from nvcregen.plan.facts import PlanFacts
from nvcregen.plan.resolved import Plan
from nvcregen.replay.model import Problem, TreeObject
from nvcregen.replay.site import Replay, replay_site
from nvcregen.spec.fast import parse_fast
from nvcregen.spec.positions import Document


def replay_manifests(manifests: list[Manifest], plan: Plan) -> list[Diagnostic]:
    """Replay a site's generated objects; report at the site line each one came from."""
    by_path = {manifest_path(m): m for m in manifests}
    replayed = replay_manifests_of(manifests, plan)
    return [_at_site(p, by_path, plan.doc) for p in replayed.problems if p.file in by_path]


def replay_manifests_of(manifests: list[Manifest], plan: Plan) -> Replay:
    """The replay of a site's objects in memory, each named by its path in the site folder."""
    objects = [TreeObject(path, path, m.obj) for m in manifests for path in [manifest_path(m)]]
    return replay_site(objects, plan.facts)


def replay_texts(tree: Mapping[str, str], plan: Plan) -> Replay:
    """The replay of a compiled tree's file texts (`diff` holds trees as texts)."""
    objects = []
    for path, text in sorted(tree.items()):
        if path.endswith(".yaml"):
            data = parse_fast(text.encode("utf-8"))
            if isinstance(data, dict) and "kind" in data:
                objects.append(TreeObject(path, path, data))
    return replay_site(objects, plan.facts)


def _at_site(problem: Problem, by_path: Mapping[str, Manifest], doc: Document) -> Diagnostic:
    source = by_path[problem.file].source
    return Diagnostic(
        doc.span(source),
        problem.severity,
        problem.code,
        f"generated {problem.file}: {problem.message}",
        source,
        problem.hint,
        (f"in the object at {problem.pointer}", *problem.notes),
    )


def replay_files(
    files: Iterable[tuple[str, str, Mapping[str, Any]]], facts: PlanFacts
) -> list[tuple[str, Finding]]:
    """Replay one site folder's files: (shown name, path in the folder, object) each."""
    objects = [TreeObject(shown, path, obj) for shown, path, obj in files]
    return [
        (p.file, Finding(p.pointer, p.code, p.message, p.severity, p.hint))
        for p in replay_site(objects, facts).problems
    ]
