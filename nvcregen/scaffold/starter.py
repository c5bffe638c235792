"""What `nvcregen init` puts in a starter site: catalog facts, a plan, a window that fits.

Pure: a `Starter` request and the catalog give a `Draft` holding the site as a validated
`Site` model, its plan's worst case (`nvcregen.plan.budget`) and a window with headroom
over it. `nvcregen.scaffold.writer` turns a draft into commented YAML.
"""

from __future__ import annotations

import difflib
import math
import re
from dataclasses import dataclass, field
from typing import Literal, cast, get_args

from nvcregen.catalog.load import Catalog, model_key
from nvcregen.catalog.models import HardwareEntry, ImageRole, TestEntry, TypicalNics
from nvcregen.core import units
from nvcregen.engineapi.registry import DEFAULT_GITOPS, GITOPS
from nvcregen.kindapi.registry import kind_of
from nvcregen.plan.budget import Budget, plan_budget
from nvcregen.plan.resolve import plan
from nvcregen.spec.v1alpha1 import API_VERSION, Site
from nvcregen.validate.slips import byte_rate_slip

SiteFabric = Literal["roce", "ib", "tcp"]

PRODUCT_LABEL = "nvidia.com/gpu.product"
ROUNDS = 3
RETESTS = 1
HEADROOM = 1.25  # the window allows this multiple of the plan's worst case
MAX_CONCURRENT_JOBS = 1024
MAX_GPU_HOURS = 1_000_000

# Starter tests in the order they run, each kept only when the catalog has it and it
# can run at the stage's scope on the pool's network.
INTRA_NODE_TESTS = ("dcgm-l1", "dcgm-l2", "nccl-all-reduce", "nccl-all-gather", "nccl-alltoall")
INTER_NODE_TESTS = ("nccl-all-reduce", "nccl-all-gather", "nccl-alltoall", "nccl-all-reduce-tcp")

_NAME = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")


class ScaffoldError(Exception):
    """The starter cannot be written; the message says why and what to do."""


@dataclass(frozen=True)
class Starter:
    """What `nvcregen init` was asked for.

    Attributes:
        model: A catalog hardware model (`H20-3e`; case and spaces ignored).
        name: The site's metadata.name and cluster, a DNS label.
        nodes: Node names; empty for a pool selected by product label.
        node_count: How many nodes a selector pool should match.
        kubernetes: The cluster's Kubernetes minor version.
        fabric: The NICs' fabric; None takes the catalog's typical one.
        engine: The GitOps controller.
        repo_url: The Git repository Argo CD or Flux read; None leaves GitOps commented.
        nic_count: NICs per node; None takes the catalog's typical count.
        nic_speed: One NIC's line rate (`200Gb/s`); None takes the catalog's typical one.

    """

    model: str
    name: str
    nodes: tuple[str, ...] = ()
    node_count: int = 2
    kubernetes: str = "1.33"
    fabric: SiteFabric | None = None
    engine: str = DEFAULT_GITOPS  # a registered GitOps engine
    repo_url: str | None = None
    nic_count: int | None = None
    nic_speed: str | None = None

    @classmethod
    def of(
        cls,
        model: str,
        name: str,
        nodes: str | None = None,
        node_count: int | None = None,
        kubernetes: str = "1.33",
        fabric: str | None = None,
        engine: str = DEFAULT_GITOPS,
        repo_url: str | None = None,
        nic_count: int | None = None,
        nic_speed: str | None = None,
    ) -> Starter:
        """Build a request from command-line text: `nodes` is comma-separated.

        Raises:
            ScaffoldError: For a fabric or engine nvcregen does not know, no node, or a
                NIC speed without its unit.

        """
        if fabric not in {None, *get_args(SiteFabric)}:
            raise ScaffoldError(f"unknown fabric '{fabric}'; use roce, ib or tcp")
        if engine not in GITOPS:
            known = " or ".join(sorted(GITOPS))
            raise ScaffoldError(f"unknown GitOps engine '{engine}'; use {known}")
        names = tuple(n.strip() for n in (nodes or "").split(",") if n.strip())
        if nodes is not None and not names:
            raise ScaffoldError("--nodes names no node")
        if nic_speed is not None:
            try:
                slip = byte_rate_slip(units.parse_bandwidth(nic_speed))
            except units.UnitError as exc:
                raise ScaffoldError(f"--nic-speed {nic_speed}: {exc}") from None
            if slip is not None:  # NVC387 would refuse the site it writes
                raise ScaffoldError(f"--nic-speed {nic_speed}: {slip[0]}; {slip[1]}")
        return cls(
            model,
            name,
            names,
            node_count or 2,
            kubernetes,
            cast("SiteFabric | None", fabric),
            engine,
            repo_url,
            nic_count,
            nic_speed,
        )

    @property
    def size(self) -> int:
        """Nodes in the pool: those named, else the selector's count."""
        return len(self.nodes) or self.node_count


