"""compile_site(): the one readable chain from a Site file to an in-memory output tree."""

from __future__ import annotations

from pathlib import Path

from nvcregen.catalog.load import Catalog
from nvcregen.chain.model import CompileResult, Options
from nvcregen.check.gate import check_manifests
from nvcregen.compile.layers import check_layers, image_list, site_manifests
from nvcregen.compile.platform.helm import HelmError
from nvcregen.compile.postprocess import postprocess
from nvcregen.core.errors import Diagnostic, Severity, has_errors
from nvcregen.emit.cache import Stamp, chart_bytes, input_key
from nvcregen.emit.tree import to_tree
from nvcregen.plan.resolve import plan
from nvcregen.spec.load import load_document, read_site_bytes
from nvcregen.spec.parse import parse_model
from nvcregen.spec.v1alpha1 import Site
from nvcregen.validate.schema import validate_schema
from nvcregen.validate.semantic import check_references

__all__ = ["CompileResult", "Options", "compile_site", "compile_source"]


def compile_site(path: Path, display: str, catalog: Catalog, options: Options) -> CompileResult:
    """Compile one site file into an in-memory tree of manifests."""
    raw, diags = read_site_bytes(path, display)
    if raw is None:
        return CompileResult(display, diagnostics=diags)
    return compile_source(raw, display, catalog, options)


def compile_source(  # noqa: PLR0911 - one early return per failing stage keeps the chain flat
    raw: bytes, display: str, catalog: Catalog, options: Options
) -> CompileResult:
    """Compile the bytes of one site file, named `display`, into an in-memory tree."""
    doc, diags = load_document(raw, display)  # bytes -> data + positions
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
    diags += check_layers(site, doc)  # dependency versions, GitOps settings
    if has_errors(diags):
        return CompileResult(display, site.metadata.name, diagnostics=diags)
    test_units = plan(site, catalog)  # what runs where, in site order
    try:
        manifests = site_manifests(site, catalog, test_units, options.root)  # every layer
    except HelmError as exc:  # the chart archive cannot be verified or rendered
        return CompileResult(display, site.metadata.name, diagnostics=[*diags, exc.diagnostic(doc)])
    manifests = postprocess(manifests, site, display)  # labels, prune protection, kind order
    diags += check_manifests(manifests, site, doc)  # upstream schemas, before anything is written
    if has_errors(diags):
        return CompileResult(display, site.metadata.name, diagnostics=diags)
    images = image_list(site, catalog, test_units, manifests)  # for mirroring offline sites
    stamp = _stamp(raw, site, options.root, diags)  # lets `render --check` skip it next time
    tree = to_tree(site.metadata.name, manifests, doc, display, images, stamp)  # + index.json
    return CompileResult(display, site.metadata.name, tree, diags, doc.span("/metadata/name"))


def _stamp(raw: bytes, site: Site, root: Path, diags: list[Diagnostic]) -> Stamp:
    """The input key (site and chart bytes; `emit/cache.py` adds the rest) and warnings."""
    key = input_key(raw, chart_bytes(root, site.spec.nvcre.chart.archive))
    return Stamp(key, sum(d.severity is Severity.WARNING for d in diags))
