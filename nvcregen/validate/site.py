"""Load, validate and plan one site: the entry point of every command that needs a site.

`render`, `check`, `collect` and `diff` all start here, so a site means the same thing to
each of them: the YAML traps, the schema, the models, the catalog references, and the
`Plan` (`plan/resolved.py`: the site, its document, catalog, inventory and units, built
once) with its budget, with every diagnostic in file order.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from nvcregen.catalog.load import Catalog
from nvcregen.core.errors import Diagnostic, has_errors
from nvcregen.plan.resolve import plan
from nvcregen.plan.resolved import Plan
from nvcregen.spec.parse import parse_model
from nvcregen.spec.positions import Document
from nvcregen.spec.v1alpha1 import Site
from nvcregen.validate.fabric import group_problems, inventory_problems, load_inventory
from nvcregen.validate.schema import validate_schema
from nvcregen.validate.semantic import check_plan, check_references


@dataclass(frozen=True)
class LoadedSite:
    """How far a site got: its document, its model, its plan; None where it stopped.

    `doc` and `site` are kept for a site that stops before its plan (render still checks
    the layers of a parsed site, `check` names its cluster); once planned, `plan` holds
    them with the rest.
    """

    doc: Document | None
    site: Site | None
    plan: Plan | None
    diagnostics: list[Diagnostic]

    @property
    def name(self) -> str | None:
        """The site's `metadata.name`, once the file parsed."""
        return self.site.metadata.name if self.site is not None else None


def load_site(
    raw: bytes, display: str, catalog: Catalog, *, strict: bool = False, root: Path | None = None
) -> LoadedSite:
    """Load the bytes of one site file named `display`; plan it when it is valid.

    `plan` is set only when no step before it found an error; the budget is checked on
    that plan, so its diagnostics can come along with a plan.
    """
    from nvcregen.spec.load import load_document  # ruamel, imported only where it is used

    doc, diags = load_document(raw, display)  # bytes -> data + positions
    if doc is None:
        return LoadedSite(None, None, None, diags)
    loaded = check_site(doc, catalog, strict=strict, root=root)
    return LoadedSite(doc, loaded.site, loaded.plan, diags + loaded.diagnostics)


def check_site(
    doc: Document, catalog: Catalog, *, strict: bool = False, root: Path | None = None
) -> LoadedSite:
    """Validate and plan a site already read (`check` reads sites with libyaml).

    `root` is the project folder the site's inventory is relative to (default: here).
    """
    diags = validate_schema(doc)  # schemas/site.v1alpha1.json
    if has_errors(diags):
        return LoadedSite(doc, None, None, diags)
    site, parse_diags = parse_model(doc, Site)  # -> frozen v1alpha1.Site
    diags += parse_diags
    if site is None or has_errors(diags):
        return LoadedSite(doc, site, None, diags)
    diags += check_references(site, catalog, doc, strict=strict)  # catalog, units, fabric
    inventory, found = load_inventory(site, doc, root)  # spec.inventory: NVC390
    diags += found
    if inventory is not None:
        diags += inventory_problems(site, catalog, inventory, doc)  # NVC391-NVC394
    if inventory is not None or site.spec.inventory is None:  # else NVC390 says enough
        diags += group_problems(site, inventory, doc)  # stage groups: NVC395-NVC397
    if has_errors(diags):
        return LoadedSite(doc, site, None, diags)
    units = tuple(plan(site, catalog, inventory))  # what runs where, in site order
    resolved = Plan(site, doc, catalog, units, inventory)  # built once, here
    diags += check_plan(resolved)  # physics, GPU-hours, deadline
    return LoadedSite(doc, site, resolved, diags)