@dataclass(frozen=True)
class StageDraft:
    """One stage of the starter plan and the comment above it."""

    name: str
    scope: str
    tests: tuple[str, ...]
    comment: str
    nodes_per_job: int | None = None


@dataclass
class Draft:
    """The starter's data, validated and budgeted, before it becomes text."""

    starter: Starter
    hardware: HardwareEntry
    pool: str
    fabric: SiteFabric | None
    stages: list[StageDraft] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    gpu_hours: int = MAX_GPU_HOURS
    deadline_hours: int = 1_000_000

    @property
    def nics(self) -> TypicalNics | None:
        """The pool's NICs: the count and speed asked for, else the catalog's typical ones."""
        if self.fabric is None:
            return None
        typical, starter = self.hardware.typical_nics, self.starter
        if starter.nic_count is None and starter.nic_speed is None and typical is not None:
            return typical
        count = starter.nic_count if starter.nic_count is not None else _typical(typical).count
        speed = starter.nic_speed or _typical(typical).speed
        return TypicalNics(count=count, speed=speed, fabric=self.fabric)

    @property
    def nics_asked(self) -> bool:
        """Whether the NICs' count or speed came from the request, not the catalog."""
        return self.starter.nic_count is not None or self.starter.nic_speed is not None

    @property
    def max_concurrent(self) -> int:
        """Jobs at once: every node busy in the single-node stage."""
        return min(self.starter.size, MAX_CONCURRENT_JOBS)

    def site(self) -> Site:
        """The starter as a Site model, exactly as `validate` will read the written file."""
        return Site.model_validate(site_data(self))

    def roles(self, catalog: Catalog) -> list[ImageRole]:
        """Image roles the plan's tests use."""
        return sorted({catalog.tests[t].image for s in self.stages for t in s.tests})


def find_model(catalog: Catalog, model: str) -> HardwareEntry:
    """Return the catalog's entry for a model, or fail naming the close or known ones."""
    hardware = catalog.find_hardware(model)
    if hardware is not None:
        return hardware
    known = sorted(h.model for h in catalog.hardware.values())
    close = difflib.get_close_matches(model, known, n=1, cutoff=0.5)
    hint = f"did you mean '{close[0]}'?" if close else f"known models: {', '.join(known)}"
    raise ScaffoldError(f"unknown GPU model '{model}'; {hint}")


def draft_site(starter: Starter, catalog: Catalog) -> tuple[Draft, Budget]:
    """Plan the starter and size its window; return the draft and its plan's worst case.

    Raises:
        ScaffoldError: For an unknown model, a name that is no DNS label, or a plan
            that no single window can hold.

    """
    _check_request(starter)
    hardware = find_model(catalog, starter.model)
    draft = _plan_stages(starter, catalog, hardware)
    site = draft.site()
    budget = plan_budget(site, plan(site, catalog))
    draft.gpu_hours = nice_ceiling(budget.gpu_hours * HEADROOM)
    if draft.gpu_hours > MAX_GPU_HOURS:
        raise ScaffoldError(
            f"the starter plan needs {budget.gpu_hours:.0f} GPU-hours, more than one window "
            f"allows ({MAX_GPU_HOURS}); start with fewer nodes"
        )
    draft.deadline_hours = max(1, math.ceil(budget.wall_hours * HEADROOM))
    return draft, budget


def site_data(draft: Draft) -> dict[str, object]:
    """The draft as Site data (the fields the template writes, without comments)."""
    starter, hardware = draft.starter, draft.hardware
    pool: dict[str, object] = {
        "name": draft.pool,
        "model": hardware.model,
        "productLabels": list(hardware.product_labels),
        "gpusPerNode": hardware.gpus_per_node,
    }
    if starter.nodes:
        pool["nodes"] = list(starter.nodes)
    else:
        pool["selector"] = {PRODUCT_LABEL: hardware.product_labels[0]}
        pool["nodeCount"] = starter.node_count
    if draft.nics is not None:  # the window below is sized for exactly these NICs
        pool["nics"] = {
            "count": draft.nics.count,
            "fabric": draft.fabric,
            "speed": draft.nics.speed,
        }
    stages = [
        {"name": s.name, "scope": s.scope, "tests": list(s.tests)}
        | ({"nodesPerJob": s.nodes_per_job} if s.nodes_per_job else {})
        for s in draft.stages
    ]
    window = {
        "maxConcurrentJobs": draft.max_concurrent,
        "deadline": f"{draft.deadline_hours}h",
        "gpuHours": draft.gpu_hours,
        "retests": RETESTS,
    }
    return {
        "apiVersion": API_VERSION,
        "kind": "Site",
        "metadata": {"name": starter.name},
        "spec": {
            "cluster": starter.name,
            "kubernetes": {"version": starter.kubernetes},
            "nodePools": [pool],
            "readiness": {"rounds": ROUNDS, "window": window, "stages": stages},
        },
    }


