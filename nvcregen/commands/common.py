"""Options and output shared by every command."""

from __future__ import annotations

from pathlib import Path

import click

from nvcregen.commands.completion import complete_sites
from nvcregen.core.errors import Diagnostic

FORMATS = click.Choice(["text", "json"])
SITES = click.argument(
    "sites",
    nargs=-1,
    type=click.Path(path_type=Path, dir_okay=False),
    shell_complete=complete_sites,
)
FORMAT = click.option(
    "--format", "fmt", type=FORMATS, default="text", help="How to print diagnostics."
)
STRICT = click.option("--strict", is_flag=True, help="Treat tag-only images as errors.")
KUBECONFIG = click.option(
    "--kubeconfig",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Kubeconfig for --context (default: $KUBECONFIG, then ~/.kube/config).",
)


def print_diagnostics(diags: list[Diagnostic], fmt: str, *, wrote: str) -> None:
    """Print diagnostics as text (stderr, with a closing summary line) or JSON (stdout).

    At most `MAX_PER_FILE` per file are printed, then a note says how many were not.
    """
    from nvcregen.commands.diagnostics import JsonRenderer, TextRenderer, cap_per_file, summary

    ordered = sorted(diags, key=Diagnostic.sort_key)
    shown = cap_per_file(ordered)  # bounded output; the summary still counts them all
    if fmt == "json":
        click.echo(JsonRenderer().render(shown), nl=False)
        return
    click.echo(TextRenderer(Path.cwd()).render(shown), err=True, nl=False)
    click.echo(summary(ordered, wrote=wrote), err=True, nl=False)
