"""compile_site(): the one readable chain from a Site file to an in-memory output tree."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from nvcregen.catalog.engines import EngineFacts, engine_facts
from nvcregen.catalog.load import Catalog
from nvcregen.chain.model import CompileResult, Options
from nvcregen.check.crossref import Located
from nvcregen.check.gate import object_checks
from nvcregen.check.replayed import replay_manifests
from nvcregen.compile.gitops.shards import shard_units
from nvcregen.compile.layers import check_layers, image_list, site_manifests
from nvcregen.compile.platform.helm import HelmError
from nvcregen.compile.postprocess import postprocess
from nvcregen.compile.readiness.components import PREVIEW
from nvcregen.core import codes
from nvcregen.core.errors import Diagnostic, Severity, has_errors
from nvcregen.core.manifest import Manifest
from nvcregen.emit.cache import Stamp, chart_bytes, input_key, site_folder
from nvcregen.emit.naming import manifest_path
from nvcregen.emit.tree import dump_manifests, to_tree
from nvcregen.plan.resolved import Plan
from nvcregen.spec.load import read_site_bytes
from nvcregen.spec.positions import Document
from nvcregen.spec.v1alpha1 import Site
from nvcregen.validate.site import load_site

__all__ = ["CompileResult", "Options", "compile_site", "compile_source"]

# Says where this render writes, not what the site's inputs give: left out of the stamp so
# `index.json` is the same bytes whichever folder it was rendered into.
_OUTPUT_FOLDER = codes.NVC379.code


def compile_site(path: Path, display: str, catalog: Catalog, options: Options) -> CompileResult:
    """Compile one site file into an in-memory tree of manifests."""
    raw, diags = read_site_bytes(path, display)
    if raw is None:
        return CompileResult(display, diagnostics=diags)
    return compile_source(raw, display, catalog, options)


@dataclass(frozen=True)
class Built:
    """A site's plan compiled into objects, not yet checked (`plan`: where render writes)."""

    plan: Plan
    manifests: list[Manifest]
    diagnostics: list[Diagnostic]


def build_site(
    raw: bytes,
    display: str,
    catalog: Catalog,
    options: Options,
    engines: EngineFacts | None = None,
) -> Built | CompileResult:
    """Load, validate and plan a site and compile every layer; a CompileResult if it stops.

    `engines` (by default `catalog/engines.yaml`) sets what one GitOps unit may hold: a
    readiness step over it is split into shards.
    """
    loaded = load_site(raw, display, catalog, strict=options.strict, root=options.root)
    site, doc, plan, diags = loaded.site, loaded.doc, loaded.plan, loaded.diagnostics
    if site is None or doc is None:
        return CompileResult(display, diagnostics=diags)
    units = plan.units if plan is not None else None
    diags += check_layers(  # versions, pins, scrape TLS, RDMA networks, GitOps settings
        site, doc, strict=options.strict, test_units=units, catalog=catalog
    )
    path, where = _gitops_path(site, options, doc)  # GitOps reads what render writes
    diags += where
    if plan is None or has_errors(diags):
        return CompileResult(display, site.metadata.name, diagnostics=diags)
    plan = plan.with_gitops_path(path) if path is not None else plan
    try:
        manifests = site_manifests(plan, options.root)  # every layer
    except HelmError as exc:  # the chart archive cannot be verified or rendered
        return CompileResult(display, plan.name, diagnostics=[*diags, exc.diagnostic(doc)])
    manifests = postprocess(manifests, plan.site, display)  # labels, prune protection, order
    # as written (labels count): every unit within its engine's limits, steps in shards
    manifests = shard_units(manifests, plan.site, display, engines or engine_facts())
    return Built(plan, manifests, diags)


