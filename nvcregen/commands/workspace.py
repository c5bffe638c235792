"""Commands for working on a project: `diff`, `init`, `catalog`."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from nvcregen.commands.common import FORMATS
from nvcregen.commands.completion import complete_catalog_names, complete_models
from nvcregen.core.errors import ExitCode
from nvcregen.engineapi.names import DEFAULT_GITOPS_NAME, GITOPS_NAMES


@click.command()
@click.option(
    "--base",
    metavar="GIT-REF",
    default="HEAD",
    show_default=True,
    help="The revision to compare the working tree's sites with.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "markdown", "json"]),
    default="text",
    help="text for a terminal, markdown for a pull-request comment, json for tools.",
)
def diff(base: str, fmt: str) -> None:
    """Show what the sites' changes since --base do: a domain summary, then every object.

    Exits 2, like every command, when a site of the working tree is invalid (the report
    still shows it); a base that was invalid and is fixed now is not an error.
    """
    from nvcregen.diff.render import render_report
    from nvcregen.diff.report import diff_project
    from nvcregen.gitrev import GitError

    try:
        report = diff_project(Path.cwd(), base)
    except GitError as exc:
        click.echo(f"nvcregen: {exc}", err=True)
        sys.exit(ExitCode.INVALID)
    click.echo(render_report(report, fmt), nl=False)
    invalid = any("head" in site.errors for site in report.sites)
    sys.exit(ExitCode.INVALID if invalid else ExitCode.OK)


@click.command("init")
@click.option("--model", required=True, shell_complete=complete_models, help="Catalog GPU model.")
@click.option("--name", required=True, help="Site name (a DNS label); also the cluster label.")
@click.option(
    "--out",
    "out_path",
    type=click.Path(path_type=Path, dir_okay=False, allow_dash=True),
    help="File to write (default sites/NAME.yaml; - prints it); never overwritten.",
)
@click.option("--nodes", metavar="A,B,...", help="Node names (default: select by product label).")
@click.option(
    "--node-count",
    type=click.IntRange(1, 100_000),
    help="Nodes the label selector should match, without --nodes (default 2).",
)
@click.option(
    "--fabric",
    type=click.Choice(["roce", "ib", "tcp"]),
    help="NIC fabric (default: the catalog's typical NICs for the model).",
)
@click.option(
    "--nics",
    "nic_count",
    type=click.IntRange(1, 32),
    help="NICs per node (default: the catalog's typical count); the window is sized for them.",
)
@click.option(
    "--nic-speed",
    metavar="SPEED",
    help="Line rate of one NIC, with its unit, e.g. 200Gb/s (default: the catalog's typical).",
)
@click.option("--kubernetes", default="1.33", show_default=True, help="Kubernetes minor version.")
@click.option(
    "--engine",
    type=click.Choice(sorted(GITOPS_NAMES)),
    default=DEFAULT_GITOPS_NAME,
    show_default=True,
    help="GitOps controller for gitops/ (with --repo-url).",
)
@click.option("--repo-url", help="Git repository the GitOps controller reads out/ from.")
def init_site(
    model: str,
    name: str,
    out_path: Path | None,
    nodes: str | None,
    node_count: int | None,
    fabric: str | None,
    nic_count: int | None,
    nic_speed: str | None,
    kubernetes: str,
    engine: str,
    repo_url: str | None,
) -> None:
    """Write a commented starter site for a catalog GPU model; it validates as written."""
    from nvcregen.scaffold.writer import ScaffoldError, Starter, init_command

    if nodes is not None and node_count is not None:
        raise click.UsageError("--node-count is for a selector pool; --nodes names the nodes")
    try:
        starter = Starter.of(
            model, name, nodes, node_count, kubernetes, fabric, engine, repo_url,
            nic_count, nic_speed,
        )  # fmt: skip
        text, done = init_command(Path.cwd(), starter, out_path)
    except ScaffoldError as exc:
        click.echo(f"nvcregen: {exc}", err=True)
        sys.exit(ExitCode.INVALID)
    if text:
        click.echo(text, nl=False)
    click.echo(done, err=True)


CATALOG_KIND = click.option(
    "--kind", type=click.Choice(["hardware", "tests", "baselines"]), help="Only this kind."
)
CATALOG_FORMAT = click.option(
    "--format", "fmt", type=FORMATS, default="text", show_default=True, help="Output format."
)


@click.group()
def catalog() -> None:
    """Browse the catalog: GPU models, readiness tests and measured baselines."""


@catalog.command("list")
@CATALOG_KIND
@CATALOG_FORMAT
def catalog_list(kind: str | None, fmt: str) -> None:
    """List catalog entries, one table per kind."""
    from nvcregen.catalog.browse import list_catalog

    click.echo(list_catalog(kind, fmt), nl=False)


@catalog.command("show")
@click.argument("name", shell_complete=complete_catalog_names)
@CATALOG_KIND
@CATALOG_FORMAT
def catalog_show(name: str, kind: str | None, fmt: str) -> None:
    """Show one catalog entry: a model (H20-3e), a test (nccl-all-reduce) or a baseline."""
    from nvcregen.catalog.browse import NotInCatalogError, show_catalog

    try:
        click.echo(show_catalog(name, kind, fmt), nl=False)
    except NotInCatalogError as exc:
        click.echo(f"nvcregen: {exc}", err=True)
        sys.exit(ExitCode.INVALID)
