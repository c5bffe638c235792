"""`nvcregen check`: validate a rendered output tree offline, file by file and as a whole."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nvcregen.catalog.load import Catalog
from nvcregen.check.crossref import (
    Located,
    PoolCounts,
    check_counts,
    check_identities,
    check_log_profiles,
)
from nvcregen.check.findings import Finding
from nvcregen.check.parallel import Job, check_objects
from nvcregen.check.reader import GeneratedFile
from nvcregen.check.schemas import DEFAULT_KUBE_VERSION
from nvcregen.check.webhooks import check_runtimes
from nvcregen.compile.plan import resolve_pools, stage_pool_name
from nvcregen.emit.naming import INDEX_FILE
from nvcregen.errors import Diagnostic, Severity, Span
from nvcregen.spec.fast import fast_document
from nvcregen.spec.v1alpha1 import Site
from nvcregen.validate.parse import parse_model

STAGE_LABEL = "nvcregen.io/stage"


@dataclass(frozen=True)
class SiteFacts:
    """What checking a site's output needs from the site: its Kubernetes version, its pools."""

    kube_version: str
    stage_pools: dict[str, PoolCounts]


@dataclass(frozen=True)
class TreeFile:
    """A generated file, its object, and what the site's index says about it."""

    file: GeneratedFile
    located: Located
    origin: str | None
    site_dir: Path | None


def check_tree(
    out_dir: Path,
    root: Path,
    catalog: Catalog,
    *,
    strict: bool = False,
    server: Callable[[list[Located]], list[tuple[str, Finding]]] | None = None,
    old: Mapping[str, Any] | None = None,
) -> list[Diagnostic]:
    """Check every YAML file under `out_dir`; report at the generated file's lines.

    Each diagnostic also names the site line the object came from (via `index.json`),
    so a reviewer can jump from a bad object to the plan that produced it. `server`,
    when given (see `nvcregen.check.server`), also dry-runs the objects on a cluster.
    `old` maps a file (as shown) to its previous object, for CEL transition rules;
    files without one are checked as creates.
    """
    old = old or {}
    files, diags = _load_tree(out_dir, root)
    by_path = {f.located.file: f for f in files}
    facts = {d: _site_facts(d, root, catalog) for d in {f.site_dir for f in files} if d}
    found: list[tuple[str, Finding]] = []
    jobs = [Job(f.located.obj, _version(facts, f), strict, old.get(f.located.file)) for f in files]
    for file, findings in zip(files, check_objects(jobs), strict=True):
        found += [(file.located.file, f) for f in findings]
        site = facts.get(file.site_dir) if file.site_dir else None
        if site is not None:
            found += [(file.located.file, f) for f in _counts(file, site)]
    objects = [f.located for f in files]
    found += list(check_log_profiles(objects)) + list(check_runtimes(objects))
    if server is not None:
        found += server(objects)
    by_site: dict[Path | None, list[Located]] = {}
    for file in files:
        by_site.setdefault(file.site_dir, []).append(file.located)
    for site_objects in by_site.values():
        # Each site is its own cluster: names only need to be unique within one.
        found += list(check_identities(site_objects))
    diags += [_diagnostic(by_path[path], finding) for path, finding in found]
    return sorted(set(diags), key=Diagnostic.sort_key)


def _version(facts: Mapping[Path, SiteFacts | None], file: TreeFile) -> str:
    site = facts.get(file.site_dir) if file.site_dir else None
    return site.kube_version if site else DEFAULT_KUBE_VERSION


def _load_tree(out_dir: Path, root: Path) -> tuple[list[TreeFile], list[Diagnostic]]:
    files: list[TreeFile] = []
    diags: list[Diagnostic] = []
    site_dirs: dict[Path, Path | None] = {}
    indexes: dict[Path, dict[str, Any]] = {}
    for path, shown in _tree_files(out_dir, root):
        generated = GeneratedFile(path, shown)
        data = generated.data
        if data is None:  # libyaml could not read it: let the careful loader say why
            diags += generated.loaded[1] or [_not_object(shown, "not valid YAML")]
            continue
        if not isinstance(data, dict) or "kind" not in data:
            diags.append(_not_object(shown, "not a Kubernetes object (no kind)"))
            continue
        site_dir = _site_dir(path.parent, site_dirs)
        if site_dir is not None and site_dir not in indexes:
            indexes[site_dir] = _index(site_dir)
        origin = _origin(path, site_dir, indexes[site_dir]) if site_dir else None
        files.append(TreeFile(generated, Located(shown, data), origin, site_dir))
    return files, diags


def _tree_files(out_dir: Path, root: Path) -> list[tuple[Path, str]]:
    """Every YAML file under `out_dir` (hidden folders skipped), with its shown name."""
    base = _shown(out_dir, root)
    found = []
    for path in sorted(out_dir.rglob("*.yaml")):
        relative = path.relative_to(out_dir)
        if not any(part.startswith(".") for part in relative.parts):
            found.append((path, f"{base}/{relative.as_posix()}"))
    return found


def _site_dir(folder: Path, known: dict[Path, Path | None]) -> Path | None:
    """The nearest folder at or above `folder` holding an index.json (cached per folder)."""
    if folder not in known:
        has_index = (folder / INDEX_FILE).is_file()
        parent = folder.parent
        known[folder] = (
            folder if has_index else (None if parent == folder else _site_dir(parent, known))
        )
    return known[folder]


def _not_object(shown: str, message: str) -> Diagnostic:
    return Diagnostic(Span(shown), Severity.ERROR, "NVC600", message)


def _shown(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return path.as_posix()


def _index(site_dir: Path) -> dict[str, Any]:
    try:
        data = json.loads((site_dir / INDEX_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _origin(path: Path, site_dir: Path, index: dict[str, Any]) -> str | None:
    """`sites/x.yaml:41` for a generated file, from its site's index."""
    entry = index.get("files", {}).get(path.relative_to(site_dir).as_posix())
    source = index.get("source", {}).get("file")
    if not isinstance(entry, dict) or not source:
        return None
    return f"{source}:{entry['source']['line']} ({entry['source']['pointer']})"


def _counts(file: TreeFile, site: SiteFacts) -> Iterator[Finding]:
    labels = (file.located.obj.get("metadata") or {}).get("labels") or {}
    pool = site.stage_pools.get(str(labels.get(STAGE_LABEL)))
    return check_counts(file.located, pool) if pool is not None else iter(())


def _site_facts(site_dir: Path, root: Path, catalog: Catalog) -> SiteFacts | None:
    """Load the site behind `site_dir` (per its index) and map each stage to its pool."""
    source = _index(site_dir).get("source", {}).get("file")
    if not source or not (root / source).is_file():
        return None
    doc = fast_document(root / source, source)
    site = parse_model(doc, Site)[0] if doc is not None else None
    if site is None:
        return None
    pools = resolve_pools(site, catalog)
    counts: dict[str, PoolCounts] = {}
    for stage in site.spec.readiness.stages:
        pool = pools.get(stage_pool_name(site, stage))
        if pool is not None:
            nics = pool.spec.nics.count if pool.spec.nics is not None else 0
            counts[stage.name] = PoolCounts(pool.gpus_per_node, nics)
    return SiteFacts(site.spec.kubernetes.version, counts)


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
