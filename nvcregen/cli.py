"""The `nvcregen` command line: click commands only, each calling one API function."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from nvcregen import __version__
from nvcregen.completion import complete_catalog_names, complete_models, complete_sites
from nvcregen.errors import Diagnostic, ExitCode, has_errors

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


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="nvcregen")
def main() -> None:
    """Compile GPU cluster Site specs into validated NVCRE readiness manifests."""


@main.command()
@SITES
@FORMAT
@STRICT
def validate(sites: tuple[Path, ...], fmt: str, strict: bool) -> None:
    """Load and check sites only (every site under sites/ when none is named)."""
    from nvcregen.compile.pipeline import Options
    from nvcregen.project import compile_sites

    results = compile_sites(Path.cwd(), list(sites), Options(strict=strict))
    diags = [d for r in results for d in r.diagnostics]
    _emit(diags, fmt, wrote="nothing written (validate)")
    sys.exit(ExitCode.INVALID if has_errors(diags) else ExitCode.OK)


@main.command()
@SITES
@click.option(
    "--out",
    "out_dir",
    type=click.Path(path_type=Path, file_okay=False),
    default=Path("out"),
    show_default=True,
    help="Output folder.",
)
@click.option(
    "--check", is_flag=True, help="Compare with the output folder in memory; write nothing."
)
@click.option(
    "--no-cache",
    is_flag=True,
    help="With --check, compile every site, even those whose inputs and files are unchanged.",
)
@FORMAT
@STRICT
def render(
    sites: tuple[Path, ...], out_dir: Path, check: bool, no_cache: bool, fmt: str, strict: bool
) -> None:
    """Compile sites, check every object, and write out/<site>/ atomically."""
    from nvcregen.compile.pipeline import Options
    from nvcregen.project import render as render_project

    options = Options(strict=strict)
    outcome = render_project(
        Path.cwd(), list(sites), out_dir, options, check=check, cache=not no_cache
    )
    if has_errors(outcome.diagnostics):
        _emit(outcome.diagnostics, fmt, wrote=f"nothing written to {out_dir.as_posix()}/")
        sys.exit(ExitCode.INVALID)
    if check:
        count = len(outcome.drift)
        if outcome.cached and fmt == "text":
            click.echo(_cached_note(outcome.cached), err=True)
        _emit(
            outcome.diagnostics,
            fmt,
            wrote=f"{count} file{' differs' if count == 1 else 's differ'}",
        )
        for drift in outcome.drift:
            click.echo(f"{drift.path}: {drift.change}", err=True)
            if drift.diff:
                click.echo(drift.diff, err=True, nl=False)
        if outcome.drift:
            click.echo(
                f"nvcregen: {out_dir.as_posix()}/ is out of date; run `nvcregen render`", err=True
            )
        sys.exit(ExitCode.DRIFT if outcome.drift else ExitCode.OK)
    written = ", ".join(f"{out_dir.as_posix()}/{s}/" for s in outcome.written)
    _emit(
        outcome.diagnostics,
        fmt,
        wrote=f"wrote {written}" if written else f"{out_dir.as_posix()}/ unchanged",
    )
    sys.exit(ExitCode.OK)


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
    from nvcregen.check.run import CheckOptions, CheckSetupError, run_check

    if kubeconfig is not None and context is None:
        raise click.UsageError("--kubeconfig needs --server CONTEXT")
    options = CheckOptions(out_dir, Path.cwd(), strict, context, kubeconfig, base)
    try:
        diags, done = run_check(options)
    except CheckSetupError as exc:
        click.echo(f"nvcregen: {exc}", err=True)
        sys.exit(ExitCode.INVALID)
    _emit(diags, fmt, wrote=done)
    sys.exit(ExitCode.DRIFT if has_errors(diags) else ExitCode.OK)


@main.command()
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
    """Show what the sites' changes since GIT-REF do: a domain summary, then every object."""
    from nvcregen.diff.render import render_report
    from nvcregen.diff.report import GitError, diff_project

    try:
        report = diff_project(Path.cwd(), base)
    except GitError as exc:
        click.echo(f"nvcregen: {exc}", err=True)
        sys.exit(ExitCode.INVALID)
    click.echo(render_report(report, fmt), nl=False)
    sys.exit(ExitCode.OK)


@main.command()
@click.option("--site", required=True, metavar="SITE", help="Site name (sites/SITE.yaml) or file.")
@click.option("--context", metavar="CTX", help="Read this kubeconfig context's cluster.")
@click.option(
    "--kubeconfig",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Kubeconfig for --context (default: $KUBECONFIG, then ~/.kube/config).",
)
@click.option(
    "--from",
    "from_dir",
    type=click.Path(path_type=Path, file_okay=False, exists=True),
    metavar="DIR",
    help="Read exported objects (YAML or JSON, lists or single objects) from this folder.",
)
@click.option(
    "--out",
    "out_dir",
    type=click.Path(path_type=Path, file_okay=False),
    default=Path("results"),
    show_default=True,
    help="Archives go to OUT/<site>/<run-id>/.",
)
@click.option(
    "--reclaim",
    is_flag=True,
    help="Once the archive verified, delete the site's Certifications and WorkloadRuns.",
)
@FORMAT
def collect(
    site: str,
    context: str | None,
    kubeconfig: Path | None,
    from_dir: Path | None,
    out_dir: Path,
    reclaim: bool,
    fmt: str,
) -> None:
    """Archive a site's results with verdicts: 0 all pass, 1 fail or incomplete, 2 error."""
    from nvcregen.collect.output import TerminalProgress, render_json, render_text, summary_line
    from nvcregen.collect.run import CollectError, CollectOptions
    from nvcregen.collect.run import collect as run_collect

    if (context is None) == (from_dir is None):
        raise click.UsageError("give exactly one of --context CTX or --from DIR")
    if reclaim and from_dir is not None:
        raise click.UsageError("--reclaim deletes from a cluster: it needs --context")
    if kubeconfig is not None and context is None:
        raise click.UsageError("--kubeconfig needs --context CTX")
    progress = TerminalProgress() if sys.stderr.isatty() and fmt == "text" else None
    options = CollectOptions(
        site, out_dir, Path.cwd(), context, kubeconfig, from_dir, reclaim, on_page=progress
    )
    try:
        outcome = run_collect(options)
    except CollectError as exc:
        if exc.diagnostics:
            _emit(exc.diagnostics, fmt, wrote="nothing collected")
        click.echo(f"nvcregen: {exc}", err=True)
        sys.exit(ExitCode.INVALID)
    finally:
        if progress is not None:
            progress.close()
    click.echo(render_json(outcome) if fmt == "json" else render_text(outcome), nl=False)
    click.echo(summary_line(outcome), err=True, nl=False)
    sys.exit(outcome.exit_code)


