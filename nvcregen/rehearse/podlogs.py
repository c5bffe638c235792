"""The logs the twin's pods serve: what each packed run would print, made from the plan (pure).

kwok completes a pod without running anything; a rehearsal gives each pod the log its
run would print (`docs/design/0019-twin.md`), so that `collect` reads it back as from a
cluster. With `readiness.packing: packed` (`compile/readiness/packed.py`):

- a node pack's pod prints, for each of its tests, a section from `@@nvcregen-pack begin
  test=<t> node=<node> pod=<pod> start=<t>` to `@@nvcregen-pack end test=<t> rc=<n>`
  holding that test's output: DCGM's script line naming the node and pod, `dcgmi diag
  --json` (`dcgmprint.py`) and the script's exit line; or nccl-tests' output of one
  process per GPU, the ranks on the pod's host (its hostname is its name), and the exit
  line;
- a group pack's launcher prints a section per test (begin, output, the launcher's exit
  line, end) with nccl-tests' ranks on the group's hosts (the nodes its pods ran on).

Figures are the physics model's expected bus bandwidth at every size of the test's sweep
(`plan.physics.busbw_at`), each table a little different from every other (a repeated
table reads as a copy, issue #31). A failing node's
sections fail: DCGM a failed test and a non-zero exit, NCCL a tenth of the expected
figure, on every run that holds the node. Durations are the plan's (`expected_ms`); each
section starts when the one before would have ended. Kinds whose output is not made
here (node health, nvbandwidth, training) print one line saying so and exit 1.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

from nvcregen.catalog.load import Catalog
from nvcregen.core.labels import ROUND, STAGE, TESTS
from nvcregen.kinds.registry import kind_of
from nvcregen.plan.model import TestUnit
from nvcregen.plan.physics import busbw_at, measured_sizes
from nvcregen.rehearse import ncclprint
from nvcregen.rehearse.dcgmprint import dcgm_version, diag_json
from nvcregen.results.runs import expected_transport

MARK = "@@nvcregen-pack"
FAILING_SHARE = 0.1  # a failing node's NCCL figure: a tenth of the expected one
FAILED_RC = 1
JITTER = 0.001  # a row's step below the expected figure: 0.1% of it
PRINTED = 0.01  # GB/s: the smallest step nccl-tests prints (a smaller one would repeat a table)
ROUND_ROWS = 2  # the largest sizes, whose steps count the round
VARIED = 1.0  # GB/s: smaller figures are printed as the model has them
NCCL_DEBUG = {
    "IB": (
        "{host}:1274:1274 [0] NCCL INFO NCCL version 2.27.3+cuda12.9",
        "{host}:1274:1290 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [RO]; OOB eth0:10.0.0.1<0>",
        "{host}:1274:1290 [0] NCCL INFO Using network IB",
    ),
    "Socket": (
        "{host}:1274:1274 [0] NCCL INFO NCCL version 2.27.3+cuda12.9",
        "{host}:1274:1290 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>",
        "{host}:1274:1290 [0] NCCL INFO Using network Socket",
    ),
}


@dataclass(frozen=True)
class Printer:
    """What every log is made from: the plan's units, the catalog, the failing nodes."""

    units: Sequence[TestUnit]
    catalog: Catalog
    failing: frozenset[str] = frozenset()  # nodes whose every section fails
    links: frozenset[frozenset[str]] = frozenset()  # leaf pairs: a run across one fails
    leaves: Mapping[str, str] = field(default_factory=dict)  # each node's leaf (inventory)

    def fails(self, nodes: Sequence[str]) -> bool:
        """Whether a run on `nodes` fails: it holds a failing node, or crosses a failing link."""
        if self.failing.intersection(nodes):
            return True
        held = {self.leaves[n] for n in nodes if n in self.leaves}
        return any(link <= held for link in self.links)

    def unit(self, stage: str, test: str, node: str = "") -> TestUnit | None:
        """The plan's unit of a stage's test, on the pool naming `node` when one does."""
        found = [u for u in self.units if u.stage.name == stage and u.test.name == test]
        named = [u for u in found if node and node in (u.pool.spec.nodes or ())]
        return next(iter(named or found), None)


