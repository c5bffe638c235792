"""`nvcregen quarantine RESULTS_DIR`: label and taint the failed nodes of a verified run."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from nvcregen.commands.common import KUBECONFIG
from nvcregen.core.errors import ExitCode


@click.command()
@click.argument("results_dir", type=click.Path(path_type=Path, file_okay=False, exists=True))
@click.option("--apply", "apply_", is_flag=True, help="Write to the cluster (default: dry run).")
@click.option("--release", is_flag=True, help="Take off what this run's quarantine set.")
@click.option("--context", metavar="CTX", help="The kubeconfig context of the cluster.")
@KUBECONFIG
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="Output format.",
)
def quarantine(
    results_dir: Path,
    apply_: bool,
    release: bool,
    context: str | None,
    kubeconfig: Path | None,
    fmt: str,
) -> None:
    """Label and taint (NoSchedule) a verified run's failed nodes: 0 done, 1 not all, 2 refused.

    A dry run prints what would be set. `--apply --context CTX` sets it with server-side
    apply (field manager `nvcregen`); `--release` takes off exactly what this run set.
    """
    from nvcregen.cluster.client import ClusterError, connect
    from nvcregen.quarantine.apply import FINE, apply_marks
    from nvcregen.quarantine.marks import marks_of
    from nvcregen.quarantine.view import as_json, as_text
    from nvcregen.report.archive import read_archive
    from nvcregen.report.folder import ReportError, verified_run

    if apply_ and context is None:
        raise click.UsageError("--apply writes to a cluster: it needs --context CTX")
    if kubeconfig is not None and context is None:
        raise click.UsageError("--kubeconfig needs --context CTX")
    try:
        marks = marks_of(read_archive(verified_run(results_dir).run))
    except ReportError as exc:
        click.echo(f"nvcregen: {exc}", err=True)
        sys.exit(ExitCode.INVALID)
    outcomes = None
    if apply_ and marks.marks:
        try:
            cluster = connect(context, kubeconfig)
        except ClusterError as exc:
            click.echo(f"nvcregen: {exc}", err=True)
            sys.exit(ExitCode.INVALID)
        outcomes = apply_marks(cluster, marks, release=release)
    if fmt == "json":
        click.echo(as_json(marks, outcomes, release=release))
    else:
        for line in as_text(marks, outcomes, release=release):
            click.echo(line)
    if outcomes is not None and any(o.action not in FINE for o in outcomes):
        sys.exit(ExitCode.DRIFT)  # 1: some node is not as asked (printed above)
