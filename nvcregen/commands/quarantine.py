"""`nvcregen quarantine RESULTS_DIR`: label and taint the failed nodes of a verified run."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from nvcregen.commands.common import KUBECONFIG
from nvcregen.core.errors import ExitCode
from nvcregen.core.terminal import printable

if TYPE_CHECKING:
    from nvcregen.cluster.client import Cluster
    from nvcregen.quarantine.marks import Marks


@click.command()
@click.argument("results_dir", type=click.Path(path_type=Path, file_okay=False, exists=True))
@click.option("--apply", "apply_", is_flag=True, help="Write to the cluster (default: dry run).")
@click.option(
    "--release",
    is_flag=True,
    help="Take off what this run's quarantine set, from each node newer verified runs clear"
    " and passed on each test that failed it.",
)
@click.option(
    "--node",
    "nodes",
    multiple=True,
    metavar="NODE",
    help="With --release: only this node (repeatable).",
)
@click.option("--context", metavar="CTX", help="The kubeconfig context of the cluster.")
@click.option(
    "--site",
    type=click.Path(path_type=Path, dir_okay=False, exists=True),
    help="The site file the run was judged against (default: as provenance.json names it).",
)
@KUBECONFIG
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "patch"]),
    default="text",
    show_default=True,
    help="Output format; `patch`: each node read (--context) and its server-side apply "
    "printed as YAML for `kubectl apply --server-side --field-manager=nvcregen -f -`.",
)
def quarantine(
    results_dir: Path,
    apply_: bool,
    release: bool,
    nodes: tuple[str, ...],
    context: str | None,
    site: Path | None,
    kubeconfig: Path | None,
    fmt: str,
) -> None:
    """Label and taint (NoSchedule) a verified run's failed nodes: 0 done, 1 not all, 2 refused.

    A dry run prints what would be set. `--apply --context CTX` sets it with server-side
    apply (field manager `nvcregen`); `--release` takes off exactly what this run set, and
    only from a node that newer verified runs of the site (a period, a one-shot run)
    clear and passed on each test that failed it; any other is refused, with the evidence
    it lacks (exit 1). `--node NODE` releases only the nodes named.
    Only nodes the site's pools name are touched (the site the run was judged against,
    `--site`): any other name is refused, and named, before any request (exit 1).
    `--format patch --context CTX` reads each node and prints the applies instead, for
    `kubectl apply --server-side --field-manager=nvcregen -f -` (each with the node's
    taints as read: `spec.taints` is an atomic list).
    """
    from nvcregen.quarantine.apply import FINE, apply_marks
    from nvcregen.quarantine.evidence import gate_release, newer_runs
    from nvcregen.quarantine.marks import marks_of
    from nvcregen.quarantine.view import as_json, as_text
    from nvcregen.report.archive import read_archive
    from nvcregen.report.folder import ReportError, verified_run
    from nvcregen.report.judgedsite import judged_site, site_path

    _check_options(apply_, context, kubeconfig, fmt)
    if nodes and not release:
        raise click.UsageError("--node names a node to release: it needs --release")
    try:
        located = verified_run(results_dir).run
        archive = read_archive(located)
        marks = marks_of(archive, judged_site(archive, site_path(archive, site, Path.cwd())))
        if release:
            own = archive.summary.site, archive.provenance.site.sha256
            asked = frozenset(m.node for m in marks.marks)
            marks = gate_release(marks, newer_runs(located, *own, asked), nodes)
    except ReportError as exc:
        click.echo(printable(f"nvcregen: {exc}"), err=True)
        sys.exit(ExitCode.INVALID)
    if fmt == "patch":
        _print_patches(marks, context, kubeconfig, release=release)
        return
    outcomes = None
    if apply_ and marks.marks:
        outcomes = apply_marks(_connected(context, kubeconfig), marks, release=release)
    if fmt == "json":
        click.echo(as_json(marks, outcomes, release=release))
    else:
        for line in as_text(marks, outcomes, release=release):
            click.echo(line)
    if outcomes is not None and any(o.action not in FINE for o in outcomes):
        sys.exit(ExitCode.DRIFT)  # 1: some node is not as asked (printed above)
    if marks.refused:
        sys.exit(ExitCode.DRIFT)  # 1: names refused (printed above), nothing sent for them


def _connected(context: str | None, kubeconfig: Path | None) -> Cluster:
    """The cluster client for `context`; exit 2 when it cannot be made."""
    from nvcregen.cluster.client import ClusterError, connect

    try:
        return connect(context, kubeconfig)
    except ClusterError as exc:
        click.echo(f"nvcregen: {exc}", err=True)
        sys.exit(ExitCode.INVALID)


def _check_options(apply_: bool, context: str | None, kubeconfig: Path | None, fmt: str) -> None:
    """Usage errors (exit 2): writing or reading nodes needs a context."""
    if apply_ and context is None:
        raise click.UsageError("--apply writes to a cluster: it needs --context CTX")
    if fmt == "patch" and apply_:
        raise click.UsageError("--format patch prints the applies instead of sending them")
    if fmt == "patch" and context is None:
        raise click.UsageError(
            "--format patch reads each node: it needs --context CTX (spec.taints is an "
            "atomic list, so a patch carries the node's taints as read)"
        )
    if kubeconfig is not None and context is None:
        raise click.UsageError("--kubeconfig needs --context CTX")


def _print_patches(
    marks: Marks, context: str | None, kubeconfig: Path | None, *, release: bool
) -> None:
    """`--format patch`: read each node, print its apply; exit 1 where one has none."""
    from nvcregen.quarantine.patch import as_patch, node_patches

    patches = []
    if marks.marks:
        patches = node_patches(_connected(context, kubeconfig), marks, release=release)
    click.echo(as_patch(marks, patches, release=release), nl=False)
    if any(p.failed for p in patches) or marks.refused:
        sys.exit(ExitCode.DRIFT)  # 1: some node has no patch (said in the header)