@main.command()
@click.argument("results_dir", type=click.Path(path_type=Path, file_okay=False, exists=True))
@click.option(
    "--out",
    "out_dir",
    type=click.Path(path_type=Path, file_okay=False),
    default=Path("report"),
    show_default=True,
    help="Write OUT/index.html and OUT/summary.md.",
)
def report(results_dir: Path, out_dir: Path) -> None:
    """Page and summary of a run (RESULTS_DIR, or a site folder's newest): 0 written, 2 refused."""
    from nvcregen.report.folder import ReportError
    from nvcregen.report.run import write_report

    try:
        written = write_report(results_dir, out_dir)
    except ReportError as exc:
        click.echo(f"nvcregen: {exc}", err=True)
        sys.exit(ExitCode.INVALID)
    click.echo(f"{written.site} {written.run_id}: {written.word}")
    for file in written.files:
        click.echo(f"wrote {file}")


@main.command()
def schema() -> None:
    """Print the JSON Schema of Site files (schemas/site.v1alpha1.json)."""
    from nvcregen.spec.schema import site_json_schema_text

    click.echo(site_json_schema_text(), nl=False)


@main.command()
@click.argument("kind", type=click.Choice(["nccl", "dcgm"]))
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--at", metavar="SIZE", help="Summarize only this message size, e.g. 1GiB.")
@click.option(
    "--format", "fmt", type=FORMATS, default="text", show_default=True, help="Output format."
)
def ingest(kind: str, files: tuple[Path, ...], at: str | None, fmt: str) -> None:
    """Read raw nccl-tests or `dcgmi diag` outputs into runs (and medians over rounds)."""
    import json

    from nvcregen.ingest.render import render_text
    from nvcregen.ingest.run import ingest_files
    from nvcregen.units import UnitError, parse_size

    try:
        size = None if at is None else parse_size(at)
    except UnitError as exc:
        hint = f" ({exc.hint})" if exc.hint else ""
        raise click.BadParameter(exc.message + hint, param_hint="--at") from exc
    result = ingest_files("nccl" if kind == "nccl" else "dcgm", files, size)
    if fmt == "json":
        click.echo(json.dumps(result.to_json(), indent=2))
    else:
        click.echo(render_text(result), nl=False)
    if result.diagnostics:
        read = len(files) - len({d.span.file for d in result.diagnostics})
        _emit(list(result.diagnostics), "text", wrote=f"read {read} of {len(files)} files")
        sys.exit(ExitCode.INVALID)


@main.command("init")
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
@click.option("--kubernetes", default="1.33", show_default=True, help="Kubernetes minor version.")
@click.option(
    "--engine",
    type=click.Choice(["argocd", "flux"]),
    default="argocd",
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
    kubernetes: str,
    engine: str,
    repo_url: str | None,
) -> None:
    """Write a commented starter site for a catalog GPU model; it validates as written."""
    from nvcregen.scaffold import ScaffoldError, Starter, init_command

    if nodes is not None and node_count is not None:
        raise click.UsageError("--node-count is for a selector pool; --nodes names the nodes")
    try:
        starter = Starter.of(model, name, nodes, node_count, kubernetes, fabric, engine, repo_url)
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


@main.group()
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


def _cached_note(cached: list[str]) -> str:
    count = f"{len(cached)} site{'' if len(cached) == 1 else 's'}"
    return (
        f"nvcregen: {count} not recompiled: inputs unchanged and every file matches its"
        " digest in index.json (--no-cache to compile them)"
    )


def _emit(diags: list[Diagnostic], fmt: str, *, wrote: str) -> None:
    from nvcregen.output import JsonRenderer, TextRenderer, summary

    ordered = sorted(diags, key=Diagnostic.sort_key)
    if fmt == "json":
        click.echo(JsonRenderer().render(ordered), nl=False)
        return
    click.echo(TextRenderer(Path.cwd()).render(ordered), err=True, nl=False)
    click.echo(summary(ordered, wrote=wrote), err=True, nl=False)


def entrypoint() -> None:
    """Run the command line; an unexpected failure is reported as a bug, not a traceback."""
    try:
        main()
    except Exception as exc:
        if os.environ.get("NVCREGEN_DEBUG"):
            raise
        click.echo(
            f"nvcregen: internal error: {type(exc).__name__}: {exc}\n"
            "  this is a bug in nvcregen; rerun with NVCREGEN_DEBUG=1 to see where, and report it",
            err=True,
        )
        sys.exit(ExitCode.INTERNAL)
