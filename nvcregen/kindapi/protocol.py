"""The one protocol every test kind implements (`registry.py` holds them)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, Literal, Protocol, TypeVar

from nvcregen.spec.v1alpha1 import StrictModel

PodSizeName = Literal["nccl", "dcgm"]  # the pod sizes of catalog/pods.yaml
OUTER_MARGIN_S = 60  # what a run's outer deadline keeps before its timeout
# a kind's catalog block: its `params` model, what `block(test)` returns
P_co = TypeVar("P_co", bound=StrictModel, covariant=True)


def outer_deadline_s(timeout_ms: int) -> int:
    """The outer deadline of a run, in seconds: well inside the job's timeout.

    A minute before the timeout, or half of a timeout under two minutes, so that with
    `--kill-after=10s` a hung run is stopped (and its output logged) before NVCRE gives
    up on the job (or, in trainer mode, the test has had its time); for any timeout over
    20 s. Never 0, which `timeout` reads as none.
    """
    seconds = timeout_ms // 1000
    return max(1, min(OUTER_MARGIN_S, seconds // 2), seconds - OUTER_MARGIN_S)


class KindTest(Protocol):
    """What a kind reads of a catalog test: its name, its kind, its blocks by name."""

    @property
    def name(self) -> str:
        """The test's catalog name."""
        ...

    @property
    def kind(self) -> str:
        """Its kind: the name of its block, and of a registered `TestKind`."""
        ...


class Sweep(Protocol):
    """What a collective kind's run sweeps, as nccl-tests' arguments name it.

    Its sizes (`minBytes` times powers of `stepFactor` up to `maxBytes`), its timed calls
    per size and its cycles, and the collective it runs: the sweep model times, sizes,
    thresholds and alerts on it (`plan/sweep.py`, `plan/physics.py`), whatever the kind's
    block calls them (`TestKind.sweep`).
    """

    @property
    def min_bytes(self) -> str:
        """The smallest size (`minBytes`, `8B`)."""
        ...

    @property
    def max_bytes(self) -> str:
        """The largest size asked for (`maxBytes`), before it is fitted to GPU memory."""
        ...

    @property
    def step_factor(self) -> int:
        """Each size is the last times this (`stepFactor`)."""
        ...

    @property
    def iterations(self) -> int:
        """Timed calls per size and mode (`iterations`)."""
        ...

    @property
    def cycles(self) -> int:
        """Times the whole sweep runs (`cycles`)."""
        ...

    @property
    def test_type(self) -> str:
        """The collective it runs (`all_reduce`), as its metrics' `nccl_test` label names it."""
        ...


@dataclass(frozen=True)
class FixedTime:
    """A run's expected time when it does not follow from a sweep: seconds, and why."""

    seconds: float
    explanation: str


@dataclass(frozen=True)
class NodeRun:
    """What the compiler tells a per-node kind of one run when it asks for its script."""

    gpus: int  # every GPU of the node
    timeout_ms: int  # the run's timeout
    outer_deadline_s: int  # the deadline of its command, well inside the timeout
    hostengine: str | None  # the site's DCGM hostengine, if it names one
    hcas: tuple[str, ...] = ()  # the pool's RDMA devices (`nics.hcas`), in NIC order
    nic_gbps: float = 0.0  # one NIC's line rate (`nics.speed`) in Gb/s; 0 without NICs
    model: str = ""  # the pool's GPU model (`catalog/hardware/`)


@dataclass(frozen=True)
class NodeScript:
    """The script a per-node kind runs: a template, its values, the package holding it.

    The template is a file of `package`'s `templates/` folder: a kind's own package for a
    kind that holds its template (`nvcregen.kinds.<kind>`), else `nvcregen.compile`'s.
    """

    template: str
    values: dict[str, object]
    package: str = "nvcregen.compile"


@dataclass(frozen=True)
class PairScripts:
    """The two scripts of a pair kind's run: the server's node, then its client's."""

    server: NodeScript
    client: NodeScript
    ready_file: str  # the server's script creates it once every server listens


@dataclass(frozen=True)
class NvcreRefusal:
    """Why NVCRE mode cannot run a kind's tests: the error of a stage that names one.

    `message` names the test as `{name}`; `code` is registered in `core/codes.py`.
    """

    code: str
    message: str
    hint: str


