"""A site made ready to rehearse: rendered into the scratch folder and replayed.

The site is rendered by the code `nvcregen render` runs (`chain/sites.py::render`), into
`<scratch>/tree/<site>/`, and read back from there: the rehearsal applies the files as
written. The replay `nvcregen plan` prints (`replay/site.py::replay_site`, then
`timeline.py::plan_view`) is run on the same files, with the facts the site gives
(`plan/facts.py`: nodes, window, durations). Only trainer-mode sites are rehearsed:
the twin runs Kueue, JobSet and Trainer, not NVCRE; and only plans whose every test's
kind has a log maker (`makers/registry.py`), so that `collect` can judge what ran.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from nvcregen.catalog.load import load_catalog
from nvcregen.chain.model import Options
from nvcregen.chain.pipeline import CompileResult, build_site
from nvcregen.chain.sites import display_path, render, site_root
from nvcregen.core.errors import Diagnostic, has_errors
from nvcregen.engineapi.registry import readiness_of
from nvcregen.plan.model import Pool
from nvcregen.plan.resolved import Plan
from nvcregen.rehearse.makers.registry import unmade
from nvcregen.rehearse.period import period_refusal
from nvcregen.rehearse.tree import read_tree
from nvcregen.replay.model import TreeObject
from nvcregen.replay.site import replay_site
from nvcregen.replay.timeline import PlanView, plan_view


class NotRehearsableError(ValueError):
    """The site renders, but is not one the twin can run (the message says why)."""


@dataclass(frozen=True)
class Prepared:
    """A site's Plan rendered: its tree's objects and their replay (`view`).

    The plan's facts are what the twin is judged against; its units and catalog what the
    pods' logs are made from.
    """

    plan: Plan
    tree: Path
    objects: tuple[TreeObject, ...]
    view: PlanView

    @cached_property
    def pools(self) -> tuple[Pool, ...]:
        """The plan's pools, in the order its units first name them."""
        pools: dict[str, Pool] = {}
        for unit in self.plan.units:
            pools.setdefault(unit.pool.spec.name, unit.pool)
        return tuple(pools.values())


def prepare(
    path: Path, cwd: Path, scratch: Path, *, period: bool = False
) -> Prepared | list[Diagnostic]:
    """Render the site at `path` into `scratch/tree/` and replay it.

    Its error diagnostics instead when it has errors, as `render` reports them; with
    `period` (`rehearse --period`), NVC786 for a site without `readiness.periodic`.

    Raises:
        NotRehearsableError: For a site whose readiness engine is not `trainer`, or whose
            plan holds a test of a kind the rehearsal makes no log of
            (`makers/registry.py`).

    """
    out = scratch / "tree"
    outcome = render(cwd, [path], out, Options(), check=False)
    if has_errors(outcome.diagnostics) or not outcome.written:
        return [d for d in outcome.diagnostics if d.is_error]
    project = site_root(path, cwd)
    catalog = load_catalog()
    built = build_site(
        path.read_bytes(), display_path(path, project), catalog, Options(root=project)
    )
    if isinstance(built, CompileResult):  # rendered a moment ago: only a changed file
        return [d for d in built.diagnostics if d.is_error]
    site = built.plan.site
    if not readiness_of(site).writes_runs:  # NVCRE writes its runs itself: no twin of it
        raise NotRehearsableError(
            f"{site.metadata.name}: rehearse runs trainer-mode sites (readiness.engine: "
            f"trainer); this site's engine is {site.spec.readiness.engine}, and the twin "
            "has no NVCRE"
        )
    refused = period_refusal(site, built.plan.doc) if period else None
    if refused is not None:
        return [refused]
    unmade_kinds = unmade(built.plan.units)
    if unmade_kinds:  # refused now, not after minutes of a run whose logs say nothing
        raise NotRehearsableError(f"{site.metadata.name}: {'; '.join(unmade_kinds)}")
    tree = out / site.metadata.name
    objects = tuple(read_tree(tree))
    return Prepared(built.plan, tree, objects, plan_view(replay_site(objects, built.plan.facts)))
