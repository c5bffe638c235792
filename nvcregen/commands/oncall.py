"""Commands that answer on-call questions from archives: `retest`, `history`, `export`."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from nvcregen.commands.common import print_diagnostics
from nvcregen.core.errors import ExitCode
from nvcregen.core.terminal import printable

RESULTS = click.argument(
    "results_dir", type=click.Path(path_type=Path, file_okay=False, exists=True)
)


@click.command()
@RESULTS
@click.option(
    "--out",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Write the site here (default: sites/<site>-retest.yaml); never over a file.",
)
@click.option(
    "--site",
    type=click.Path(path_type=Path, dir_okay=False, exists=True),
    help="The site file the run was judged against (default: as provenance.json names it).",
)
@click.option(
    "--rail",
    metavar="NODE/HCA",
    help="Only this failing rail: its node alone (a loopback or port failure) or its pair's"
    " suspect beside a cleared node.",
)
def retest(results_dir: Path, out: Path | None, site: Path | None, rail: str | None) -> None:
    """A site that isolates a run's suspect nodes: 0 written or none, 2 refused."""
    from nvcregen.report.folder import ReportError
    from nvcregen.retest.sitefile import RetestError
    from nvcregen.retest.writer import write_retest

    try:
        found = write_retest(results_dir, out, site, Path.cwd(), rail)
    except RetestError as exc:
        if exc.diagnostics:
            print_diagnostics(list(exc.diagnostics), "text", wrote="nothing written")
        click.echo(printable(f"nvcregen: {exc}"), err=True)
        sys.exit(ExitCode.INVALID)
    except ReportError as exc:
        click.echo(printable(f"nvcregen: {exc}"), err=True)
        sys.exit(ExitCode.INVALID)
    for line in found.lines:
        click.echo(printable(line))
    if found.path is not None:
        click.echo(f"wrote {found.path}")


@click.command()
@RESULTS
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "markdown"]),
    default="text",
    show_default=True,
    help="Output format.",
)
@click.option("--at", "sizes", multiple=True, metavar="SIZE", help="Only this size (repeatable).")
def history(results_dir: Path, fmt: str, sizes: tuple[str, ...]) -> None:
    """Median bus bandwidth run over run, regressions flagged: 0 none, 1 some, 2 refused."""
    from nvcregen.core.units import UnitError, parse_size
    from nvcregen.report.folder import ReportError
    from nvcregen.report.historyview import load_history, render_json, render_markdown, render_text

    try:
        at = [parse_size(s) for s in sizes]
    except UnitError as exc:
        raise click.BadParameter(exc.message, param_hint="--at") from exc
    try:
        loaded = load_history(results_dir, at)
    except ReportError as exc:
        click.echo(printable(f"nvcregen: {exc}"), err=True)
        sys.exit(ExitCode.INVALID)
    render = {"json": render_json, "markdown": render_markdown}.get(fmt, render_text)
    click.echo(printable(render(loaded)), nl=False)  # names and ids from the archives
    sys.exit(ExitCode.DRIFT if loaded.history.regressions else ExitCode.OK)


@click.group()
def export() -> None:
    """Export an archive's results for other tools."""


@export.command("metrics")
@click.argument(
    "results_dirs",
    metavar="RESULTS_DIR...",
    nargs=-1,
    required=True,
    type=click.Path(path_type=Path, file_okay=False, exists=True),
)
@click.option("--cluster", metavar="NAME", help="The `cluster` label (default: the site's).")
@click.option(
    "--out",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Write the OpenMetrics text here instead of standard output.",
)
def export_metrics(results_dirs: tuple[Path, ...], cluster: str | None, out: Path | None) -> None:
    """OpenMetrics text of runs of one site for `promtool tsdb create-blocks-from openmetrics`.

    Each RESULTS_DIR is a run (or a site folder: its newest run); several runs, the
    periods of `readiness.periodic` say, come out side by side, each at its own times.
    """
    from nvcregen.report.archive import read_archive
    from nvcregen.report.folder import ReportError, verified_run
    from nvcregen.report.metrics import Run, export_runs, time_line
    from nvcregen.results.attestation import signed_collection_time
    from nvcregen.retest.writer import site_cluster

    runs = []
    try:
        for results_dir in results_dirs:
            run = verified_run(results_dir).run
            archive = read_archive(run)
            when = signed_collection_time(run) or _collected(run)
            runs.append(Run(archive, cluster or site_cluster(archive, Path.cwd()), when))
        found = export_runs(runs)
    except ReportError as exc:
        click.echo(printable(f"nvcregen: {exc}"), err=True)
        sys.exit(ExitCode.INVALID)
    if not found.samples:
        rows = sum(len(r.archive.bandwidth) for r in runs)
        where = ", ".join(str(r.archive.path) for r in runs)
        click.echo(
            printable(
                f"nvcregen: nothing to export from {where}: no final NCCL bandwidth round"
                f" ({rows} bandwidth.csv rows, none final){'' if rows else ': no NCCL test ran'};"
                " nothing written"
            ),
            err=True,
        )
        sys.exit(ExitCode.INVALID)
    if out is None:
        click.echo(printable(found.text), nl=False)
        click.echo(f"nvcregen: {len(found.samples)} samples; {time_line(found)}", err=True)
    else:
        from nvcregen.core.atomicfile import FileWriteError, write_file

        try:
            write_file(out, found.text)
        except FileWriteError as exc:
            click.echo(printable(f"nvcregen: {exc}"), err=True)
            sys.exit(ExitCode.INVALID)
        click.echo(f"wrote {out}: {len(found.samples)} samples; {time_line(found)}", err=True)


def _collected(run: Path) -> str | None:
    """When SHA256SUMS was written, to the second: the unsigned archive's collection time."""
    from nvcregen.report.folder import collected_at

    stamp = collected_at(run)
    return f"{stamp[:19]}Z" if stamp else None
