"""The `nvcregen` command line: click commands only, each calling one API function."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from nvcregen import __version__
from nvcregen.commands.common import (
    FORMAT,
    SITES,
    STANDALONE,
    STRICT,
    exit_now,
    pause_collector,
    print_diagnostics,
)
from nvcregen.core.errors import ExitCode, has_errors


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="nvcregen")
def main() -> None:
    """Compile GPU cluster Site specs into validated NVCRE readiness manifests."""
    pause_collector(click.get_current_context())


@main.command()
@SITES
@FORMAT
@STRICT
def validate(sites: tuple[Path, ...], fmt: str, strict: bool) -> None:
    """Load and check sites only (every site under sites/ when none is named)."""
    from nvcregen.chain.model import Options
    from nvcregen.chain.sites import compile_sites

    results = compile_sites(Path.cwd(), list(sites), Options(strict=strict))
    diags = [d for r in results for d in r.diagnostics]
    print_diagnostics(diags, fmt, wrote="nothing written (validate)")
    sys.exit(ExitCode.INVALID if has_errors(diags) else ExitCode.OK)


@main.command()
@SITES
@click.option(
    "--out",
    "out_dir",
    type=click.Path(path_type=Path, file_okay=False),
    default=Path("out"),
    show_default=True,
    help="Output folder, relative to the current folder (see above).",
)
@click.option(
    "--check", is_flag=True, help="Compare with the output folder in memory; write nothing."
)
@click.option(
    "--no-cache",
    is_flag=True,
    help="With --check, compile every site, even those whose inputs and files are unchanged.",
)
@click.option(
    "--verbose",
    "-v",
    is_flag=True,
    help="With --check, print the full diff of every file that differs (default: a summary).",
)
@FORMAT
@STRICT
def render(
    sites: tuple[Path, ...],
    out_dir: Path,
    check: bool,
    no_cache: bool,
    verbose: bool,
    fmt: str,
    strict: bool,
) -> None:
    """Compile sites, check every object, and write out/<site>/ atomically.

    `--out DIR` (default `out`): DIR is relative to the current folder. Inside the site's
    project (the nearest folder above the site file that holds `sites/`, else the current
    folder when the file is in it, else the file's own folder), the GitOps objects apply
    DIR/<site> as a path of that project (NVC379 warns when the site's `gitops.path` names
    another folder); outside it nothing is refused: the render is a preview, as `helm
    template --output-dir` makes one, exit 0, and NVC379 warns that its GitOps objects
    still point at the folder the site is committed at (`gitops.path`, or `out/<site>`).
    """
    from nvcregen.chain.model import Options
    from nvcregen.chain.sites import render as render_project
    from nvcregen.commands.drift import drift_report

    options = Options(strict=strict)
    outcome = render_project(
        Path.cwd(), list(sites), out_dir, options, check=check, cache=not no_cache
    )
    if has_errors(outcome.diagnostics):
        done = ", ".join(f"{out_dir.as_posix()}/{s}/" for s in outcome.written)
        wrote = f"wrote only {done}" if done else f"nothing written to {out_dir.as_posix()}/"
        print_diagnostics(outcome.diagnostics, fmt, wrote=wrote)
        exit_now(ExitCode.INVALID)
    if check:
        count = len(outcome.drift)
        if outcome.cached and fmt == "text":
            click.echo(_cached_note(outcome.cached), err=True)
        print_diagnostics(
            outcome.diagnostics,
            fmt,
            wrote=f"{count} file{' differs' if count == 1 else 's differ'}",
        )
        if outcome.drift:
            click.echo(drift_report(outcome.drift, verbose=verbose), err=True, nl=False)
            click.echo(
                f"nvcregen: {out_dir.as_posix()}/ is out of date; run `nvcregen render`", err=True
            )
        exit_now(ExitCode.DRIFT if outcome.drift else ExitCode.OK)
    written = ", ".join(f"{out_dir.as_posix()}/{s}/" for s in outcome.written)
    print_diagnostics(
        outcome.diagnostics,
        fmt,
        wrote=f"wrote {written}" if written else f"{out_dir.as_posix()}/ unchanged",
    )
    exit_now(ExitCode.OK)


@main.command()
@click.argument("out_dir", type=click.Path(path_type=Path, file_okay=False), default=Path("out"))
@FORMAT
@STRICT
@click.option(
    "--server",
    "context",
    metavar="CONTEXT",
    help="Also dry-run every object (server-side apply, dryRun=All) on this context's cluster.",
)
@click.option(
    "--kubeconfig",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Kubeconfig for --server (default: $KUBECONFIG, then ~/.kube/config).",
)
@click.option(
    "--base",
    metavar="GIT-REF",
    help="Check updates against the objects at this revision (transition rules, oldSelf).",
)
def check(
    out_dir: Path,
    fmt: str,
    strict: bool,
    context: str | None,
    kubeconfig: Path | None,
    base: str | None,
) -> None:
    """Validate a rendered tree offline against the upstream schemas and nvcregen's checks."""
    from nvcregen.check.checker import CheckOptions, CheckSetupError, run_check

    if kubeconfig is not None and context is None:
        raise click.UsageError("--kubeconfig needs --server CONTEXT")
    options = CheckOptions(out_dir, Path.cwd(), strict, context, kubeconfig, base)
    try:
        diags, done = run_check(options)
    except CheckSetupError as exc:
        click.echo(f"nvcregen: {exc}", err=True)
        sys.exit(ExitCode.INVALID)
    print_diagnostics(diags, fmt, wrote=done)
    exit_now(ExitCode.DRIFT if has_errors(diags) else ExitCode.OK)


@main.command()
@click.option(
    "--catalog",
    is_flag=True,
    help="Print the schema of catalog files instead (schemas/catalog.v1alpha1.json).",
)
@click.option(
    "--archive",
    is_flag=True,
    help="Print the schema of a results archive's JSON files instead"
    " (schemas/archive.v1alpha1.json).",
)
def schema(catalog: bool, archive: bool) -> None:
    """Print the JSON Schema of Site files (schemas/site.v1alpha1.json)."""
    if catalog and archive:
        raise click.UsageError("--catalog and --archive name two schemas: give one")
    if archive:
        from nvcregen.results.archiveschema import archive_json_schema_text

        click.echo(archive_json_schema_text(), nl=False)
        return
    if catalog:
        from nvcregen.catalog.schema import catalog_json_schema_text

        click.echo(catalog_json_schema_text(), nl=False)
        return
    from nvcregen.spec.schema import site_json_schema_text

    click.echo(site_json_schema_text(), nl=False)


def _cached_note(cached: list[str]) -> str:
    count = f"{len(cached)} site{'' if len(cached) == 1 else 's'}"
    return (
        f"nvcregen: {count} not recompiled: inputs unchanged and every file matches its"
        " digest in index.json (--no-cache to compile them)"
    )


def _register() -> None:
    from nvcregen.commands.fabric import drill, inventory
    from nvcregen.commands.oncall import export, history, retest
    from nvcregen.commands.plan import plan
    from nvcregen.commands.quarantine import quarantine
    from nvcregen.commands.rehearse import rehearse
    from nvcregen.commands.results import collect, ingest, report, verify
    from nvcregen.commands.workspace import catalog, diff, init_site

    commands: tuple[click.Command, ...] = (plan, diff, collect, verify, report, ingest, retest)
    commands += (quarantine, history, export, init_site, catalog, inventory, drill, rehearse)
    for command in commands:
        main.add_command(command)


_register()


def entrypoint() -> None:
    """Run the command line; an unexpected failure is reported as a bug, not a traceback."""
    try:
        main(obj=STANDALONE)
    except Exception as exc:
        if os.environ.get("NVCREGEN_DEBUG"):
            raise
        click.echo(
            f"nvcregen: internal error: {type(exc).__name__}: {exc}\n"
            "  this is a bug in nvcregen; rerun with NVCREGEN_DEBUG=1 to see where, and report it",
            err=True,
        )
        sys.exit(ExitCode.INTERNAL)
