"""What the chain takes and gives: the tool's options and one site's compile result.

Kept apart from `pipeline.py` so that `render --check` with every site cached can report
its outcome without importing the compiler.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from nvcregen.core.errors import Diagnostic, Span

DEFAULT_OUT = "out"
"""`render`'s output folder, inside the project, when `--out` names none."""

if TYPE_CHECKING:
    from nvcregen.check.crossref import Located
    from nvcregen.emit.tree import Tree
    from nvcregen.plan.resolved import Plan


@dataclass(frozen=True)
class Options:
    """The tool's own options; everything else belongs in the site file.

    Attributes:
        strict: Tag-only images, example digests and charts without digests are errors,
            not warnings.
        root: The project folder; a site's `nvcre.chart.archive` is relative to it.
        out_path: The output folder's path inside the project (`out`), which GitOps
            objects read `<out_path>/<site>/` from unless a site names its `gitops.path`;
            None when the output folder is outside the project.
        rendering: Whether the tree is written to `out_path` (render, render --check):
            only then does a `gitops.path` naming another folder deserve a warning.
        committed_out: Where a site without `gitops.path` is committed (the project's
            `out`, as its Git repository names it): what the GitOps objects of a preview
            outside the project (`out_path` None) point at.

    """

    strict: bool = False
    root: Path = Path()
    out_path: str | None = DEFAULT_OUT
    rendering: bool = False
    committed_out: str = DEFAULT_OUT


@dataclass(frozen=True)
class CompileResult:
    """What compiling one site produced: a tree (None on errors) and every diagnostic.

    `cluster`, `cluster_span` and `objects` (each object at its path in the tree) let the
    multi-site driver check sites that share a cluster against each other (NVC690).
    `plan` is the Plan the tree was compiled from (None without a tree): `diff` reads its
    facts from it instead of planning the site again.
    """

    source: str
    site: str | None = None
    tree: Tree | None = None
    diagnostics: list[Diagnostic] = field(default_factory=list)
    name_span: Span | None = None
    cluster: str | None = None
    cluster_span: Span | None = None
    objects: tuple[Located, ...] = ()
    plan: Plan | None = None