@dataclass(frozen=True)
class Output:
    """One test's output inside a section, its exit code, and how long it ran (s)."""

    text: str
    rc: int
    seconds: int
    exit_line: bool = True  # False: its own script prints its exit line (DCGM's)


def _stamp(at: datetime) -> str:
    return at.strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True)
class PackPod:
    """One pod of a packed run, as its log needs it.

    `nodes`: the node a node pack's pod ran on, or the nodes of a group pack's pods;
    `pod`: the pod (a node pack's ranks run on its host, named after it) or the run;
    `round`: the run's round, which keeps each round's tables apart.
    """

    stage: str
    tests: tuple[str, ...]
    round: int
    nodes: tuple[str, ...]
    pod: str
    start: datetime


@dataclass(frozen=True)
class Section:
    """Where one test's output is printed: a pack's pod, the test's start, its duration (s)."""

    pack: PackPod
    start: datetime
    seconds: int
    failing: bool


def node_pack_log(printer: Printer, pack: PackPod) -> str:
    """A node pack's pod log on its node: a section per test, one after the other."""
    (node,) = pack.nodes
    lines: list[str] = []
    at = pack.start
    for test in pack.tests:
        output = _output(printer, pack, test, at)
        lines += [f"{MARK} begin test={test} node={node} pod={pack.pod} start={_stamp(at)}\n"]
        lines += [output.text]
        if output.exit_line:  # the pack's script around an nccl-tests run prints it
            lines += [f"nvcregen: {test} exit={output.rc} seconds={output.seconds}\n"]
        lines += [f"{MARK} end test={test} rc={output.rc}\n"]
        at += timedelta(seconds=output.seconds)
    return "".join(lines)


def launcher_log(printer: Printer, pack: PackPod) -> str:
    """A group pack's launcher log: a section per test over its nodes, one after the other."""
    lines: list[str] = []
    at = pack.start
    for test in pack.tests:
        output = _output(printer, pack, test, at)
        lines += [f"{MARK} begin test={test} start={_stamp(at)}\n", output.text]
        lines += [f"nvcregen: {test} exit={output.rc} seconds={output.seconds}\n"]
        lines += [f"{MARK} end test={test} rc={output.rc}\n"]
        at += timedelta(seconds=output.seconds)
    return "".join(lines)


def run_pod_log(
    printer: Printer, run: Mapping[str, Any], pod: str, nodes: Sequence[str], start: datetime,
    launcher: bool,
) -> str:  # fmt: skip
    """The log of one pod of a packed run (its Job or TrainJob object), "" for no output.

    A node pack's pod (of a Job naming its tests) prints its sections on its node
    (`nodes`, one); a group pack's launcher (`launcher`, of a TrainJob naming its tests)
    prints its sections over `nodes`, those the run's pods ran on. Any other pod (a
    worker, a run without `nvcregen.io/tests`) prints nothing nvcregen reads.
    """
    meta = run.get("metadata") or {}
    labels = meta.get("labels") or {}
    tests = tuple(t for t in str((meta.get("annotations") or {}).get(TESTS) or "").split(",") if t)
    round_ = str(labels.get(ROUND) or "")
    pack = PackPod(
        str(labels.get(STAGE) or ""),
        tests,
        int(round_) if round_.isdigit() and len(round_) < 6 else 1,
        tuple(nodes),
        pod,
        start,
    )
    if not tests or not nodes:
        return ""
    if run.get("kind") == "Job" and len(nodes) == 1:
        return node_pack_log(printer, pack)
    if run.get("kind") == "TrainJob" and launcher:
        return launcher_log(printer, replace(pack, pod=str(meta.get("name"))))
    return ""


