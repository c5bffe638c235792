"""What `nvcregen check` does, behind the CLI: set up, check the tree, say what was done."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from nvcregen.catalog.load import load_catalog
from nvcregen.core.errors import Diagnostic


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
    from nvcregen.check.server import server_check
    from nvcregen.check.tree import check_tree, shown_files
    from nvcregen.cluster import ClusterError
    from nvcregen.gitrev import BaseError, old_objects

    out = options.out_dir
    if not out.is_dir():
        raise CheckSetupError(f"{out.as_posix()}/ does not exist; run `nvcregen render`")
    try:
        server = server_check(options.context, options.kubeconfig) if options.context else None
        base = options.base
        old = old_objects(options.root, base, shown_files(out, options.root)) if base else {}
    except (ClusterError, BaseError) as exc:
        raise CheckSetupError(str(exc)) from exc
    diags = check_tree(
        out, options.root, load_catalog(), strict=options.strict, server=server, old=old
    )
    done = f"checked {out.as_posix()}/"
    if options.base:
        done += f" against {options.base} ({len(old)} earlier versions)"
    if options.context:
        done += f" and dry-ran it on context '{options.context}'"
    return diags, done
