"""Flux Kustomizations as the replay's steps (pure; shared/reference/execution.md section 4).

A Kustomization applies every file under its `path`, subfolders included, once each
Kustomization in its `dependsOn` is Ready; with `wait: true` (or the run listed in
`healthChecks`) it is Ready only when what it applied is healthy. kstatus calls a kind
without Ready conditions (TrainJob, NVCRE's kinds) healthy at once, so those runs are
waited on only through a `healthCheckExprs` entry for their group and kind. A batch/v1
Job is read by Flux's own Job reader, ahead of every expression, and that reader calls a
suspended Job Current (fluxcd/pkg runtime/statusreaders/job.go since runtime v0.100.0):
a Job Kueue still queues passes at once, so a Job is waited on only through its prebuilt
Workload, applied by the same Kustomization with an expression for Workloads that is not
simply `true` (`compile/gitops/healthchecks.py`: current once Finished with reason
Succeeded). A file under several Kustomizations is taken as applied by the one with the
fewest dependencies (it is applied first). A suspended Kustomization is taken as resumed
by the operator; dependencies outside the tree as Ready. A Kustomization reading an
ExternalArtifact of source-watcher reads the folder the tree's ArtifactGenerator copies
into it (`@<alias>/<folder>/**`); one reading a GitRepository, the repository.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from nvcregen.core import units
from nvcregen.core.fields import list_at, mapping_at
from nvcregen.core.kueuekeys import KUEUE_PREFIX, PREBUILT_LABEL
from nvcregen.plan.facts import PlanFacts
from nvcregen.replay.gating import Gating, Step, relative, under
from nvcregen.replay.gitopsmodel import Held
from nvcregen.replay.model import Run, TreeObject

FLUX = "kustomize.toolkit.fluxcd.io"
STEP_LABEL = "Kustomization "  # how a Flux step is named: `Kustomization <name>`
SOURCE_WATCHER = "source.extensions.fluxcd.io"
_MIN_TIMEOUT_MS = 30_000
_DEFAULT_INTERVAL_MS = 600_000


def kustomizations(objects: Sequence[TreeObject], root: str) -> list[tuple[TreeObject, str]]:
    """The tree's Kustomizations reading this site's folder: (object, folder)."""
    artifacts = _artifact_folders(objects)
    found = []
    for item in objects:
        if (item.group, item.kind) == (FLUX, "Kustomization"):
            path = str(item.spec.get("path", "")).strip().removeprefix("./")
            source = mapping_at(item.spec, "sourceRef") or {}
            if source.get("kind") == "ExternalArtifact":
                inside = artifacts.get(str(source.get("name")))
                if inside is None:
                    continue  # an artifact made elsewhere: nothing known of its folder
                path = f"{inside}/{path}" if inside and path else inside or path
            base = relative(path, root)
            if base is not None:
                found.append((item, base))
    return found


def _artifact_folders(objects: Sequence[TreeObject]) -> dict[str, str]:
    """ExternalArtifact name -> the repository folder an ArtifactGenerator copies into it."""
    folders: dict[str, str] = {}
    for item in objects:
        if (item.group, item.kind) != (SOURCE_WATCHER, "ArtifactGenerator"):
            continue
        for artifact in list_at(item.spec, "artifacts"):
            copies = list_at(artifact, "copy")
            for copy in copies:
                origin = str(copy.get("from", "")) if isinstance(copy, Mapping) else ""
                alias, _, inside = origin.removeprefix("@").partition("/")
                if alias and inside.endswith("**") and copy.get("to") == "@artifact/":
                    folders[str(artifact.get("name"))] = inside.removesuffix("**").rstrip("/")
    return folders


def flux_gating(
    objects: Sequence[TreeObject], runs: Sequence[Run], found: Sequence[tuple[TreeObject, str]]
) -> Gating:
    """A step per Kustomization, after the ones it depends on."""
    steps = {_key(k): _step(k) for k, _ in found}
    workloads = {
        (o.namespace, o.name): o.path
        for o in objects
        if o.kind == "Workload" and o.group == KUEUE_PREFIX.rstrip("/")
    }
    depth = {key: len(_ancestors(key, steps, set())) for key in steps}
    step_of: dict[str, str] = {}
    unwaited: dict[str, str] = {}
    for run in runs:
        covering = [
            (depth[_key(k)], k.name, k) for k, base in found if under(run.source.path, base)
        ]
        if not covering:
            continue
        owner = min(covering, key=lambda c: (c[0], c[1]))[2]
        step_of[run.source.path] = _key(owner)
        reason = _unwaited(owner, run.source)
        if not reason and (run.source.group, run.source.kind) == ("batch", "Job"):
            reason = _job_unwaited(owner, run.source, workloads, found)
        if reason:
            unwaited[run.source.path] = reason
    return Gating(steps, step_of, unwaited)


def _key(item: TreeObject) -> str:
    return f"{item.namespace}/{item.name}"


def _step(item: TreeObject) -> Step:
    after = tuple(
        f"{d.get('namespace') or item.namespace}/{d.get('name')}"
        for d in list_at(item.spec, "dependsOn")
        if isinstance(d, dict)
    )
    return Step(_key(item), f"{STEP_LABEL}{item.name}", item.file, after, _timeout(item.spec))


def _ancestors(key: str, steps: Mapping[str, Step], seen: set[str]) -> set[str]:
    for earlier in steps[key].after if key in steps else ():
        if earlier not in seen:
            seen.add(earlier)
            _ancestors(earlier, steps, seen)
    return seen


def _timeout(spec: Mapping[str, object]) -> int:
    """`spec.timeout`, else Flux's default: the interval less 30 s, at least 30 s."""
    timeout = _duration(spec.get("timeout"))
    if timeout is not None:
        return timeout
    interval = _duration(spec.get("interval")) or _DEFAULT_INTERVAL_MS
    return max(_MIN_TIMEOUT_MS, interval - _MIN_TIMEOUT_MS)