def compile_source(raw: bytes, display: str, catalog: Catalog, options: Options) -> CompileResult:
    """Compile the bytes of one site file, named `display`, into an in-memory tree."""
    built = build_site(raw, display, catalog, options)
    if isinstance(built, CompileResult):
        return built
    plan, manifests = built.plan, built.manifests
    site, doc = plan.site, plan.doc
    # upstream rules, nvcregen's policies and project permissions (check_manifests' first step)
    diags = built.diagnostics + object_checks(manifests, plan)
    if has_errors(diags):
        return CompileResult(display, site.metadata.name, diagnostics=diags)
    replayed: list[Diagnostic] = []
    images: list[str] = []  # images.txt, once written

    # In this process while the workers write each file's text. Neither may change an
    # object: the workers write the objects as they were when forked.
    def meanwhile() -> None:
        replayed.extend(replay_manifests(manifests, plan))  # the plan's replay
        images.append(image_list(plan, manifests))  # for offline mirrors

    texts = dump_manifests(manifests, display, meanwhile)
    diags += replayed
    if has_errors(diags):
        return CompileResult(display, site.metadata.name, diagnostics=diags)
    stamp = _stamp(raw, site, options, diags)  # lets `render --check` skip it next time
    tree = to_tree(site.metadata.name, manifests, doc, display, images[0], stamp, texts)
    return CompileResult(
        display,
        site.metadata.name,
        tree,
        diags,
        doc.span("/metadata/name"),
        site.spec.cluster,
        doc.span("/spec/cluster"),
        # what is applied, for NVC690 across sites: previews never are (check leaves them too)
        tuple(Located(manifest_path(m), m.obj) for m in manifests if m.component != PREVIEW),
        plan,
    )


def _gitops_path(
    site: Site, options: Options, doc: Document
) -> tuple[str | None, list[Diagnostic]]:
    """The `gitops.path` to give the site: where its output is committed; NVC379 if elsewhere.

    A site that names its `gitops.path` (or has no GitOps objects) is left as it is (None); when
    render writes it elsewhere, NVC379 warns that the GitOps objects apply the folder the
    site names, not the one just written. Rendered outside the project (a preview, as
    `helm template --output-dir` makes one), a site without `gitops.path` points its
    GitOps objects at the folder it is committed at, `<committed_out>/<site>`, and NVC379
    says so.
    """
    gitops, out_path = site.spec.gitops, options.out_path
    if gitops.repo_url is None:
        return None, []
    if gitops.path is not None:
        return None, _elsewhere(site, gitops.path, out_path, doc) if options.rendering else []
    if out_path is None:
        committed = _written(site, options.committed_out)
        where = "/spec/gitops"
        return committed, [_preview(committed, where, doc)] * bool(options.rendering)
    return _written(site, out_path), []


def _preview(committed: str, where: str, doc: Document) -> Diagnostic:
    """NVC379 (warning): a preview outside the project; its GitOps objects apply `committed`."""
    named = "spec.gitops.path" if where.endswith("/path") else "render's default; no gitops.path"
    message = (
        f"the output folder is outside the project, so this render is a preview: the GitOps "
        f"objects in it still point at {committed}, the folder the site is committed at "
        f"({named})"
    )
    hint = (
        "commit the render of the project's own output folder (nvcregen render), or set "
        "spec.gitops.path to the folder the site is committed at"
    )
    return Diagnostic(doc.span(where), Severity.WARNING, _OUTPUT_FOLDER, message, where, hint)


def _elsewhere(site: Site, path: str, out_path: str | None, doc: Document) -> list[Diagnostic]:
    """NVC379 (warning): the site names its folder, and render writes another one."""
    if out_path is None:
        return [_preview(path, "/spec/gitops/path", doc)]
    if path.strip("/").removeprefix("./") == _written(site, out_path):
        return []
    where = "/spec/gitops/path"
    message = (
        f"the GitOps objects apply {path} (spec.gitops.path), but this render writes "
        f"{_written(site, out_path)}"
    )
    hint = "render into the folder gitops.path names, or change gitops.path to where you render"
    return [Diagnostic(doc.span(where), Severity.WARNING, _OUTPUT_FOLDER, message, where, hint)]


def _written(site: Site, out_path: str) -> str:
    """The site's folder inside the project: `<out_path>/<site>`."""
    return site_folder(site.metadata.name, out_path)


def _stamp(raw: bytes, site: Site, options: Options, diags: list[Diagnostic]) -> Stamp:
    """The input key and the notices (warnings and information).

    The key holds the site's and chart's bytes and the folder its GitOps objects apply
    (the site's `gitops.path`, set by `_gitops_path`); `emit/cache.py` adds the rest.
    """
    chart = chart_bytes(options.root, site.spec.nvcre.chart.archive)
    inventory = chart_bytes(options.root, site.spec.inventory)
    gitops = site.spec.gitops
    key = input_key(raw, chart, gitops.path if gitops.repo_url is not None else None, inventory)
    notices = [d for d in diags if d.severity is not Severity.ERROR and d.code != _OUTPUT_FOLDER]
    return Stamp(key, len(notices))