def _output(printer: Printer, pack: PackPod, test: str, start: datetime) -> Output:
    unit = printer.unit(pack.stage, test, pack.nodes[0])
    if unit is None:
        return Output(f"nvcregen rehearse: {test} is not in the plan\n", FAILED_RC, 0)
    seconds = max(1, round(unit.expected_ms / 1000))
    failing = printer.fails(pack.nodes)
    maker = _MAKERS.get(kind_of(unit.test).log_format or "")
    if maker is None:
        kind = kind_of(unit.test).name
        return Output(f"nvcregen rehearse: no output is made for a {kind} test\n", FAILED_RC, 0)
    return maker(printer, unit, Section(pack, start, seconds, failing))


def dcgm_output(printer: Printer, unit: TestUnit, at: Section) -> Output:
    """DCGM's script on one node: its begin line, `dcgmi diag --json`, its exit line."""
    level = int(kind_of(unit.test).block(unit.test).level)
    rc = FAILED_RC if at.failing else 0
    body = diag_json(level, unit.pool.gpus_per_node, dcgm_version(unit.image), at.failing)
    text = (
        f"@@nvcregen-dcgm begin node={at.pack.nodes[0]} pod={at.pack.pod}"
        f" start={_stamp(at.start)}\n{body}"
        f"nvcregen: dcgmi diag --run {level} exit={rc} seconds={at.seconds}\n"
    )
    return Output(text, rc, at.seconds, exit_line=False)


def nccl_output(printer: Printer, unit: TestUnit, at: Section) -> Output:
    """nccl-tests over the pack's nodes (one node: its ranks on the pod's host), NCCL's network.

    Every size of the test's sweep at the physics model's figure for it (`busbw_at`: the
    expected bus bandwidth, latency floor included), less a few steps of 0.1% (at least
    the 0.01 GB/s nccl-tests prints): the two largest sizes' steps count the round, so
    rounds 1 to 16 never print the same table; every other size of 1 GB/s or more steps
    by a hash of the pod, test and nodes, so two pods' tables differ too. A failing run
    prints a tenth of each figure. Sizes that move no bytes (an all-gather's smallest,
    printed as 0) are left out.
    """
    collective = str(kind_of(unit.test).block(unit.test).test_type)
    share = FAILING_SHARE if at.failing else 1.0
    nodes = at.pack.nodes
    hosts = [at.pack.pod] if len(nodes) == 1 else list(nodes)
    per_host = unit.pool.gpus_per_node
    ranks = per_host * len(hosts)
    sizes = [s for s in measured_sizes(unit, printer.catalog) if s]  # no empty rows
    crc = zlib.crc32(f"{at.pack.pod}/{unit.stage.name}/{unit.test.name}/{nodes}".encode())
    turn = at.pack.round - 1
    rows = []
    for i, size in enumerate(sizes):
        value = (busbw_at(unit, printer.catalog, size) or 0.0) * share
        from_top = len(sizes) - 1 - i
        if from_top < ROUND_ROWS:
            steps = turn // 4**from_top % 4
        else:
            steps = (crc >> 2 * (i % 16)) & 3 if value >= VARIED else 0
        value -= steps * max(value * JITTER, PRINTED)
        rows.append(
            ncclprint.Row(
                size,
                ncclprint.time_for(size, value, collective, ranks),
                ncclprint.time_for(size, value * 0.998, collective, ranks),
            )
        )
    head = [
        ncclprint.banner(min(sizes), max(sizes)),
        *ncclprint.gpus(hosts, per_host, f"NVIDIA {unit.pool.spec.model}"),
    ]
    network = expected_transport(unit) if len(nodes) > 1 else None
    debug = [line.format(host=hosts[0]) for line in NCCL_DEBUG.get(network or "", ())]
    table = ncclprint.table(collective, ranks, rows)
    return Output("\n".join([*head, *debug, *table]) + "\n", 0, at.seconds)


Maker = Callable[[Printer, TestUnit, Section], Output]
# what each kind's runs print (`TestKind.log_format`), as `results/logruns.py` reads it
_MAKERS: dict[str, Maker] = {"dcgm-diag": dcgm_output, "nccl-tests": nccl_output}
