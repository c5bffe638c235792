"""Act on a project folder: find its sites, compile them all, render or check `out/`.

The compiler, the catalog and the writer are imported when first needed: a
`render --check` that finds every site fresh (`emit/cache.py`) loads none of them.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from nvcregen.chain.model import DEFAULT_OUT, CompileResult, Options
from nvcregen.core import codes
from nvcregen.core.errors import Diagnostic, NvcregenError, Severity, Span, has_errors
from nvcregen.core.heap import collection_paused
from nvcregen.emit.cache import fresh_sites, site_data
from nvcregen.emit.naming import project_path

if TYPE_CHECKING:
    from nvcregen.catalog.load import Catalog
    from nvcregen.check.findings import Finding
    from nvcregen.emit.writer import Drift

SITES_DIR = "sites"


@dataclass(frozen=True)
class RenderOutcome:
    """What a render (or render --check) did."""

    results: list[CompileResult]
    diagnostics: list[Diagnostic]
    written: list[str] = field(default_factory=list)
    drift: list[Drift] = field(default_factory=list)
    cached: list[str] = field(default_factory=list)  # sites --check found fresh uncompiled


def display_path(path: Path, root: Path) -> str:
    """Name a file as users see it: relative to the project root, '/'-separated.

    Files outside the root are named by their file name only, so no absolute path of
    the build machine ever reaches the output.
    """
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return path.name


def site_root(path: Path, root: Path) -> Path:
    """The project a site file belongs to, found from the file alone.

    The nearest folder at or above the file that holds a `sites/` folder (the project
    root, so `sites/x.yaml` is named `sites/x.yaml` from wherever nvcregen runs), else
    `root` when the file is inside it, else the file's own folder. Names in generated
    files and the chart archive path are relative to it, so the output never depends
    on the working directory.
    """
    resolved = path.resolve()
    for folder in resolved.parents:
        if (folder / SITES_DIR).is_dir():
            return folder
    try:
        resolved.relative_to(root.resolve())
    except ValueError:
        return resolved.parent
    return root


def _in_repository(project: Path, inside: str | None) -> str | None:
    """`inside` as the project's Git repository names it (one `git` run); None kept.

    Git (and with it YAML) is imported only when asked.
    """
    if inside is None:
        return None
    from nvcregen.gitrev import in_repository, repository_prefix

    return in_repository(repository_prefix(project), inside)


def discover_sites(root: Path, given: list[Path]) -> list[Path]:
    """Return the site files to act on: those given, else every `sites/*.yaml`."""
    if given:
        return given
    return sorted([*(root / SITES_DIR).glob("*.yaml"), *(root / SITES_DIR).glob("*.yml")])


def compile_site(path: Path, display: str, catalog: Catalog, options: Options) -> CompileResult:
    """Compile one site file (`pipeline.compile_site`, the compiler imported on first use).

    The cyclic garbage collector is paused meanwhile (the command line pauses it for
    the whole command): every object of the site lives until its tree is built.
    """
    from nvcregen.chain.pipeline import compile_site as compile_one

    with collection_paused():
        return compile_one(path, display, catalog, options)


def compile_sites(
    root: Path, given: list[Path], options: Options, out_dir: Path | None = None
) -> list[CompileResult]:
    """Compile every site; a broken catalog or no sites at all is an error result.

    With `out_dir` (render), each site's GitOps objects name that folder's path inside
    the site's project; without it, `options.out_path` as given.
    """
    paths = discover_sites(root, given)
    if not paths:
        where = Span(f"{SITES_DIR}/")
        return [
            CompileResult(
                SITES_DIR,
                diagnostics=[
                    Diagnostic(
                        where,
                        Severity.ERROR,
                        codes.NVC100.code,
                        "no site files found",
                        hint="add sites/<name>.yaml, or name the site files to use",
                    )
                ],
            )
        ]
    from nvcregen.catalog.load import load_catalog

    try:
        catalog = load_catalog()
    except NvcregenError as exc:
        return [CompileResult("catalog", diagnostics=exc.diagnostics)]
    results = []
    mates = _cluster_mates(paths, root) if given else []
    out_paths: dict[Path, tuple[str | None, str]] = {}  # per project: one `git` run each
    for path in [*paths, *mates]:
        project = site_root(path, root)
        if project not in out_paths:
            inside = options.out_path if out_dir is None else project_path(out_dir, project)
            # a preview outside the project: its GitOps objects name the committed folder
            committed = _in_repository(project, DEFAULT_OUT) if inside is None else None
            out_paths[project] = (_in_repository(project, inside), committed or DEFAULT_OUT)
        out_path, committed_out = out_paths[project]
        here = Options(
            options.strict, project, out_path, out_dir is not None, committed_out=committed_out
        )
        results.append(compile_site(path, display_path(path, project), catalog, here))
    checked = _check_shared_clusters(_check_unique_names(results))
    return checked[: len(paths)]  # the mates were compiled only to be checked against


def _cluster_mates(given: list[Path], root: Path) -> list[Path]:
    """The other sites of the given sites' projects that name one of their clusters.

    Rendering some sites of a project still checks them against the sites they share a
    cluster with (NVC690); those are compiled, not written.
    """
    clusters = {_cluster_of(p) for p in given} - {None}
    chosen = {p.resolve() for p in given}
    projects = sorted({site_root(p, root) for p in given})
    return [
        other
        for project in projects
        for other in discover_sites(project, [])
        if other.resolve() not in chosen and _cluster_of(other) in clusters
    ]


def _check_shared_clusters(results: list[CompileResult]) -> list[CompileResult]:
    """NVC690: sites that name one cluster generate no object (or Helm release) twice."""
    from nvcregen.check.collisions import SiteObjects, check_collisions

    sites = [
        SiteObjects(r.site, r.cluster, r.objects)
        for r in results
        if r.site and r.cluster and r.tree is not None
    ]
    found: dict[str, list[Diagnostic]] = {}
    for site, file, finding in check_collisions(sites):
        found.setdefault(site, []).append(_collision(site, file, finding, results))
    return [
        replace(r, tree=None, diagnostics=[*r.diagnostics, *found[r.site]])
        if r.site in found
        else r
        for r in results
    ]


def _collision(site: str, file: str, finding: Finding, results: list[CompileResult]) -> Diagnostic:
    result = next(r for r in results if r.site == site)
    return Diagnostic(
        result.cluster_span or Span(result.source),
        Severity.ERROR,
        finding.code,
        f"generated {file}: {finding.message}",
        "/spec/cluster",
        finding.hint,
    )


def _check_unique_names(results: list[CompileResult]) -> list[CompileResult]:
    seen: dict[str, str] = {}
    checked = []
    for result in results:
        if result.site and result.tree is not None and result.site in seen:
            diag = Diagnostic(
                result.name_span or Span(result.source),
                Severity.ERROR,
                codes.NVC503.code,
                f"site name '{result.site}' is also used by {seen[result.site]}",
                "/metadata/name",
                "each site needs its own metadata.name",
            )
            checked.append(
                CompileResult(result.source, result.site, None, [*result.diagnostics, diag])
            )
            continue
        if result.site:
            seen[result.site] = result.source
        checked.append(result)
    return checked


def render(
    root: Path,
    given: list[Path],
    out_dir: Path,
    options: Options,
    *,
    check: bool,
    cache: bool = True,
) -> RenderOutcome:
    """Compile all sites; unless every one is valid, write nothing.

    With `check`, compare with `out_dir` in memory and report drift instead of writing;
    with `cache` too, sites whose inputs and files match their index are not compiled
    (`emit/cache.py`).
    """
    if check and cache:
        return _check_cached(root, given, out_dir, options)
    from nvcregen.emit.writer import diff_tree, write_trees

    results = compile_sites(root, given, options, out_dir)
    diags = [d for r in results for d in r.diagnostics]
    if has_errors(diags):
        return RenderOutcome(results, diags)
    trees = {r.site: r.tree for r in results if r.site and r.tree is not None}
    if check:
        drift = [d for site, tree in trees.items() for d in diff_tree(out_dir, site, tree)]
        return RenderOutcome(results, diags, drift=drift)
    done = write_trees(out_dir, trees)  # locked; ownership of every folder checked first
    return RenderOutcome(results, diags + done.diagnostics, written=done.written)


def _check_cached(root: Path, given: list[Path], out_dir: Path, options: Options) -> RenderOutcome:
    """`render --check`, compiling only the sites whose folders are not provably fresh.

    The cache key holds a site's inputs and the repository folder its GitOps paths name.
    Sites that name one cluster are always compiled, all of them, so NVC690 compares
    them; stale sites are compiled alone unless one reuses a fresh site's name (NVC503).
    """
    paths = discover_sites(root, given)
    projects = {p: site_root(p, root) for p in paths}
    shown = {display_path(p, projects[p]): p for p in paths}
    clusters = [c for c in map(_cluster_of, paths) if c is not None]
    shared = len(set(clusters)) < len(clusters)  # NVC690 compares them: compile them all
    if len(shown) < len(paths) or not paths or shared:
        return render(root, given, out_dir, options, check=True, cache=False)
    fresh: dict[str, str] = {}
    for project in set(projects.values()):
        mine = {name: p for name, p in shown.items() if projects[p] == project}
        inside = project_path(out_dir, project)
        # a preview outside the project names the committed folder, as compile_sites does
        out_path = _in_repository(project, DEFAULT_OUT if inside is None else inside)
        fresh |= fresh_sites(out_dir, mine, project, strict=options.strict, out_path=out_path)
    stale = [p for s, p in shown.items() if s not in fresh]
    outcome = render(root, stale, out_dir, options, check=True, cache=False) if stale else None
    if outcome is None:
        return RenderOutcome([], [], cached=sorted(fresh.values()))
    if any(r.site in fresh.values() for r in outcome.results):  # a new file reuses a name
        return render(root, given, out_dir, options, check=True, cache=False)
    return RenderOutcome(
        outcome.results, outcome.diagnostics, drift=outcome.drift, cached=sorted(fresh.values())
    )


def _cluster_of(path: Path) -> str | None:
    """A site's `spec.cluster`, read without compiling it (None when it cannot be read)."""
    data = site_data(path)
    spec = data.get("spec") if isinstance(data, dict) else None
    cluster = spec.get("cluster") if isinstance(spec, dict) else None
    return cluster if isinstance(cluster, str) else None
