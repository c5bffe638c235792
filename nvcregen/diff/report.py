"""`nvcregen diff`: compile the sites at a Git revision and in the working tree, and compare.

Both sides are compiled in memory with nvcregen's own (current) catalog; the base's site
files are exported from Git into a temporary folder outside the project (see
`nvcregen.gitrev`), so neither the working tree nor `out/` is touched.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from nvcregen.chain.pipeline import CompileResult, Options
from nvcregen.chain.sites import compile_sites, discover_sites
from nvcregen.core.errors import NvcregenError, Severity
from nvcregen.diff.domain import Facts, Summary, Tree, site_facts, summarize
from nvcregen.diff.objectdiff import ObjectDiff, diff_trees
from nvcregen.gitrev import export_sites

Status = Literal["added", "removed", "changed", "unchanged", "invalid"]
WORKING_TREE = "working tree"
MAX_ERRORS = 5  # per side of an invalid site; `nvcregen validate` shows them all


@dataclass(frozen=True)
class Side:
    """One site compiled on one side: its file and result (with the Plan it compiled)."""

    source: str
    result: CompileResult


@dataclass(frozen=True)
class SiteDiff:
    """What a change does to one site."""

    site: str
    status: Status
    base_file: str | None
    head_file: str | None
    summary: Summary = field(default_factory=Summary)
    objects: ObjectDiff = field(default_factory=ObjectDiff)
    errors: dict[str, tuple[str, ...]] = field(default_factory=dict)  # "base"/"head" -> errors


@dataclass(frozen=True)
class DiffReport:
    """Every site's diff between a revision and the working tree."""

    base: str
    commit: str
    sites: tuple[SiteDiff, ...]

    def count(self, status: Status) -> int:
        """How many sites have this status."""
        return sum(s.status == status for s in self.sites)


def diff_project(root: Path, base: str) -> DiffReport:
    """Compare the sites of revision `base` with those in the working tree at `root`.

    Raises:
        GitError: `root` is not in a Git repository, `base` names no commit, or git is
            missing (`nvcregen.gitrev`).
        NvcregenError: nvcregen's catalog is invalid.

    """
    with tempfile.TemporaryDirectory(prefix="nvcregen-diff-") as tmp:
        commit = export_sites(root, base, Path(tmp))
        before = compile_side(Path(tmp))
    after = compile_side(root)
    pairs = pair_sites(before, after)
    sites = tuple(site_diff(name, old, new) for name, old, new in pairs)
    return DiffReport(base, commit, sites)


def compile_side(root: Path) -> list[Side]:
    """Compile every site under `root/sites/` in memory (none: an empty side)."""
    if not discover_sites(root, []):
        return []
    results = compile_sites(root, [], Options(root=root))
    if any(r.source == "catalog" for r in results):
        raise NvcregenError([d for r in results for d in r.diagnostics])
    return [Side(r.source, r) for r in results]


def pair_sites(before: list[Side], after: list[Side]) -> list[tuple[str, Side | None, Side | None]]:
    """Match sites across the sides by name, else (a side that does not parse) by file."""
    old, new = _keyed(before), _keyed(after)
    pairs: list[tuple[str, Side | None, Side | None]]
    pairs = [(k, old.pop(k), new.pop(k)) for k in sorted(old.keys() & new.keys())]
    for key, side in list(new.items()):
        twin = next((k for k, s in old.items() if _twins(s, side)), None)
        if twin is not None:
            pairs.append((key if side.result.site else twin, old.pop(twin), new.pop(key)))
    pairs += [(key, None, side) for key, side in new.items()]
    pairs += [(key, side, None) for key, side in old.items()]
    return sorted(pairs, key=lambda pair: pair[0])


def _keyed(sides: list[Side]) -> dict[str, Side]:
    """Sides by site name; by file when there is no name or it is taken twice."""
    keyed: dict[str, Side] = {}
    for side in sides:
        key = side.result.site or side.source
        keyed[key if key not in keyed else side.source] = side
    return keyed


def _twins(old: Side, new: Side) -> bool:
    """The same file, one side without a name (it did not parse that far)."""
    nameless = old.result.site is None or new.result.site is None
    return old.source == new.source and nameless


def site_diff(name: str, old: Side | None, new: Side | None) -> SiteDiff:
    """The summary and object diff of one site (errors instead, when a side is invalid)."""
    files = (old.source if old else None, new.source if new else None)
    errors = {
        label: _errors(side.result)
        for label, side in (("base", old), ("head", new))
        if side is not None and side.result.tree is None
    }
    if errors:
        return SiteDiff(name, "invalid", *files, errors=errors)
    old_tree = old.result.tree if old and old.result.tree else {}
    new_tree = new.result.tree if new and new.result.tree else {}
    old_facts = _facts(old, old_tree)
    new_facts = _facts(new, new_tree)
    summary = summarize(old_facts, new_facts)
    objects = diff_trees(old_tree, new_tree)
    status: Status = "added" if old is None else "removed" if new is None else "changed"
    if status == "changed" and not objects and not summary.changed:
        status = "unchanged"
    return SiteDiff(name, status, *files, summary=summary, objects=objects)


def _facts(side: Side | None, tree: Tree) -> Facts | None:
    """A compiled side's facts, from the Plan its tree was compiled from (none: no side)."""
    if side is None or side.result.plan is None:
        return None
    return site_facts(side.result.plan, tree)


def _errors(result: CompileResult) -> tuple[str, ...]:
    found = [d for d in result.diagnostics if d.severity is Severity.ERROR]
    shown = tuple(f"{d.span}: {d.code}: {d.message}" for d in found[:MAX_ERRORS])
    more = len(found) - len(shown)
    return (*shown, f"... and {more} more (run nvcregen validate)") if more > 0 else shown


__all__ = ["WORKING_TREE", "DiffReport", "SiteDiff", "Status", "diff_project"]
