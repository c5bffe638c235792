"""`nvcregen check`: validate a rendered output tree offline, file by file and as a whole."""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nvcregen.check.admission import RUN_LAYERS, admission_findings
from nvcregen.check.affinity import affinity_findings
from nvcregen.check.collisions import SiteObjects, check_collisions
from nvcregen.check.crossref import (
    Located,
    PoolCounts,
    check_counts,
    check_identities,
    check_log_profiles,
    check_prebuilt_workloads,
    stage_counts,
    stage_of,
)
from nvcregen.check.findings import Finding
from nvcregen.check.parallel import (
    FileJob,
    iter_check_files,
    not_object,
)
from nvcregen.check.pods import check_pod_security, request_findings
from nvcregen.check.reader import GeneratedFile
from nvcregen.check.webhooks import check_runtimes
from nvcregen.core import codes
from nvcregen.core.errors import Diagnostic, Severity, Span
from nvcregen.core.heap import collection_paused
from nvcregen.core.kube import KUBE_VERSION_PATTERN
from nvcregen.core.regular import not_regular, read_regular
from nvcregen.emit.faults import not_regular_file
from nvcregen.emit.naming import INDEX_FILE, project_path
from nvcregen.gitrev import in_repository, repository_prefix
from nvcregen.kubeschema.registry import DEFAULT_KUBE_VERSION
from nvcregen.spec.bounded import RefusedInputError, load_json
from nvcregen.spec.fast import fast_document
from nvcregen.spec.positions import Document

if TYPE_CHECKING:  # imported where used: a check's workers start before these are
    from nvcregen.catalog.load import Catalog
    from nvcregen.plan.resolved import Plan
    from nvcregen.spec.v1alpha1 import Site

# out/<site>/preview/ shows what NVCRE will create: checked, but never applied (not even
# by a server dry-run: NVCRE, not the user, creates those objects).
PREVIEW_DIR = "preview"


@dataclass(frozen=True)
class SiteFacts:
    """A site folder's site as `check` reads it, and its Plan while the site still plans.

    The site names its cluster (sites naming one cluster are checked against each other:
    NVC690); the plan gives each stage's pool counts (NVC631) and the replay's facts.
    """

    site: Site
    plan: Plan | None = None

    @cached_property
    def stage_pools(self) -> dict[str, PoolCounts]:
        """The counts of each stage's pool, per stage name (none without a plan)."""
        return stage_counts(self.plan.units) if self.plan is not None else {}


@dataclass(frozen=True)
class TreeFile:
    """A generated file, its object, and what the site's index says about it."""

    file: GeneratedFile
    located: Located
    origin: str | None
    site_dir: Path | None
    findings: list[Finding] = field(default_factory=list)


def check_tree(
    out_dir: Path,
    root: Path,
    catalog: Catalog | None = None,
    *,
    strict: bool = False,
    server: Callable[[list[Located]], list[tuple[str, Finding]]] | None = None,
    old: Mapping[str, Any] | None = None,
) -> list[Diagnostic]:
    """Check every YAML file under `out_dir`; report at the generated file's lines.

    `catalog` defaults to the shipped one, read (with the site and catalog models it
    needs) while the workers start on the files.

    Each diagnostic also names the site line the object came from (via `index.json`),
    so a reviewer can jump from a bad object to the plan that produced it. `server`,
    when given (see `nvcregen.check.server`), also dry-runs the objects on a cluster,
    except the preview (`out/<site>/preview/`), which no one applies.
    `old` maps a file (as shown) to its previous object, for CEL transition rules;
    files without one are checked as creates.
    """
    with collection_paused():
        return _check_tree(out_dir, root, catalog, strict, server, old or {})