class TestKind(ABC, Generic[P_co]):
    """One kind of readiness test; one instance of each in the registry.

    Class attributes say how its runs are laid out; methods are the hooks the layers call.
    A kind is generic in its catalog block's model (`class Soak(TestKind[SoakParams])`),
    so its package reads a test's block typed (`KIND.block(test)`); a layer asking
    `kind_of(test)` gets the block as a `StrictModel` and says what it reads of it.
    """

    name: ClassVar[str]
    params: type[P_co]  # the catalog block named `name`, set on the class (`params = ...`)
    per_node: ClassVar[bool]  # once on each node, alone on it (a Job per node in trainer mode)
    one_node: ClassVar[bool]  # a run never spans nodes, whatever the stage's scope
    collective: ClassVar[bool]  # nccl-tests across ranks: an MPI launcher, a TrainJob
    node_health: ClassVar[bool]  # its logs are judged node by node (NVC800-NVC825)
    # a run is a pair of nodes: a server on one, its client on the other, started once
    # the server listens (a TrainJob of two pods in trainer mode; no MPI ranks)
    pair: ClassVar[bool] = False
    # cpu (millicores) and memory (bytes) a node's pod requests when NVCRE's own catalog
    # entry sizes it (not catalog/pods.yaml); None when nvcregen sizes its pods
    nvcre_pod: ClassVar[tuple[int, int] | None] = None
    node_container: ClassVar[str | None] = None  # its container on a node, if per node
    # what its runs print ("nccl-tests", "dcgm-diag", "node-health"), which its package's
    # `logs.READER` reads (`results/kindlogs.py`); None when nvcregen reads no log of its own
    log_format: ClassVar[str | None] = None
    pod_size: ClassVar[PodSizeName | None] = None  # its pods' size in catalog/pods.yaml
    # why NVCRE mode cannot run it (`validate/nvcreform.py`); None when it can
    nvcre_refusal: ClassVar[NvcreRefusal | None] = None
    # its script's log opens with a `@@nvcregen-<kind> begin node= pod= start=` line that
    # binds it to its node and pod (`ingest/beginline.py`; a foreign log is NVC730)
    begin_line: ClassVar[bool] = False
    # its begin mark, where logs of renders older than the begin line print none: such a
    # log is read bound to its slot by its Job's name, with a note (`results/nodebind.py`,
    # NVC739); None: a log without the line names no node (DCGM's alone predates it)
    unmarked_before: ClassVar[str | None] = None
    # the reason a failed node entry gives when a run of this kind failed the node
    failed_reason: ClassVar[str] = "DiagnosticFailed"
    # what the `versions` its log records name are versions of, in a trainer-mode
    # archive's provenance (`results/archivefiles.py`: its NCCL or DCGM versions); None:
    # the archive lists them under neither
    log_versions: ClassVar[Literal["nccl", "dcgm"] | None] = None

    def block(self, test: KindTest) -> P_co:
        """The test's catalog block of this kind (`params`).

        Raises:
            ValueError: The test has no such block.
            TypeError: What it holds under the kind's name is not the kind's `params`.

        """
        found = self.block_or_none(test)
        if found is None:
            raise ValueError(f"test {test.name} has no {self.name} parameters")
        return found

    def block_or_none(self, test: KindTest) -> P_co | None:
        """The test's catalog block of this kind; None when it has none (another kind's test).

        Raises:
            TypeError: What it holds under the kind's name is not the kind's `params`.

        """
        found = getattr(test, self.name, None)
        if found is None or isinstance(found, self.params):
            return found
        what, wanted = type(found).__name__, self.params.__name__
        raise TypeError(f"test {test.name}: its {self.name} block is a {what}, not {wanted}")

    @abstractmethod
    def duration_basis(self, test: KindTest) -> str:
        """What a run's duration follows from, for `catalog list`."""

    @abstractmethod
    def fixed_time(self, test: KindTest, pod_start: str) -> FixedTime | None:
        """The expected time of one run, or None when the sweep model times it.

        `pod_start` is the catalog's start of a pod running one command on a node.
        """

    def sweep(self, test: KindTest) -> Sweep | None:
        """The sweep one run of a collective kind runs; None for a kind that sweeps nothing.

        The layers time it (when `fixed_time` is None), check a threshold's `at:` size and
        label its alerts by it, never reading the kind's block.
        """
        return None

    def nvcre_options(self, test: KindTest) -> dict[str, object]:
        """The kind's own options of an NVCRE Certification category."""
        return {}

    def model_gap(self, test: KindTest, model: str) -> str | None:
        """Why the kind cannot judge runs on a GPU model (None: it can, or needs nothing)."""
        return None

    def timeout_gap(self, test: KindTest, timeout_ms: int) -> str | None:
        """Why a run given `timeout_ms` cannot do what it is for (None: it can).

        For a kind whose script budgets its own steps inside the outer deadline: a timeout
        that cuts one short fails every node for the site's configuration, not theirs.
        """
        return None

    def needs_hostengine(self, test: KindTest) -> bool:
        """Whether a run needs the site's DCGM hostengine."""
        return False

    def node_script(self, test: KindTest, run: NodeRun) -> NodeScript | None:
        """The script of one run on one node, for a kind that runs per node."""
        return None

    def node_env(self) -> list[dict[str, Any]]:
        """The environment that script reads (downward API and the like)."""
        return []

    def pair_scripts(self, test: KindTest, run: NodeRun) -> PairScripts | None:
        """The server's and the client's scripts of one run of a pair kind."""
        return None


def begin_env() -> list[dict[str, Any]]:
    """The node and the pod a script's begin line names, from the downward API (fresh)."""
    return [
        {"name": "NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
        {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
    ]