def _duration(value: object) -> int | None:
    try:
        return units.parse_duration(str(value)) if value else None
    except ValueError:
        return None


def _unwaited(owner: TreeObject, run: TreeObject) -> str:
    """Why Flux does not wait for this run ("" when it does)."""
    listed = any(
        isinstance(c, dict) and c.get("kind") == run.kind and c.get("name") == run.name
        for c in list_at(owner.spec, "healthChecks")
    )
    if not owner.spec.get("wait") and not listed:
        return (
            f"Kustomization {owner.name} has no `wait: true`: it is Ready once the run is applied"
        )
    if (run.group, run.kind) == ("batch", "Job"):
        return ""  # Flux's own Job reader: `_job_unwaited` says whether it waits
    for expr in list_at(owner.spec, "healthCheckExprs"):
        if not isinstance(expr, dict):
            continue
        group = str(expr.get("apiVersion", "")).rpartition("/")[0]
        if group == run.group and expr.get("kind") in (None, run.kind):
            return ""
    return (
        f"Kustomization {owner.name} has no healthCheckExprs for {run.kind}: kstatus calls it "
        "healthy as soon as it exists"
    )


def _job_unwaited(
    owner: TreeObject,
    run: TreeObject,
    workloads: Mapping[tuple[str, str], str],
    found: Sequence[tuple[TreeObject, str]],
) -> str:
    """Why Flux passes this batch/v1 Job while Kueue still queues it ("" when it waits).

    Flux's Job reader calls a suspended Job Current, so only the run's prebuilt Workload
    can hold the step: applied by the same Kustomization, and checked by an expression
    that is not always true.
    """
    label = (mapping_at(run.meta, "labels") or {}).get(PREBUILT_LABEL)
    path = workloads.get((run.namespace, str(label))) if label else None
    base = next((b for k, b in found if k is owner), None)
    gated = any(
        isinstance(e, dict)
        and str(e.get("apiVersion", "")).rpartition("/")[0] == KUEUE_PREFIX.rstrip("/")
        and e.get("kind") == "Workload"
        and str(e.get("current", "true")).strip() != "true"
        for e in list_at(owner.spec, "healthCheckExprs")
    )
    if path is not None and base is not None and under(path, base) and gated:
        return ""
    return (
        f"Kustomization {owner.name}: Flux's Job reader calls a Job Kueue still queues "
        "(spec.suspend) Current, and no prebuilt Workload of the Job with a check that waits "
        "for it to finish holds the step"
    )


class FluxModel:
    """Flux as the replay models it (`replay.gitopsmodel.GitOpsModel`)."""

    worker_steps = STEP_LABEL  # a Kustomization waiting holds a kustomize-controller worker

    def units(self, objects: Sequence[TreeObject], root: str) -> list[Held]:
        """Each Kustomization reading the site's folder, with every subfolder of it."""
        return [(item, base, True) for item, base in kustomizations(objects, root)]

    def gating(
        self,
        objects: Sequence[TreeObject],
        runs: Sequence[Run],
        units: Sequence[Held],
        facts: PlanFacts,
    ) -> Gating:
        """A step per Kustomization, after the ones it depends on."""
        return flux_gating(objects, runs, [(item, base) for item, base, _ in units])

    def bare(self, objects: Sequence[TreeObject], runs: Sequence[Run]) -> Gating | None:
        """Flux applies nothing a Kustomization does not read."""
        return None


MODEL = FluxModel()
