"""Checks of admission and placement: never admitted, partly placed, too many at once (pure).

- NVC670: a run that can never start: Kueue refuses it for good, or the nodes it may use
  cannot hold its pods even when idle, or its target matches too few nodes.
- NVC671: a multi-node workload whose pods bind one by one (no queue, or a ClusterQueue
  without a topology) and that may run beside another workload on the same nodes: it
  can hold some of its nodes while the other holds the rest; when both bind one by one,
  each can wait for the other until its deadline (deadlock).
- NVC674: more workloads of one step may run at once on a pool than
  `maxConcurrentJobs`, as the quota (or, without a queue, the nodes) allows.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from nvcregen.core.errors import Severity
from nvcregen.replay.context import (
    CONCURRENCY,
    NEVER_ADMITTED,
    PARTIAL,
    Context,
    Key,
    queue_pointer,
)
from nvcregen.replay.kueue import Admission
from nvcregen.replay.model import Problem, Run, Workload
from nvcregen.replay.placement import candidate_nodes, counted

QUEUE_HINT = (
    "name the site's LocalQueue (kueue.x-k8s.io/queue-name) so Kueue admits all its pods "
    "together, on free nodes (a flavor with a topology)"
)


def never_admitted(ctx: Context) -> Iterator[Problem]:
    """NVC670, once per run: the first reason it can never start."""
    for index, run in enumerate(ctx.runs):
        yield from run.problems
        key = next((k for k in _keys(ctx, index) if k in ctx.blocked), None)
        if key is None:
            continue
        workload, admission = ctx.workload(key), ctx.admissions[key]
        if admission.refusal is not None:
            message, hint = admission.refusal
            pointer = queue_pointer(run)
        else:
            message, hint, pointer = _no_room(ctx, workload, admission), _ROOM_HINT, "/spec"
        yield Problem(
            run.source.file,
            pointer,
            NEVER_ADMITTED,
            f"{workload.label} can never start: {message}",
            hint=hint,
        )


_ROOM_HINT = "request what one node has, or let the run use nodes of a pool that has it"


def _no_room(ctx: Context, workload: Workload, admission: Admission) -> str:
    cluster = ctx.cluster.fresh()
    for podset in workload.podsets:
        nodes = cluster.eligible(podset, admission.node_labels)
        if not nodes:
            return "no node of the site matches its node selector, affinity or node names"
    names = sorted(candidate_nodes(workload, cluster, admission.node_labels))
    wants = "; ".join(
        f"{p.count} x " + ", ".join(f"{a} {r}" for r, a in sorted(p.requests.items()) if counted(r))
        for p in workload.podsets
        if any(counted(r) for r in p.requests)
    )
    by_name = {n.name: n for n in ctx.facts.nodes}
    has = "; ".join(
        f"{name}: " + ", ".join(f"{a} {r}" for r, a in sorted(by_name[name].capacity.items()))
        for name in names
    )
    return (
        f"the nodes it may use cannot hold its pods ({wants}) even when nothing else runs "
        f"({has or 'no node'})"
    )


def _keys(ctx: Context, run: int) -> list[Key]:
    return [
        (run, b, w)
        for b, batch in enumerate(ctx.runs[run].batches)
        for w in range(len(batch.workloads))
    ]


def _binds_one_by_one(workload: Workload, admission: Admission) -> bool:
    """Nothing places all its pods before they start (no queue; a queue without topology)."""
    if workload.admitter == "none":
        return True
    return workload.admitter == "kueue" and admission.queue is not None and not admission.tas


def partial_placement(ctx: Context) -> Iterator[Problem]:
    """NVC671, once per run with a multi-node workload whose pods may bind partly."""
    cluster = ctx.cluster.fresh()
    keys = [k for k in ctx.admissions if k not in ctx.blocked]
    nodes = {
        k: candidate_nodes(ctx.workload(k), cluster, ctx.admissions[k].node_labels) for k in keys
    }
    reported: set[int] = set()
    for key in keys:
        workload, admission = ctx.workload(key), ctx.admissions[key]
        if (
            key[0] in reported
            or workload.gpu_pods < 2
            or not _binds_one_by_one(workload, admission)
        ):
            continue
        other = next((k for k in keys if _competes(ctx, key, k, nodes)), None)
        if other is None:
            continue
        reported.add(key[0])
        yield _partial(ctx, key, other)


def _competes(ctx: Context, key: Key, other: Key, nodes: dict[Key, frozenset[str]]) -> bool:
    if not ctx.may_overlap(ctx.runs[key[0]], ctx.runs[other[0]]) or not nodes[key] & nodes[other]:
        return False
    one, two = ctx.admissions[key], ctx.admissions[other]
    if one.queue is None or two.queue is None or one.queue.name != two.queue.name:
        return True
    total = {k: one.usage.get(k, 0) + two.usage.get(k, 0) for k in {*one.usage, *two.usage}}
    quota = one.queue.quota
    return all(amount <= quota.get(k, 0) for k, amount in total.items())


def _partial(ctx: Context, key: Key, other: Key) -> Problem:
    run = ctx.runs[key[0]]
    workload, rival = ctx.workload(key), ctx.workload(other)
    rival_loose = rival.gpu_pods >= 2 and _binds_one_by_one(rival, ctx.admissions[other])
    how = (
        "no queue admits it" if workload.admitter == "none" else "its ClusterQueue has no topology"
    )
    if rival_loose:
        what = (
            f"deadlock-prone: {workload.label} and {rival.label} may run at the same time on the "
            f"same nodes and both bind their {workload.gpu_pods} and {rival.gpu_pods} GPU pods one "
            "by one, so each can hold part of the nodes the other needs and wait for the rest "
            "until its deadline"
        )
    else:
        what = (
            f"{workload.label} may be placed partially: its {workload.gpu_pods} GPU pods bind one "
            f"by one ({how}) and {rival.label} may hold some of the same nodes meanwhile"
        )
    return Problem(run.source.file, queue_pointer(run), PARTIAL, what, hint=QUEUE_HINT)


def concurrency(ctx: Context) -> Iterator[Problem]:
    """NVC674: a quota above the window, or a step running more than it at once."""
    over = list(_quota_windows(ctx))
    yield from over
    quotas = {p.file for p in over}
    reported: set[tuple[str, str]] = set()
    pools = sorted({n.pool for n in ctx.facts.nodes})
    for step in ctx.gating.steps:
        members = ctx.members.get(step, [])
        if not members:
            continue
        together = ctx.together(step)
        for pool in pools:
            found = _peak(ctx, together, pool)
            if found is None or found[0] <= ctx.facts.max_concurrent_jobs:
                continue
            if found[1] in quotas or (found[1], pool) in reported:
                continue
            reported.add((found[1], pool))
            yield _too_many(ctx, members[0], pool, *found)


def _quota_windows(ctx: Context) -> Iterator[Problem]:
    """NVC674 (error) per ClusterQueue: its quota holds more than N of its largest run."""
    window = ctx.facts.max_concurrent_jobs
    for queue in ctx.queues.cluster.values():
        keys = [k for k, a in ctx.admissions.items() if _in(a, queue.name) and k not in ctx.blocked]
        if not keys:
            continue
        key = max(keys, key=lambda k: (ctx.workload(k).gpus, k))
        usage = ctx.admissions[key].usage
        quota = queue.quota
        held = min((quota.get(k, 0) // amount for k, amount in usage.items() if amount), default=0)
        if held > window:
            workload = ctx.workload(key)
            yield Problem(
                queue.file,
                "/spec/resourceGroups",
                CONCURRENCY,
                f"ClusterQueue {queue.name}'s quota admits {held} of its largest run "
                f"({workload.label}, {workload.gpus} GPUs) at once, above maxConcurrentJobs "
                f"{window}",
                hint="size the quota to maxConcurrentJobs of the largest run "
                "(docs/design/0007-admission.md)",
            )


def _in(admission: Admission, name: str) -> bool:
    return admission.queue is not None and admission.queue.name == name


def _peak(ctx: Context, runs: Sequence[Run], pool: str) -> tuple[int, str, str] | None:
    """(most workloads at once, where to report, what bounds them) on one pool."""
    names = {n.name for n in ctx.facts.nodes if n.pool == pool}
    cluster = ctx.cluster.fresh()
    keys = [
        k
        for run in runs
        for k in _widest(ctx, run)
        if k not in ctx.blocked
        and _bounded(ctx.admissions[k], ctx.workload(k))
        and ctx.workload(k).gpus
        and candidate_nodes(ctx.workload(k), cluster, ctx.admissions[k].node_labels) <= names
    ]
    if not keys:
        return None
    queue = ctx.admissions[keys[0]].queue
    if queue is not None:
        return _greedy(ctx, keys), queue.file, f"ClusterQueue {queue.name}'s quota admits them"
    bound = "no queue admits them: only the nodes bound them"
    return _greedy(ctx, keys), ctx.runs[keys[0][0]].source.file, bound


def _bounded(admission: Admission, workload: Workload) -> bool:
    """Whether the tree says what bounds it: a quota in the tree, or nothing (no queue)."""
    return admission.queue is not None or workload.admitter == "none"


def _widest(ctx: Context, run: Run) -> list[Key]:
    """Every workload of a run's widest batch (the batch that can run the most at once)."""
    index = ctx.position[id(run)]
    if not run.batches:
        return []
    batch_no = max(range(len(run.batches)), key=lambda b: (run.batches[b].width, -b))
    return [(index, batch_no, w) for w in range(len(run.batches[batch_no].workloads))]


