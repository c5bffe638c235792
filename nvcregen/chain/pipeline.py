"""compile_site(): the one readable chain from a Site file to an in-memory output tree."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from nvcregen.catalog.load import Catalog
from nvcregen.check.crossref import Located
from nvcregen.check.gate import check_manifests
from nvcregen.compile.layers import check_layers, image_list, site_manifests
from nvcregen.compile.platform.helm import HelmError
from nvcregen.compile.postprocess import postprocess
from nvcregen.core.errors import Diagnostic, Severity, Span, has_errors
from nvcregen.emit.cache import Stamp, chart_bytes, input_key
from nvcregen.emit.naming import manifest_path
from nvcregen.emit.tree import Tree, to_tree
from nvcregen.spec.load import read_site_bytes
from nvcregen.spec.positions import Document
from nvcregen.spec.v1alpha1 import Site
from nvcregen.validate.site import load_site


@dataclass(frozen=True)
class Options:
    """The tool's own options; everything else belongs in the site file.

    Attributes:
        strict: Tag-only images, example digests and a metrics endpoint without a CA
            are errors, not warnings.
        root: The project folder; a site's `nvcre.chart.archive` is relative to it.
        out_path: The output folder's path inside the project (`out`), which GitOps
            objects read `<out_path>/<site>/` from unless a site names its `gitops.path`;
            None when the output folder is outside the project.

    """

    strict: bool = False
    root: Path = Path()
    out_path: str | None = "out"


@dataclass(frozen=True)
class CompileResult:
    """What compiling one site produced: a tree (None on errors) and every diagnostic.

    `cluster`, `cluster_span` and `objects` (each object at its path in the tree) let the
    multi-site driver check sites that share a cluster against each other (NVC690).
    """

    source: str
    site: str | None = None
    tree: Tree | None = None
    diagnostics: list[Diagnostic] = field(default_factory=list)
    name_span: Span | None = None
    cluster: str | None = None
    cluster_span: Span | None = None
    objects: tuple[Located, ...] = ()


def compile_site(path: Path, display: str, catalog: Catalog, options: Options) -> CompileResult:
    """Compile one site file into an in-memory tree of manifests."""
    raw, diags = read_site_bytes(path, display)
    if raw is None:
        return CompileResult(display, diagnostics=diags)
    return compile_source(raw, display, catalog, options)


def compile_source(raw: bytes, display: str, catalog: Catalog, options: Options) -> CompileResult:
    """Compile the bytes of one site file, named `display`, into an in-memory tree."""
    loaded = load_site(raw, display, catalog, strict=options.strict)  # YAML, schema, plan
    site, doc, test_units, diags = loaded.site, loaded.doc, loaded.test_units, loaded.diagnostics
    if site is None or doc is None:
        return CompileResult(display, diagnostics=diags)
    strict = options.strict
    # versions, pins, TLS, RDMA networks, GitOps
    diags += check_layers(site, doc, strict=strict, test_units=test_units, catalog=catalog)
    site, where = _gitops_path(site, options.out_path, doc)  # GitOps reads what render writes
    diags += where
    if test_units is None or has_errors(diags):
        return CompileResult(display, site.metadata.name, diagnostics=diags)
    try:
        manifests = site_manifests(site, catalog, test_units, options.root)  # every layer
    except HelmError as exc:  # the chart archive cannot be verified or rendered
        return CompileResult(display, site.metadata.name, diagnostics=[*diags, exc.diagnostic(doc)])
    manifests = postprocess(manifests, site, display)  # labels, prune protection, kind order
    diags += check_manifests(manifests, site, doc, test_units, catalog.charts)  # before writing
    if has_errors(diags):
        return CompileResult(display, site.metadata.name, diagnostics=diags)
    images = image_list(site, catalog, test_units, manifests)  # for mirroring offline sites
    stamp = _stamp(raw, site, options.root, diags)  # lets `render --check` skip it next time
    tree = to_tree(site.metadata.name, manifests, doc, display, images, stamp)  # + index.json
    objects = tuple(Located(manifest_path(m), m.obj) for m in manifests)
    return CompileResult(
        display,
        site.metadata.name,
        tree,
        diags,
        doc.span("/metadata/name"),
        site.spec.cluster,
        doc.span("/spec/cluster"),
        objects,
    )


def _gitops_path(site: Site, out_path: str | None, doc: Document) -> tuple[Site, list[Diagnostic]]:
    """The site with `gitops.path` set to where render writes it; NVC379 outside the project.

    A site that names its `gitops.path` (or has no GitOps objects) is left as it is.
    """
    gitops = site.spec.gitops
    if gitops.repo_url is None or gitops.path is not None:
        return site, []
    if out_path is None:
        where = "/spec/gitops"
        message = (
            "the output folder is outside the project, so the GitOps objects cannot name the "
            "folder they apply"
        )
        hint = (
            "render into the repository (e.g. --out deploy/out), or set spec.gitops.path to "
            "where this site's output is committed"
        )
        return site, [Diagnostic(doc.span(where), Severity.ERROR, "NVC379", message, where, hint)]
    base = site.metadata.name if out_path in {"", "."} else f"{out_path}/{site.metadata.name}"
    spec = site.spec.model_copy(update={"gitops": gitops.model_copy(update={"path": base})})
    return site.model_copy(update={"spec": spec}), []


def _stamp(raw: bytes, site: Site, root: Path, diags: list[Diagnostic]) -> Stamp:
    """The input key (site and chart bytes; `emit/cache.py` adds the rest) and warnings."""
    key = input_key(raw, chart_bytes(root, site.spec.nvcre.chart.archive))
    return Stamp(key, sum(d.severity is Severity.WARNING for d in diags))