def _check_tree(
    out_dir: Path,
    root: Path,
    catalog: Catalog | None,
    strict: bool,
    server: Callable[[list[Located]], list[tuple[str, Finding]]] | None,
    old: Mapping[str, Any],
) -> list[Diagnostic]:
    known = functools.cache(lambda: catalog if catalog is not None else _shipped_catalog())
    files, diags, facts, replayed = _read_tree(out_dir, root, known, strict, old)
    from nvcregen.check.engineparts import Layered, engine_findings  # after the workers started

    by_path = {f.located.file: f for f in files}
    found = [(f.located.file, finding) for f in files for finding in f.findings]
    objects = [f.located for f in files]
    found += list(check_log_profiles(objects)) + list(check_runtimes(objects))
    found += list(check_prebuilt_workloads(objects))
    if server is not None:
        found += server([f.located for f in files if not is_preview(f)])
    by_site: dict[Path | None, list[TreeFile]] = {}
    for file in files:
        by_site.setdefault(file.site_dir, []).append(file)
    for site_files in by_site.values():
        # Each site is its own cluster: names only need to be unique within one.
        found += list(check_identities([f.located for f in site_files]))
        found += list(check_pod_security(f.located for f in site_files))
        layered = [Layered(_layer(f) or "", f.located) for f in site_files]
        found += list(engine_findings(layered, known().charts))  # Argo CD's projects
    found += _collisions(by_site, facts)
    found += replayed
    diags += [_diagnostic(by_path[path], finding) for path, finding in found]
    return sorted(set(diags), key=Diagnostic.sort_key)


def _collisions(
    by_site: Mapping[Path | None, list[TreeFile]], facts: Mapping[Path, SiteFacts | None]
) -> list[tuple[str, Finding]]:
    """NVC690 across the site folders whose sites name one cluster."""
    sites = []
    for site_dir, site_files in by_site.items():
        site = facts.get(site_dir) if site_dir is not None else None
        if site is not None and site.site.spec.cluster:
            objects = tuple(f.located for f in site_files if not is_preview(f))
            named = site.site
            sites.append(SiteObjects(named.metadata.name, named.spec.cluster, objects))
    return [(file, finding) for _, file, finding in check_collisions(sites)]


def _read_tree(
    out_dir: Path,
    root: Path,
    catalog: Callable[[], Catalog],
    strict: bool,
    old: Mapping[str, Any],
) -> tuple[
    list[TreeFile], list[Diagnostic], dict[Path, SiteFacts | None], list[tuple[str, Finding]]
]:
    """Read and check every object of the tree; what is not an object is a diagnostic.

    Also returns what each site folder's site says (None where it cannot be loaded) and
    the replay of each site folder. The workers start on the files with the Kubernetes
    version each site declares; the sites are loaded while they work, and each site
    folder is replayed as soon as its last file is in.
    """
    listed, diags = _regular_files(_tree_files(out_dir, root))
    base = _shown(out_dir, root)  # an index.json that is a FIFO is never read either
    index_files = [(p, f"{base}/{'/'.join(_below(p, out_dir))}") for p in out_dir.rglob(INDEX_FILE)]
    diags += _regular_files(sorted(index_files))[1]
    site_dirs: dict[Path, Path | None] = {}
    where = [_site_dir(path.parent, site_dirs) for path, _ in listed]
    read = {d: _index(d, root) for d in set(where) if d is not None}
    indexes = {d: index for d, (index, _) in read.items()}
    documents = {d: _site_document(index, root) for d, index in indexes.items()}
    declared = {d: _declared_version(doc) for d, doc in documents.items()}
    jobs = [
        FileJob(
            path,
            declared.get(d, DEFAULT_KUBE_VERSION) if d else DEFAULT_KUBE_VERSION,
            strict,
            old.get(shown),
        )
        for (path, shown), d in zip(listed, where, strict=True)
    ]
    facts: dict[Path, SiteFacts | None] = {}

    def load_sites() -> None:  # while the workers read the files
        prefix = repository_prefix(root) if indexes else ""  # one `git` run for every site
        for d, doc in documents.items():
            facts[d] = _site_facts(doc, root, catalog(), d, prefix)

    files: list[TreeFile] = []
    diags += [problem for _, problem in read.values() if problem is not None]
    left = Counter(where)  # files not yet read, per site folder
    of_site: dict[Path, list[TreeFile]] = {}
    replayed: list[tuple[str, Finding]] = []
    results = iter_check_files(jobs, meanwhile=load_sites)
    for (path, shown), site_dir, result in zip(listed, where, results, strict=True):
        site = facts.get(site_dir) if site_dir else None
        generated = GeneratedFile(path, shown)
        if result.data is None:  # libyaml could not read it: a limit, or the careful loader
            diags += _unreadable(generated)
        elif (why := not_object(result.data)) is not None:
            diags.append(_not_object(shown, why))
        else:
            origin = _origin(path, site_dir, indexes[site_dir]) if site_dir else None
            file = TreeFile(generated, Located(shown, result.data), origin, site_dir)
            counts = list(_counts(file, site)) if site is not None else []
            if _layer(file) in RUN_LAYERS:
                counts += admission_findings(result.data) + request_findings(result.data)
                counts += affinity_findings(result.data)
            files.append(replace(file, findings=[*result.findings, *counts]))
            if site_dir is not None:
                of_site.setdefault(site_dir, []).append(files[-1])
        left[site_dir] -= 1
        if site_dir is not None and not left[site_dir]:
            replayed += _replayed(site_dir, of_site.pop(site_dir, []), site)
    return files, diags, facts, replayed


