"""GitOps as the replay models it: which step applies each run, and what it waits for (pure).

A **step** is what a GitOps controller applies at once: an Argo CD sync wave of one
Application, or one Flux Kustomization. A step applies when every step it comes `after`
is done; a step is done when each run it applied that the controller waits on (a
**waited** run) has finished. A run the controller does not wait on (no health check
for its kind, no `wait`) counts as done the moment it is applied, while it still runs.
A run no step waits on at the end of the plan is **unreported**: the sync or the chain
reports success before it finished (Argo CD's last wave). Each engine's rules are its
replay model's (`engines/gitops/<engine>/replay.py`); a tree without GitOps objects is
taken as applied wave by wave, each run waited on, as nvcregen's Argo CD Application would.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from nvcregen.replay.model import Run, TreeObject

WAVE = "argocd.argoproj.io/sync-wave"


@dataclass(frozen=True)
class Step:
    """One step of the plan as the tree's GitOps objects apply it.

    Attributes:
        key: Unique within the tree.
        label: How messages name it (`wave 2 of Application x`, `Kustomization y`).
        file: The file of the GitOps object that applies it ("" when none does).
        after: Keys of the steps that must be done before it applies.
        timeout_ms: Flux: how long it may wait for its runs before it fails; else None.

    """

    key: str
    label: str
    file: str
    after: tuple[str, ...] = ()
    timeout_ms: int | None = None


@dataclass(frozen=True)
class Gating:
    """The steps of a tree and where each run stands in them.

    Attributes:
        steps: Every step, in the order they were found.
        step_of: Each run's step, by the run's path in the site folder.
        unwaited: Why the controller does not wait for a run, by path (waited runs absent).
        unreported: Why nothing waits for a run at the end of the plan, by path.
        deactivation_seen: Argo CD: runs whose prebuilt Workload the tree applies and
            `argocd-cm` checks, so a run Kueue deactivates fails its wave (by path).

    """

    steps: Mapping[str, Step]
    step_of: Mapping[str, str]
    unwaited: Mapping[str, str] = field(default_factory=dict)
    unreported: Mapping[str, str] = field(default_factory=dict)
    deactivation_seen: frozenset[str] = frozenset()

    def waited(self, path: str) -> bool:
        """Whether the run's step is done only once the run has finished."""
        return path not in self.unwaited

    def members(self, runs: Iterable[Run]) -> dict[str, list[Run]]:
        """The runs of each step, in run order (runs of no step left out)."""
        found: dict[str, list[Run]] = {}
        for run in runs:
            step = self.step_of.get(run.source.path)
            if step is not None:
                found.setdefault(step, []).append(run)
        return found

    def before(self, runs: Iterable[str]) -> dict[str, frozenset[str]]:
        """For each step, the runs that must have finished before it applies."""
        by_step: dict[str, set[str]] = {}
        for path in runs:
            if self.waited(path) and path in self.step_of:
                by_step.setdefault(self.step_of[path], set()).add(path)
        memo: dict[str, frozenset[str]] = {}
        for key in self.steps:
            _before(key, self.steps, by_step, memo, set())
        return memo


def _before(
    key: str,
    steps: Mapping[str, Step],
    by_step: Mapping[str, set[str]],
    memo: dict[str, frozenset[str]],
    visiting: set[str],
) -> frozenset[str]:
    if key in memo:
        return memo[key]
    if key in visiting or key not in steps:  # a dependsOn loop, or a step outside the tree
        return frozenset()
    visiting.add(key)
    found: set[str] = set()
    for earlier in steps[key].after:
        found |= by_step.get(earlier, set()) | _before(earlier, steps, by_step, memo, visiting)
    visiting.discard(key)
    memo[key] = frozenset(found)
    return memo[key]


def wave_of(item: TreeObject) -> int:
    """An object's Argo CD sync wave (0 when it has none or it is not a number)."""
    value = (item.meta.get("annotations") or {}).get(WAVE, "0")
    try:
        return int(str(value))
    except ValueError:
        return 0


def relative(path: str, root: str) -> str | None:
    """A repository path as a path in the site folder `root`; None when it is outside."""
    cleaned = path.strip().removeprefix("./").rstrip("/")
    if cleaned == root:
        return ""
    return cleaned[len(root) + 1 :] if cleaned.startswith(f"{root}/") else None


def folder(path: str) -> str:
    """The folder of a path in the site folder ("" at its top)."""
    return path.rpartition("/")[0]


def under(path: str, base: str, *, recurse: bool = True) -> bool:
    """Whether a file is applied from folder `base` (with or without subfolders)."""
    parent = folder(path)
    if parent == base:
        return True
    return recurse and (base == "" or parent.startswith(f"{base}/"))
