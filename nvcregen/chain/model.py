"""What the chain takes and gives: the tool's options and one site's compile result.

Kept apart from `pipeline.py` so that `render --check` with every site cached can report
its outcome without importing the compiler.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from nvcregen.core.errors import Diagnostic, Span

if TYPE_CHECKING:
    from nvcregen.emit.tree import Tree


@dataclass(frozen=True)
class Options:
    """The tool's own options; everything else belongs in the site file.

    Attributes:
        strict: Tag-only images are errors, not warnings.
        root: The project folder; a site's `nvcre.chart.archive` is relative to it.

    """

    strict: bool = False
    root: Path = Path()


@dataclass(frozen=True)
class CompileResult:
    """What compiling one site produced: a tree (None on errors) and every diagnostic."""

    source: str
    site: str | None = None
    tree: Tree | None = None
    diagnostics: list[Diagnostic] = field(default_factory=list)
    name_span: Span | None = None