def _replayed(
    site_dir: Path, site_files: list[TreeFile], site: SiteFacts | None
) -> list[tuple[str, Finding]]:
    """Replay a site folder whose site loads (docs/design/0008-replay.md)."""
    from nvcregen.check.replayed import replay_files

    if site is None or site.plan is None:
        return []
    mine = [
        (f.located.file, "/".join(_below(f.file.path, site_dir)), f.located.obj) for f in site_files
    ]
    return replay_files(mine, site.plan.facts)


def is_preview(file: TreeFile) -> bool:
    """Whether a file is in its site's `preview/` folder, outside the apply set."""
    return _layer(file) == PREVIEW_DIR


def _layer(file: TreeFile) -> str | None:
    """The output layer (first folder under the site's) a file is in; None outside a site."""
    if file.site_dir is None:
        return None
    return _below(file.file.path, file.site_dir)[0]


def _tree_files(out_dir: Path, root: Path) -> list[tuple[Path, str]]:
    """Every YAML file under `out_dir` (hidden folders skipped), with its shown name."""
    base = _shown(out_dir, root)
    found = []
    for path in sorted(out_dir.rglob("*.yaml")):
        relative = _below(path, out_dir)
        if not any(part.startswith(".") for part in relative):
            found.append((path, f"{base}/{'/'.join(relative)}"))
    return found


def _regular_files(
    listed: list[tuple[Path, str]],
) -> tuple[list[tuple[Path, str]], list[Diagnostic]]:
    """The listed files that are regular files; NVC511 for a FIFO, socket or device.

    Reading a FIFO waits for a writer forever: such a file is reported, never opened.
    """
    kept, diags = [], []
    for path, shown in listed:
        try:
            kind = not_regular(path)
        except OSError:  # vanished or unreadable: reading it says so
            kind = None
        if kind in {None, "folder"}:  # a folder named *.yaml is read (and reported) as before
            kept.append((path, shown))
        else:
            diags.append(not_regular_file(shown, str(kind), "nvcregen check does not read it"))
    return kept, diags


def _below(path: Path, folder: Path) -> tuple[str, ...]:
    """`path.relative_to(folder).parts` for a path under `folder`, without new Paths."""
    return path.parts[len(folder.parts) :]


def _site_dir(folder: Path, known: dict[Path, Path | None]) -> Path | None:
    """The nearest folder at or above `folder` holding an index.json (cached per folder)."""
    if folder not in known:
        has_index = (folder / INDEX_FILE).is_file()
        parent = folder.parent
        known[folder] = (
            folder if has_index else (None if parent == folder else _site_dir(parent, known))
        )
    return known[folder]


def _unreadable(generated: GeneratedFile) -> list[Diagnostic]:
    """Why a file is not YAML nvcregen reads: a limit (NVC605/NVC606) or the syntax."""
    limit = generated.limit
    if limit is None:
        return generated.loaded[1] or [_not_object(generated.shown, "not valid YAML")]
    span = Span(generated.shown, limit.line, limit.column) if limit.line else Span(generated.shown)
    hint = "nvcregen never writes this: render the site again (nvcregen render)"
    return [Diagnostic(span, Severity.ERROR, limit.code, limit.message, hint=hint)]


def _not_object(shown: str, message: str) -> Diagnostic:
    return Diagnostic(Span(shown), Severity.ERROR, codes.NVC600.code, message)