def nice_ceiling(x: float) -> int:
    """Round up to two significant digits: 176.3 -> 180, 7.2 -> 8."""
    if x <= 10:
        return max(1, math.ceil(x))
    step = int(10 ** (len(str(math.ceil(x))) - 2))
    return math.ceil(x / step) * step


def _check_request(starter: Starter) -> None:
    if not _NAME.fullmatch(starter.name) or len(starter.name) > 32:
        raise ScaffoldError(
            f"site name '{starter.name}' is not a DNS label of at most 32 characters "
            "(lower-case letters, digits and '-', starting with a letter)"
        )
    if not re.fullmatch(r"1\.(2[5-9]|3[0-7])", starter.kubernetes):
        raise ScaffoldError(f"Kubernetes {starter.kubernetes} is not a minor version 1.25-1.37")
    if len(set(starter.nodes)) != len(starter.nodes):
        raise ScaffoldError("a node is named twice in --nodes")


def _plan_stages(starter: Starter, catalog: Catalog, hardware: HardwareEntry) -> Draft:
    pool = re.sub(r"[^a-z0-9-]+", "-", model_key(hardware.model)).strip("-")[:32].rstrip("-")
    draft = Draft(starter, hardware, pool if _NAME.fullmatch(pool) else "gpus", None)
    draft.fabric = _fabric(starter, hardware)
    rdma = draft.fabric in {"roce", "ib"}
    intra = _usable(catalog, INTRA_NODE_TESTS, "intra-node", rdma=rdma)
    comment = "Each node on its own: DCGM, then collectives inside the node."
    draft.stages.append(StageDraft("single-node", "intra-node", intra, comment))
    inter = _usable(catalog, INTER_NODE_TESTS, "inter-node", rdma=rdma)
    if starter.size < 2:
        draft.notes.append("Add an inter-node stage once the pool has two nodes or more.")
    elif inter:
        network = "RDMA, with TCP as a baseline" if rdma else "TCP sockets"
        comment = f"Pairs of nodes over {network}."
        draft.stages.append(StageDraft("two-node", "inter-node", inter, comment, 2))
    return draft


def _typical(typical: TypicalNics | None) -> TypicalNics:
    if typical is None:  # _fabric refused a request that leaves a NIC fact unknown
        raise ScaffoldError("no typical NICs to complete --nics and --nic-speed from")
    return typical


def _fabric(starter: Starter, hardware: HardwareEntry) -> SiteFabric | None:
    """The pool's fabric: the one asked for, else the catalog's typical one (None: no NICs)."""
    typical, fabric = hardware.typical_nics, starter.fabric
    asked = starter.nic_count is not None or starter.nic_speed is not None
    if typical is None:
        complete = fabric is not None and starter.nic_count and starter.nic_speed
        if complete:
            return fabric
        if fabric is not None or asked:
            raise ScaffoldError(
                f"the catalog lists no typical NICs for {hardware.model}: describe them whole "
                "with --nics, --nic-speed and --fabric, or leave all three out and declare "
                "spec.nodePools[].nics in the site"
            )
        return None
    if fabric is not None:
        return fabric
    return "ib" if typical.fabric == "roce-or-ib" else typical.fabric


def _usable(catalog: Catalog, names: tuple[str, ...], scope: str, *, rdma: bool) -> tuple[str, ...]:
    """The tests of `names` the catalog has that run at `scope` on this network."""
    return tuple(
        name
        for name in names
        if (test := catalog.tests.get(name)) is not None and _runs(test, scope, rdma=rdma)
    )


def _runs(test: TestEntry, scope: str, *, rdma: bool) -> bool:
    if scope not in test.scopes or kind_of(test).needs_hostengine(test):
        return False
    # Without RDMA NICs a fabric collective across nodes would silently run over TCP.
    return not (scope == "inter-node" and test.transport == "fabric" and not rdma)
