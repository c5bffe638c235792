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


def print_diagnostics(diags: list[Diagnostic], fmt: str, *, wrote: str) -> None:
    """Print diagnostics as text (stderr, with a closing summary line) or JSON (stdout)."""
    from nvcregen.commands.diagnostics import JsonRenderer, TextRenderer, summary

    ordered = sorted(diags, key=Diagnostic.sort_key)
    if fmt == "json":
        click.echo(JsonRenderer().render(ordered), nl=False)
        return
    click.echo(TextRenderer(Path.cwd()).render(ordered), err=True, nl=False)
    click.echo(summary(ordered, wrote=wrote), err=True, nl=False)
