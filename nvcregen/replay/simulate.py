"""The replay's clock: steps apply, Kueue admits, pods bind, runs take their time (pure).

A discrete-event simulation, deterministic by construction. At each moment: every step
whose `after` steps are done applies and releases its runs' first batch; pending
workloads are tried in Kueue's order (priority class value, then release time, then
file and position), each admitted when its ClusterQueue has quota left and, all at once,
nodes with room for every pod; admitted workloads run for their duration (expected, or
the timeout for the worst case). A workload outside Kueue is placed the same way here:
whether its pods could instead bind partly is a structural finding (`checks.py`), not
part of the clock. Workloads that can never be admitted never start; the runs, steps and
plan behind them never finish, and the timeline says so (`end_ms` None).
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from nvcregen.replay.gating import Gating
from nvcregen.replay.kueue import Admission
from nvcregen.replay.model import Run, Workload
from nvcregen.replay.placement import Cluster

Case = Literal["expected", "worst"]


@dataclass(frozen=True)
class Slot:
    """One workload on the clock: when it ran and on which nodes."""

    run: str
    label: str
    start_ms: int
    end_ms: int
    nodes: tuple[str, ...]
    gpus: int


@dataclass(frozen=True)
class Timeline:
    """What the clock recorded.

    Attributes:
        slots: Every workload that ran, in start order.
        runs: (first start, last end) per run path; None where it never started or ended.
        steps: (applied, done) per step key; None where it never was.
        end_ms: When the last run ended; None when some run never finishes.

    """

    slots: tuple[Slot, ...]
    runs: Mapping[str, tuple[int | None, int | None]]
    steps: Mapping[str, tuple[int | None, int | None]]
    end_ms: int | None

    @property
    def stuck(self) -> tuple[str, ...]:
        """Runs that never finish."""
        return tuple(path for path, (_, end) in self.runs.items() if end is None)


@dataclass
class _Job:
    run: int
    batch: int
    index: int
    workload: Workload
    admission: Admission
    priority: int
    released: int = 0


@dataclass
class _Clock:
    runs: Sequence[Run]
    gating: Gating
    admissions: Mapping[tuple[int, int, int], Admission]
    priorities: Mapping[str, int]
    cluster: Cluster
    case: Case
    blocked: frozenset[tuple[int, int, int]]
    now: int = 0
    pending: list[_Job] = field(default_factory=list)
    running: list[tuple[int, int, _Job, list[tuple[str, dict[str, int]]]]] = field(
        default_factory=list
    )
    used: dict[tuple[str, str, str], int] = field(default_factory=dict)
    cursor: dict[int, list[int]] = field(default_factory=dict)  # run -> [batch, released, done]
    run_times: dict[int, list[int | None]] = field(default_factory=dict)
    step_times: dict[str, list[int | None]] = field(default_factory=dict)
    slots: list[Slot] = field(default_factory=list)
    seq: int = 0
    by_step: dict[str, list[int]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for index, run in enumerate(self.runs):
            self.by_step.setdefault(self.gating.step_of.get(run.source.path, ""), []).append(index)

    def go(self) -> Timeline:
        """Run the clock until nothing more can happen."""
        self._settle()
        while self.running:
            self.now = self.running[0][0]
            while self.running and self.running[0][0] == self.now:
                _, _, job, bindings = heapq.heappop(self.running)
                self._finish(job, bindings)
            self._settle()
        return self._timeline()

    def _settle(self) -> None:
        """Apply every step that may apply (which may make others done), then admit what fits."""
        while self._apply_steps():
            pass
        self._admit()  # starting a workload applies no step and frees nothing

    def _apply_steps(self) -> bool:
        changed = False
        for key, step in self.gating.steps.items():
            times = self.step_times.setdefault(key, [None, None])
            if times[0] is None and all(self._done(k) for k in step.after):
                times[0] = self.now
                changed = True
                for index in self.by_step.get(key, []):
                    self._start_run(index)
            if times[0] is not None and times[1] is None and self._waited_done(key):
                times[1] = self.now
                changed = True
        return changed

    def _done(self, key: str) -> bool:
        times = self.step_times.get(key)
        return key not in self.gating.steps or (times is not None and times[1] is not None)

    def _waited_done(self, key: str) -> bool:
        return all(
            self.run_times.get(i, [None, None])[1] is not None
            for i in self.by_step.get(key, [])
            if self.gating.waited(self.runs[i].source.path)
        )

    def _start_run(self, index: int) -> None:
        self.run_times[index] = [None, None]
        self.cursor[index] = [0, 0, 0]
        self._release(index)

    def _release(self, index: int) -> None:
        """Release the run's next workloads, as far as its batch allows."""
        batch_no, released, done = self.cursor[index]
        batches = self.runs[index].batches
        if batch_no >= len(batches):
            if batches or not self.runs[index].problems:  # a run that cannot run never ends
                self.run_times[index][1] = self.now
            return
        batch = batches[batch_no]
        while released < len(batch.workloads) and released - done < batch.width:
            workload = batch.workloads[released]
            admission = self.admissions[(index, batch_no, released)]
            priority = self.priorities.get(workload.priority_class or "", 0)
            job = _Job(index, batch_no, released, workload, admission, priority, self.now)
            self.pending.append(job)
            released += 1
        self.cursor[index] = [batch_no, released, done]

    def _admit(self) -> bool:
        """Admit, in Kueue's order, every pending workload that fits now."""
        started: list[_Job] = []
        held: set[str] = set()  # StrictFIFO queues whose head does not fit
        for job in sorted(self.pending, key=self._order):
            queue = job.admission.queue
            if (job.run, job.batch, job.index) in self.blocked or (queue and queue.name in held):
                continue
            if not self._quota_left(job):
                held |= {queue.name} if queue and queue.strict_fifo else set()
                continue
            bindings = self.cluster.place(job.workload, job.admission.node_labels)
            if bindings is None:
                held |= {queue.name} if queue and queue.strict_fifo else set()
                continue
            self._run(job, bindings)
            started.append(job)
        if started:
            done = {id(job) for job in started}
            self.pending = [job for job in self.pending if id(job) not in done]
        return bool(started)

    def _order(self, job: _Job) -> tuple[int, int, str, int, int]:
        return (-job.priority, job.released, self.runs[job.run].source.path, job.batch, job.index)

    def _quota_left(self, job: _Job) -> bool:
        queue = job.admission.queue
        if queue is None:
            return True
        quota = queue.quota
        return all(
            self.used.get((queue.name, f, r), 0) + amount <= quota.get((f, r), 0)
            for (f, r), amount in job.admission.usage.items()
        )

    def _run(self, job: _Job, bindings: list[tuple[str, dict[str, int]]]) -> None:
        queue = job.admission.queue
        for (flavor, resource), amount in job.admission.usage.items():
            key = (queue.name if queue else "", flavor, resource)
            self.used[key] = self.used.get(key, 0) + amount
        duration = job.workload.expected_ms if self.case == "expected" else job.workload.timeout_ms
        times = self.run_times[job.run]
        times[0] = self.now if times[0] is None else times[0]
        nodes = tuple(sorted({name for name, want in bindings if want}))
        run = self.runs[job.run]
        self.slots.append(
            Slot(
                run.source.path,
                job.workload.label,
                self.now,
                self.now + duration,
                nodes,
                job.workload.gpus,
            )
        )
        heapq.heappush(self.running, (self.now + duration, self.seq, job, bindings))
        self.seq += 1

    def _finish(self, job: _Job, bindings: list[tuple[str, dict[str, int]]]) -> None:
        self.cluster.release(bindings)
        queue = job.admission.queue
        for (flavor, resource), amount in job.admission.usage.items():
            self.used[(queue.name if queue else "", flavor, resource)] -= amount
        batch_no, released, done = self.cursor[job.run]
        done += 1
        if done == len(self.runs[job.run].batches[batch_no].workloads):
            batch_no, released, done = batch_no + 1, 0, 0
        self.cursor[job.run] = [batch_no, released, done]
        self._release(job.run)

    def _timeline(self) -> Timeline:
        runs = {
            run.source.path: _pair(self.run_times.get(i, [None, None]))
            for i, run in enumerate(self.runs)
        }
        steps = {key: _pair(self.step_times.get(key, [None, None])) for key in self.gating.steps}
        ends = [end for _, end in runs.values()]
        end = (
            None
            if any(e is None for e in ends)
            else max((e for e in ends if e is not None), default=0)
        )
        return Timeline(tuple(self.slots), runs, steps, end)


def _pair(times: list[int | None]) -> tuple[int | None, int | None]:
    return times[0], times[1]


def simulate(
    runs: Sequence[Run],
    gating: Gating,
    admissions: Mapping[tuple[int, int, int], Admission],
    priorities: Mapping[str, int],
    cluster: Cluster,
    *,
    case: Case = "expected",
    blocked: frozenset[tuple[int, int, int]] = frozenset(),
) -> Timeline:
    """Replay the plan on the clock; `blocked` workloads never start (never admissible).

    Args:
        runs: The tree's runs.
        gating: Their steps.
        admissions: How each workload (run, batch, index) is admitted.
        priorities: WorkloadPriorityClass values by name.
        cluster: The nodes, all free.
        case: Durations: the expected ones, or every workload to its timeout.
        blocked: Workloads that can never start.

    """
    clock = _Clock(runs, gating, admissions, priorities, cluster, case, blocked)
    return clock.go()
