"""The resolved plan of one valid site: the one thing every layer after `validate` takes.

`nvcregen.validate.site.check_site` (through `load_site`) builds a `Plan` once, as soon
as the site's references hold: its model, the document it was read from (positions for
every diagnostic), the catalog its units resolved against, its inventory and its test
units. What is derived from those alone is worked out on first use and kept: the budget
(`plan_budget`, which validate checks against the window) and the replay's facts (nodes,
window, each run's expected time and timeout: `plan.facts`). Render, check, collect,
diff and rehearse read the site through it; none re-bundles its parts.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import cached_property

from nvcregen.catalog.load import Catalog
from nvcregen.fabric.inventory import Inventory
from nvcregen.plan.budget import Budget, plan_budget
from nvcregen.plan.facts import PlanFacts, plan_facts
from nvcregen.plan.model import TestUnit
from nvcregen.spec.positions import Document
from nvcregen.spec.v1alpha1 import Site


@dataclass(frozen=True, eq=False)
class Plan:
    """One site, resolved: what runs where, against which catalog, at what cost.

    Attributes:
        site: The site's frozen model.
        doc: The document it was read from (`file:line:column` of every pointer).
        catalog: The catalog its tests, hardware and images resolved against.
        units: Its test units, in site order (`plan.resolve.plan`).
        inventory: The nodes `spec.inventory` names (None when it names none).

    """

    site: Site
    doc: Document
    catalog: Catalog
    units: tuple[TestUnit, ...]
    inventory: Inventory | None = None

    @property
    def name(self) -> str:
        """The site's `metadata.name`."""
        return self.site.metadata.name

    @cached_property
    def budget(self) -> Budget:
        """The worst case and expected cost of the units (GPU-hours, wall time)."""
        return plan_budget(self.site, self.units)

    @cached_property
    def facts(self) -> PlanFacts:
        """What the replay takes from the site: nodes, window, timings, stages."""
        return plan_facts(self.site, self.units)

    def with_gitops_path(self, path: str) -> Plan:
        """The plan of the site whose GitOps objects apply `path` (render sets where it writes)."""
        return dataclasses.replace(self, site=self.site.with_gitops_path(path))
