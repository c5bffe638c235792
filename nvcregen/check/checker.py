"""What `nvcregen check` does, behind the CLI: set up, check the tree, say what was done."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from nvcregen.core.errors import Diagnostic

if TYPE_CHECKING:
    from nvcregen.check.server import ServerCheck


class CheckSetupError(Exception):
    """The check cannot start: no tree, no cluster, no base revision."""


@dataclass(frozen=True)
class CheckOptions:
    """`nvcregen check`'s options, as a plain object tests can build."""

    out_dir: Path
    root: Path
    strict: bool = False
    context: str | None = None
    kubeconfig: Path | None = None
    base: str | None = None


def run_check(options: CheckOptions) -> tuple[list[Diagnostic], str]:
    """Check a rendered tree; return the diagnostics and a summary of what was done.

    Raises:
        CheckSetupError: the tree is missing, the cluster or the base revision unreadable.

    """
    from nvcregen.check.tree import check_tree, shown_files
    from nvcregen.gitrev import GitError, old_objects

    out = options.out_dir
    if not out.is_dir():
        raise CheckSetupError(f"{out.as_posix()}/ does not exist; run `nvcregen render`")
    server = _server(options.context, options.kubeconfig) if options.context else None
    try:
        old = {}
        if options.base:  # only a base revision needs the files listed before the check
            old = old_objects(options.root, options.base, shown_files(out, options.root))
    except GitError as exc:
        raise CheckSetupError(str(exc)) from exc
    # the shipped catalog, read while the workers start on the files
    diags = check_tree(out, options.root, strict=options.strict, server=server, old=old)
    if options.context:  # the live nodes against each site's inventory
        diags += _drift(out, options)
    done = f"checked {out.as_posix()}/"
    if options.base:
        done += f" against {options.base} ({len(old)} earlier versions)"
    if options.context:
        done += f" and dry-ran it on context '{options.context}'"
    return diags, done


def _server(context: str, kubeconfig: Path | None) -> ServerCheck:
    """The dry run on a cluster (its client imported only for `--context`)."""
    from nvcregen.check.server import server_check
    from nvcregen.cluster import ClusterError

    try:
        return server_check(context, kubeconfig)
    except ClusterError as exc:
        raise CheckSetupError(str(exc)) from exc


def _drift(out: Path, options: CheckOptions) -> list[Diagnostic]:
    """NVC770-NVC773: the live nodes against the inventories the tree's sites name."""
    from nvcregen.check.inventory import tree_drift
    from nvcregen.cluster import ClusterError, connect

    try:
        cluster = connect(options.context, options.kubeconfig)
    except ClusterError as exc:
        raise CheckSetupError(str(exc)) from exc
    return tree_drift(out, options.root, cluster)