def _shown(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return path.as_posix()


def _index(site_dir: Path, root: Path) -> tuple[dict[str, Any], Diagnostic | None]:
    """A site folder's index.json, or why it cannot be read (NVC605-608 at the file)."""
    path = site_dir / INDEX_FILE
    span = Span(_shown(path, root))
    hint = "nvcregen writes index.json: render the site again (nvcregen render)"
    try:
        data = load_json(read_regular(path))
    except RefusedInputError as exc:
        return {}, Diagnostic(span, Severity.ERROR, exc.code, exc.message, hint=hint)
    except (OSError, ValueError) as exc:  # UnicodeDecodeError and JSONDecodeError included
        why = exc.strerror if isinstance(exc, OSError) else "not JSON"
        return {}, Diagnostic(
            span, Severity.ERROR, codes.NVC608.code, f"cannot read index.json: {why}", hint=hint
        )
    if not isinstance(data, dict):
        return {}, Diagnostic(
            span, Severity.ERROR, codes.NVC608.code, "index.json is not a JSON object", hint=hint
        )
    return data, None


def _origin(path: Path, site_dir: Path, index: Mapping[str, Any]) -> str | None:
    """`sites/x.yaml:41` for a generated file, from its site's index."""
    entry = index.get("files", {}).get("/".join(_below(path, site_dir)))
    source = index.get("source", {}).get("file")
    if not isinstance(entry, dict) or not source:
        return None
    return f"{source}:{entry['source']['line']} ({entry['source']['pointer']})"


def _counts(file: TreeFile, site: SiteFacts) -> Iterator[Finding]:
    pool = site.stage_pools.get(stage_of(file.located.obj) or "")
    return check_counts(file.located, pool) if pool is not None else iter(())


def _site_document(index: Mapping[str, Any], root: Path) -> Document | None:
    """The data of the site file a folder's index names (None when it cannot be read)."""
    source = index.get("source", {}).get("file")
    if not source or not (root / source).is_file():
        return None
    return fast_document(root / source, source)


def _declared_version(doc: Document | None) -> str:
    """The Kubernetes version a site file states, when it is one a site may state.

    Files are checked against it whether or not the rest of the site loads: it is the
    best word on the cluster there is. Anything else (no site, no version, one nvcregen
    has no schemas for) checks against `DEFAULT_KUBE_VERSION`.
    """
    data = doc.data if doc is not None else None
    spec = data.get("spec") if isinstance(data, dict) else None
    kubernetes = spec.get("kubernetes") if isinstance(spec, dict) else None
    version = kubernetes.get("version") if isinstance(kubernetes, dict) else None
    if isinstance(version, str) and re.fullmatch(KUBE_VERSION_PATTERN, version):
        return version
    return DEFAULT_KUBE_VERSION


def _site_facts(
    doc: Document | None, root: Path, catalog: Catalog, site_dir: Path, prefix: str
) -> SiteFacts | None:
    """Validate and plan the site a folder's index names; map each of its stages to its pool.

    A site that names no `gitops.path` has its GitOps objects read the folder render wrote
    it to: this one, as a path of the repository (`deploy/out/<site>`; `prefix` is the
    project's `repository_prefix`), as render derives it.
    """
    from nvcregen.validate.site import check_site

    loaded = check_site(doc, catalog, root=root) if doc is not None else None
    if loaded is None or loaded.site is None:
        return None
    site, plan = loaded.site, loaded.plan  # no plan for a site that no longer validates
    folder = project_path(site_dir, root)
    if plan is not None and site.spec.gitops.path is None and folder is not None:
        plan = plan.with_gitops_path(in_repository(prefix, folder))
    return SiteFacts(site, plan if plan is not None and plan.units else None)


def _shipped_catalog() -> Catalog:
    from nvcregen.catalog.load import load_catalog

    return load_catalog()


def _diagnostic(file: TreeFile, finding: Finding) -> Diagnostic:
    notes = (f"generated from {file.origin}",) if file.origin else ()
    return Diagnostic(
        file.file.document.span(finding.pointer),
        finding.severity,
        finding.code,
        finding.message,
        finding.pointer,
        finding.hint,
        notes,
    )


def shown_files(out_dir: Path, root: Path) -> list[str]:
    """The YAML files `check_tree` reads, named as it names them."""
    return [shown for _, shown in _tree_files(out_dir, root)]
