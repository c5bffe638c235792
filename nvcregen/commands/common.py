"""Options and output shared by every command."""

from __future__ import annotations

import gc
import os
import sys
from pathlib import Path
from typing import NoReturn

import click

from nvcregen.commands.completion import complete_sites
from nvcregen.core.errors import Diagnostic
from nvcregen.core.heap import collection_paused

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


class _Standalone:
    """`entrypoint`'s context object: the process ends when the command does."""


STANDALONE = _Standalone()


def standalone(context: click.Context | None) -> bool:
    """Whether `context` runs as the process itself (`entrypoint`), not in a caller's."""
    return context is not None and context.find_root().obj is STANDALONE


# Commands that compile or read a whole tree offline: graphs that live until they end.
# The others talk to clusters, where caught API errors leave cycles (an exception and
# the frames of its traceback) for the collector to free.
COMPILING = frozenset({"validate", "render", "check", "plan", "diff", "drill"})


def pause_collector(context: click.Context) -> None:
    """Pause the cyclic garbage collector for a `COMPILING` command `context` invokes.

    The collector would re-walk their graphs for nothing (`nvcregen.core.heap` says
    what that cost). Run as the process, it stays paused to the end, so that neither
    the first allocation after re-enabling it nor the interpreter's exit walks the
    whole heap once more; an in-process caller (tests) gets its setting back when the
    command ends.
    """
    if context.invoked_subcommand not in COMPILING:
        return
    if standalone(context):
        gc.disable()
    else:
        context.with_resource(collection_paused())


def exit_now(code: int) -> NoReturn:
    """Exit with `code`; run as the process, without tearing down the heap.

    After a render or check of thousands of objects, freeing them one by one at exit
    takes seconds, and nothing is left to clean up: the output is flushed here, files
    are written and closed, the workers have ended. In-process callers (tests) get
    `SystemExit` as usual.
    """
    if standalone(click.get_current_context(silent=True)):
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)


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
