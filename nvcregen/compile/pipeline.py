"""compile_site(): the one readable chain from a Site file to an in-memory output tree."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from nvcregen.catalog.load import Catalog
from nvcregen.check.objects import check_manifests
from nvcregen.compile.plan import plan
from nvcregen.compile.postprocess import postprocess
from nvcregen.compile.readiness import readiness_manifests
from nvcregen.emit.tree import Tree, to_tree
from nvcregen.errors import Diagnostic, Span, has_errors
from nvcregen.spec.load import load_file
from nvcregen.spec.v1alpha1 import Site
from nvcregen.validate.parse import parse_model
from nvcregen.validate.schema import validate_schema
from nvcregen.validate.semantic import check_references


@dataclass(frozen=True)
class Options:
    """The tool's own options; everything else belongs in the site file."""

    strict: bool = False


@dataclass(frozen=True)
class CompileResult:
    """What compiling one site produced: a tree (None on errors) and every diagnostic."""

    source: str
    site: str | None = None
    tree: Tree | None = None
    diagnostics: list[Diagnostic] = field(default_factory=list)
    name_span: Span | None = None


def compile_site(path: Path, display: str, catalog: Catalog, options: Options) -> CompileResult:
    """Compile one site file into an in-memory tree of manifests."""
    doc, diags = load_file(path, display)  # bytes -> data + positions
    if doc is None:
        return CompileResult(display, diagnostics=diags)
    diags += validate_schema(doc)  # schemas/site.v1alpha1.json
    if has_errors(diags):
        return CompileResult(display, diagnostics=diags)
    site, parse_diags = parse_model(doc, Site)  # -> frozen v1alpha1.Site
    diags += parse_diags
    if site is None:
        return CompileResult(display, diagnostics=diags)
    diags += check_references(site, catalog, doc, strict=options.strict)  # catalog, units, budget
    if has_errors(diags):
        return CompileResult(display, site.metadata.name, diagnostics=diags)
    test_units = plan(site, catalog)  # what runs where, in site order
    manifests = readiness_manifests(site, test_units)  # Certifications, WorkloadRuns, LogProfiles
    manifests = postprocess(manifests, site, display)  # labels, prune protection, kind order
    diags += check_manifests(manifests, site, doc)  # upstream schemas, before anything is written
    if has_errors(diags):
        return CompileResult(display, site.metadata.name, diagnostics=diags)
    tree = to_tree(site.metadata.name, manifests, doc, display)  # canonical YAML + index.json
    return CompileResult(display, site.metadata.name, tree, diags, doc.span("/metadata/name"))
