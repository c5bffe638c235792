"""`nvcregen plan`: each site's readiness plan as a timeline, replayed from its objects."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import click

from nvcregen.commands.common import SITES, exit_now, print_diagnostics
from nvcregen.core.errors import ExitCode

if TYPE_CHECKING:  # the command line loads the compiler only for the commands that need it
    from nvcregen.plan.model import TestUnit
    from nvcregen.replay.timeline import PlanView


@click.command("plan")
@SITES
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "markdown", "json"]),
    default="text",
    show_default=True,
    help="text for a terminal, markdown for a pull-request comment, json for tools.",
)
def plan(sites: tuple[Path, ...], fmt: str) -> None:
    """Show each site's plan as a timeline: steps, runs, nodes, durations, GPU-hours.

    The site is compiled in memory and its objects replayed as Kueue, the scheduler and
    Argo CD or Flux would run them (docs/design/0008-replay.md); nothing is written. A
    site whose replay finds problems still gets its timeline; `nvcregen check` (or
    render) lists the problems.
    """
    from nvcregen.catalog.load import load_catalog
    from nvcregen.chain.pipeline import CompileResult, Options, build_site
    from nvcregen.chain.sites import discover_sites, display_path, site_root
    from nvcregen.check.replayed import replay_manifests_of
    from nvcregen.core.errors import NvcregenError
    from nvcregen.plan.periodic import periodic_cost
    from nvcregen.replay.report import render_plans
    from nvcregen.replay.timeline import plan_view

    root = Path.cwd()
    paths = discover_sites(root, list(sites))
    if not paths:
        click.echo("nvcregen: no site files found (add sites/<name>.yaml)", err=True)
        sys.exit(ExitCode.INVALID)
    try:
        catalog = load_catalog()
    except NvcregenError as exc:
        print_diagnostics(exc.diagnostics, "text", wrote="no plan")
        sys.exit(ExitCode.INVALID)
    views, failed = [], []
    for path in paths:
        project = site_root(path, root)  # its inventory and chart archive, as render finds them
        shown = display_path(path, project)
        built = build_site(path.read_bytes(), shown, catalog, Options(root=project))
        if isinstance(built, CompileResult):
            failed += [d for d in built.diagnostics if d.is_error]
            continue
        view = plan_view(replay_manifests_of(built.manifests, built.plan))
        view = replace(view, periodic=periodic_cost(built.plan.site, built.plan.units))
        views.append(with_coverage(view, built.plan.units))
    if views:
        click.echo(render_plans(views, fmt), nl=False)
    if failed:
        print_diagnostics(failed, "text", wrote="no plan for sites with errors")
        exit_now(ExitCode.INVALID)
    exit_now(ExitCode.OK)


def with_coverage(view: PlanView, test_units: Sequence[TestUnit]) -> PlanView:
    """The view with each step's coverage, from the planned units of its stages."""
    from nvcregen.plan.coverage import units_coverage

    by_stage: dict[str, list[TestUnit]] = {}
    for unit in test_units:
        by_stage.setdefault(unit.stage.name, []).append(unit)
    found = {}
    for row in view.steps:
        covered = units_coverage([u for s in row.stages for u in by_stage.get(s, [])])
        if covered is not None:
            found[row.name] = covered
    return replace(view, coverage=found)
