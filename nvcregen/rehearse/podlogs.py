"""The logs the twin's pods serve: what each run would print, made from the plan (pure).

kwok completes a pod without running anything; a rehearsal gives each pod the log its
run would print (`docs/design/0019-twin.md`), so that `collect` reads it back as from a
cluster. A run of one test (`readiness.packing: perRun`, or a test alone in its stage)
prints that test's output alone: its Job's pod on its node, its TrainJob's launcher over
the nodes its pods ran on. With `readiness.packing: packed` (`engines/readiness/trainer/packed.py`):

- a node pack's pod prints, for each of its tests, a section from `@@nvcregen-pack begin
  test=<t> node=<node> pod=<pod> start=<t>` to `@@nvcregen-pack end test=<t> rc=<n>`
  holding that test's output on its node: what the test's script prints (DCGM's,
  node-health's, nvbandwidth's, the RDMA rails', link counters', burn-in's), or
  nccl-tests' output of one process per GPU, the ranks on the pod's host (its hostname is
  its name), and the exit line;
- a group pack's launcher prints a section per test (begin, output, the launcher's exit
  line, end) with nccl-tests' ranks on the group's hosts (the nodes its pods ran on).

A pair run (RDMA rails between two nodes, never packed) prints on both of its pods: its
worker the servers' log, its launcher the client's, each naming the node its pod ran on.

Each test's output is made by its kind's maker (`makers/registry.py`, keyed by the
kind's name): the physics model's and the catalog's expected figures, or, on every run
holding a failing node (`failing.py`), a failure in the kind's own terms (DCGM a failed
test, NCCL a tenth of every figure, node-health a check that fails, nvbandwidth a tenth
of the floor, an RDMA rail below its floor, a port's link down and its symbol errors past
their limit, burn-in's GPU 0 under its floor). Durations are the plan's (`expected_ms`);
each section starts when the one before would have ended. A plan holding a kind without
a maker is refused before the twin starts (`prepare.py`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

from nvcregen.compile.readiness.mpi import NODE
from nvcregen.core.labels import ROUND, SERVER_LOG, STAGE, TEST, TESTS
from nvcregen.kindapi.registry import kind_of
from nvcregen.rehearse.makers.registry import maker_of
from nvcregen.rehearse.printer import FAILED_RC, Output, PackPod, Printer, Role, Section, stamp

MARK = "@@nvcregen-pack"


def node_pack_log(printer: Printer, pack: PackPod) -> str:
    """A node pack's pod log on its node: a section per test, one after the other."""
    (node,) = pack.nodes
    lines: list[str] = []
    at = pack.start
    for test in pack.tests:
        output = _output(printer, pack, test, at)
        lines += [f"{MARK} begin test={test} node={node} pod={pack.pod} start={stamp(at)}\n"]
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
        lines += [f"{MARK} begin test={test} start={stamp(at)}\n", output.text]
        lines += [f"nvcregen: {test} exit={output.rc} seconds={output.seconds}\n"]
        lines += [f"{MARK} end test={test} rc={output.rc}\n"]
        at += timedelta(seconds=output.seconds)
    return "".join(lines)


def run_log(printer: Printer, pack: PackPod) -> str:
    """A run of one test (`packing: perRun`, or a test alone in its stage): its output alone.

    What the run's own script prints: the test's output and, where the script around it
    prints one (nccl-tests' launcher), its exit line; no pack sections.
    """
    (test,) = pack.tests
    output = _output(printer, pack, test, pack.start)
    if not output.exit_line:
        return output.text
    return f"{output.text}nvcregen: {test} exit={output.rc} seconds={output.seconds}\n"


def run_pod_log(
    printer: Printer, run: Mapping[str, Any], pod: str, nodes: Sequence[str], start: datetime,
    launcher: bool, on: str = "",
) -> str:  # fmt: skip
    """The log of one pod of a run (its Job or TrainJob object), "" for no output.

    A packed run names its tests (`nvcregen.io/tests`): a node pack's pod (of a Job)
    prints its sections on its node (`nodes`, one); a group pack's launcher (`launcher`,
    of a TrainJob) prints its sections over `nodes`, those the run's pods ran on. A run
    of one test (its `nvcregen.io/test` label a test of the plan's stage) prints that
    test's output alone, on its Job's node or from its TrainJob's launcher. A pair run
    (a TrainJob annotated `nvcregen.io/server-log: node`) prints on both pods: its
    worker the server's log, its launcher the client's, each on `on`, the node the pod
    ran on, its partner the other of `nodes`. Any other pod (an MPI worker, a run of no
    test of the plan) prints nothing nvcregen reads.
    """
    meta = run.get("metadata") or {}
    labels = meta.get("labels") or {}
    tests = tuple(t for t in str((meta.get("annotations") or {}).get(TESTS) or "").split(",") if t)
    round_ = str(labels.get(ROUND) or "")
    stage = str(labels.get(STAGE) or "")
    alone = str(labels.get(TEST) or "")
    packed = bool(tests)
    if not packed and nodes and printer.unit(stage, alone, nodes[0]) is not None:
        tests = (alone,)
    pack = PackPod(
        stage,
        tests,
        int(round_) if round_.isdigit() and len(round_) < 6 else 1,
        tuple(nodes),
        pod,
        start,
    )
    if not tests or not nodes:
        return ""
    if run.get("kind") == "Job" and len(nodes) == 1:
        return node_pack_log(printer, pack) if packed else run_log(printer, pack)
    if run.get("kind") == "TrainJob" and not packed and _pair_run(meta):
        role: Role = "client" if launcher else "server"
        ordered = (on, *(n for n in nodes if n != on)) if on in nodes else pack.nodes
        return run_log(printer, replace(pack, nodes=ordered, role=role, run=str(meta["name"])))
    if run.get("kind") == "TrainJob" and launcher:
        if not packed:
            return run_log(printer, pack)
        return launcher_log(printer, replace(pack, pod=str(meta.get("name"))))
    return ""


def _pair_run(meta: Mapping[str, Any]) -> bool:
    """Whether a TrainJob's server pod (its `node` worker) prints evidence too: a pair run."""
    return (meta.get("annotations") or {}).get(SERVER_LOG) == NODE


def _output(printer: Printer, pack: PackPod, test: str, start: datetime) -> Output:
    unit = printer.unit(pack.stage, test, pack.nodes[0])
    if unit is None:
        return Output(f"nvcregen rehearse: {test} is not in the plan\n", FAILED_RC, 0)
    seconds = max(1, round(unit.expected_ms / 1000))
    failing = printer.fails(pack.nodes)
    kind = kind_of(unit.test).name
    maker = maker_of(kind)
    if maker is None:  # `prepare` refuses such a plan before the twin starts
        return Output(f"nvcregen rehearse: no output is made for a {kind} test\n", FAILED_RC, 0)
    return maker(printer, unit, Section(pack, start, seconds, failing))