def _greedy(ctx: Context, keys: Sequence[Key]) -> int:
    """How many of these workloads fit at once, smallest first (quota, nodes, batch width)."""
    cluster = ctx.cluster.fresh()
    used: dict[tuple[str, str, str], int] = {}
    per_run: dict[int, int] = {}
    for key in sorted(keys, key=lambda k: (ctx.workload(k).gpus, k)):
        admission = ctx.admissions[key]
        width = ctx.runs[key[0]].batches[key[1]].width
        if per_run.get(key[0], 0) >= width or not _take_quota(admission, used):
            continue
        if cluster.place(ctx.workload(key), admission.node_labels) is None:
            _give_quota(admission, used)
            continue
        per_run[key[0]] = per_run.get(key[0], 0) + 1
    return sum(per_run.values())


def _take_quota(admission: Admission, used: dict[tuple[str, str, str], int]) -> bool:
    queue = admission.queue
    if queue is None:
        return True
    quota = {(f, r): q for g in queue.groups for f, qs in g.flavors for r, q in qs.items()}
    if any(
        used.get((queue.name, f, r), 0) + a > quota.get((f, r), 0)
        for (f, r), a in admission.usage.items()
    ):
        return False
    for (f, r), amount in admission.usage.items():
        used[(queue.name, f, r)] = used.get((queue.name, f, r), 0) + amount
    return True


def _give_quota(admission: Admission, used: dict[tuple[str, str, str], int]) -> None:
    queue = admission.queue
    for (f, r), amount in admission.usage.items():
        if queue is not None:
            used[(queue.name, f, r)] -= amount


def _too_many(ctx: Context, run: Run, pool: str, total: int, file: str, bound: str) -> Problem:
    window = ctx.facts.max_concurrent_jobs
    queued = file != run.source.file
    message = (
        f"up to {total} jobs of {ctx.step_label(run)} may run at once on pool {pool}, above "
        f"maxConcurrentJobs {window}: {bound}"
    )
    if queued:
        message += (
            " (its quota holds the window's worth of the plan's largest run; smaller runs "
            "share those GPUs: the same GPU-hours, a shorter step)"
        )
    return Problem(
        file,
        "/spec/resourceGroups" if queued else queue_pointer(run),
        CONCURRENCY,
        message,
        Severity.WARNING if queued else Severity.ERROR,
        "a ClusterQueue per run size holds every step to the window" if queued else QUEUE_HINT,
    )
