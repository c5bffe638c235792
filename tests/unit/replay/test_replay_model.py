"""The replay's parts by hand: node rules, quantities, admission, the clock."""

from __future__ import annotations

import dataclasses
import re

import pytest

from nvcregen.plan.facts import GPU, Node, PlanFacts
from nvcregen.replay.gating import Gating, Step, relative, under
from nvcregen.replay.kueue import Admission, ClusterQueue, Flavor, Group, Queues, admit
from nvcregen.replay.model import Batch, PodSet, Run, TreeObject, Workload
from nvcregen.replay.placement import Cluster
from nvcregen.replay.selectors import (
    Constraint,
    Requirement,
    Term,
    pod_constraint,
    quantity,
    requests_of,
    target_constraint,
)
from nvcregen.replay.simulate import simulate

NIC = "rdma/ib"


def node(name: str, product: str = "H100", gpus: int = 8) -> Node:
    labels = {"kubernetes.io/hostname": name, "nvidia.com/gpu.product": product, "rack": "7"}
    return Node(name, "pool", labels, {GPU: gpus, NIC: 2})


NODES = (node("a"), node("b"), node("c", "L20"))


def facts(**changes: object) -> PlanFacts:
    base = PlanFacts("lab", NODES, 2, 3_600_000, 100.0, "out/lab")
    return dataclasses.replace(base, **changes)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("requirement", "allowed"),
    [
        (Requirement("nvidia.com/gpu.product", "In", ("H100",)), {"a", "b"}),
        (Requirement("nvidia.com/gpu.product", "NotIn", ("H100",)), {"c"}),
        (Requirement("rack", "Exists"), {"a", "b", "c"}),
        (Requirement("zone", "DoesNotExist"), {"a", "b", "c"}),
        (Requirement("rack", "Gt", ("6",)), {"a", "b", "c"}),
        (Requirement("rack", "Gt", ("7",)), set()),
        (Requirement("rack", "Lt", ("8",)), {"a", "b", "c"}),
        (Requirement("rack", "Lt", ("x",)), set()),
    ],
)
def test_requirement_operators(requirement: Requirement, allowed: set[str]) -> None:
    constraint = Constraint(terms=(Term((requirement,)),))
    assert {n.name for n in NODES if constraint.allows(n)} == allowed


def test_affinity_terms_are_or_ed_and_fields_match_the_node_name() -> None:
    pod = {
        "nodeSelector": {"rack": "7"},
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {
                            "matchFields": [
                                {"key": "metadata.name", "operator": "In", "values": ["a"]}
                            ]
                        },
                        {
                            "matchExpressions": [
                                {
                                    "key": "nvidia.com/gpu.product",
                                    "operator": "In",
                                    "values": ["L20"],
                                }
                            ]
                        },
                    ]
                }
            }
        },
    }
    assert {n.name for n in NODES if pod_constraint(pod).allows(n)} == {"a", "c"}
    assert not pod_constraint({"nodeSelector": {"rack": "8"}}).allows(NODES[0])


def test_nvcre_target_ands_selector_expressions_and_names() -> None:
    target = {
        "nodeSelector": {"rack": "7"},
        "matchExpressions": [
            {"key": "nvidia.com/gpu.product", "operator": "In", "values": ["H100"]}
        ],
        "nodeNames": ["b", "c"],
    }
    assert [n.name for n in NODES if target_constraint(target).allows(n)] == ["b"]


def test_flavor_matching_keeps_only_the_flavor_keys() -> None:
    # A hostname pin is dropped (the flavor does not name hostnames); the product is kept.
    pinned = Constraint(
        (("nvidia.com/gpu.product", "H100"),),
        (Term((Requirement("kubernetes.io/hostname", "In", ("a",)),)),),
    )
    assert pinned.allows_flavor({"nvidia.com/gpu.product": "H100"})
    assert not pinned.allows_flavor({"nvidia.com/gpu.product": "L20"})


@pytest.mark.parametrize(
    ("resource", "text", "value"),
    [
        ("cpu", "500m", 500),
        ("cpu", "2", 2000),
        ("cpu", "0.5", 500),
        ("memory", "1Gi", 2**30),
        ("memory", "1G", 10**9),
        (GPU, "8", 8),
        (GPU, 8, 8),
        ("memory", "1.5Ki", 1536),
    ],
)
def test_quantities(resource: str, text: object, value: int) -> None:
    assert quantity(resource, text) == value


def test_a_remembered_quantity_is_per_unit_and_a_refusal_names_the_value_given() -> None:
    assert quantity("cpu", "2") == 2000
    assert quantity("memory", "2") == 2  # the same text, remembered for cpu: not millicores
    assert quantity("cpu", " 2 ") == 2000
    for bad in ("2x", ["2"]):
        with pytest.raises(ValueError, match=re.escape(f"not a quantity: {bad!r}")):
            quantity("cpu", bad)


def test_requests_fall_back_to_limits_and_skip_what_is_not_a_quantity() -> None:
    found = requests_of({"limits": {GPU: 8, "cpu": "4"}, "requests": {"cpu": "1", "memory": "x"}})
    assert found == {GPU: 8, "cpu": 1000}


def workload(
    label: str, pods: int, *, names: tuple[str, ...] | None = None, **kw: object
) -> Workload:
    constraint = Constraint(names=frozenset(names) if names else None)
    podset = PodSet("node", pods, {GPU: 8}, constraint)
    return Workload(label, (podset,), 60_000, 120_000, **kw)  # type: ignore[arg-type]


def queue(gpus: int, *, strict: bool = False, covered: tuple[str, ...] = (GPU, "pods")) -> Queues:
    group = Group(frozenset(covered), (("f", {GPU: gpus, "pods": 100}),))
    cq = ClusterQueue("cq", "queues/cq.yaml", (group,), frozenset({"ns"}), strict)
    return Queues({("ns", "q"): "cq"}, {"cq": cq}, {"f": Flavor("f", {}, True)}, {"high": 10})


def test_admission_refusals() -> None:
    queued = workload("w", 2, admitter="kueue", queue="q")
    assert admit(queued, "ns", queue(16), facts()).refusal is None
    assert "does not exist in namespace 'other'" in str(
        admit(queued, "other", queue(16), facts()).refusal
    )
    assert "nominal quota of flavor 'f' (8)" in str(admit(queued, "ns", queue(8), facts()).refusal)
    uncovered = admit(queued, "ns", queue(16, covered=("pods",)), facts()).refusal
    assert uncovered is not None and "it requests nvidia.com/gpu" in uncovered[0]
    external = facts(external_queues=frozenset({("ns", "q")}))
    assert admit(queued, "ns", Queues(), external) == Admission(tas=True)
    assert admit(workload("w", 2), "ns", queue(16), facts()) == Admission()


def one_step(*runs: Run) -> Gating:
    return Gating({"s": Step("s", "step", "")}, {r.source.path: "s" for r in runs})


def run(path: str, *batches: Batch) -> Run:
    return Run(
        TreeObject(path, path, {"kind": "Job", "metadata": {"name": path}}),
        "st",
        "t",
        None,
        batches,
    )


def test_kueue_order_priority_then_release_then_file() -> None:
    low = run("r/1.yaml", Batch((workload("low", 2, admitter="kueue", queue="q"),)))
    high = run(
        "r/2.yaml",
        Batch((workload("high", 2, admitter="kueue", queue="q", priority_class="high"),)),
    )
    queues = queue(16)
    admissions = {
        (i, 0, 0): admit(r.batches[0].workloads[0], "ns", queues, facts())
        for i, r in enumerate((low, high))
    }
    timeline = simulate(
        (low, high), one_step(low, high), admissions, queues.priorities, Cluster(NODES[:2])
    )
    assert [(s.label, s.start_ms) for s in timeline.slots] == [("high", 0), ("low", 60_000)]
    assert timeline.end_ms == 120_000


def test_best_effort_passes_a_head_that_does_not_fit_strict_fifo_waits() -> None:
    big = run("r/1.yaml", Batch((workload("big", 2, admitter="kueue", queue="q"),)))
    small = run("r/2.yaml", Batch((workload("small", 1, admitter="kueue", queue="q"),)))
    first = run(
        "r/0.yaml", Batch((workload("first", 1, admitter="kueue", queue="q", names=("a",)),))
    )
    runs = (first, big, small)
    for strict, order in ((False, ["first", "small", "big"]), (True, ["first", "big", "small"])):
        queues = queue(16, strict=strict)
        admissions = {
            (i, 0, 0): admit(r.batches[0].workloads[0], "ns", queues, facts())
            for i, r in enumerate(runs)
        }
        timeline = simulate(runs, one_step(*runs), admissions, {}, Cluster(NODES[:2]))
        assert [
            s.label for s in sorted(timeline.slots, key=lambda s: (s.start_ms, s.label != "first"))
        ] == order


def test_batches_run_in_order_at_most_at_once_at_a_time() -> None:
    three = Batch(tuple(workload(f"w{i}", 1) for i in range(3)), at_once=2)
    later = Batch((workload("later", 1),))
    job = run("r/1.yaml", three, later)
    admissions = {(0, b, w): Admission() for b in range(2) for w in range(3)}
    timeline = simulate((job,), one_step(job), admissions, {}, Cluster(NODES))
    starts = {s.label: s.start_ms for s in timeline.slots}
    assert starts == {"w0": 0, "w1": 0, "w2": 60_000, "later": 120_000}
    assert timeline.runs["r/1.yaml"] == (0, 180_000)


def test_steps_wait_for_waited_runs_only() -> None:
    first, second = (
        run("r/1.yaml", Batch((workload("one", 1),))),
        run("r/2.yaml", Batch((workload("two", 1),))),
    )
    steps = {"1": Step("1", "one", ""), "2": Step("2", "two", "", ("1",))}
    admissions = {(i, 0, 0): Admission() for i in range(2)}
    gated = Gating(steps, {"r/1.yaml": "1", "r/2.yaml": "2"})
    assert simulate((first, second), gated, admissions, {}, Cluster(NODES)).end_ms == 120_000
    loose = Gating(steps, gated.step_of, {"r/1.yaml": "no health check"})
    assert simulate((first, second), loose, admissions, {}, Cluster(NODES)).end_ms == 60_000
    assert loose.before(["r/1.yaml", "r/2.yaml"])["2"] == frozenset()
    assert gated.before(["r/1.yaml", "r/2.yaml"])["2"] == {"r/1.yaml"}


def test_worst_case_uses_timeouts_and_blocked_workloads_never_start() -> None:
    job = run("r/1.yaml", Batch((workload("w", 1),)))
    admissions = {(0, 0, 0): Admission()}
    assert (
        simulate((job,), one_step(job), admissions, {}, Cluster(NODES), case="worst").end_ms
        == 120_000
    )
    stuck = simulate(
        (job,), one_step(job), admissions, {}, Cluster(NODES), blocked=frozenset({(0, 0, 0)})
    )
    assert stuck.end_ms is None and stuck.stuck == ("r/1.yaml",)


def test_paths_relative_to_the_site_folder() -> None:
    assert relative("./out/lab/readiness/01-a", "out/lab") == "readiness/01-a"
    assert relative("out/lab", "out/lab") == ""
    assert relative("out/lab-2/readiness", "out/lab") is None
    assert under("readiness/01-a/x.yaml", "readiness")
    assert not under("readiness/01-a/x.yaml", "readiness", recurse=False)
    assert under("readiness/x.yaml", "readiness", recurse=False)
    assert not under("readinessx/x.yaml", "readiness")


def test_a_queue_quota_is_each_flavor_resource_of_its_groups_the_last_one_winning() -> None:
    first = Group(frozenset({GPU}), (("a", {GPU: 8}), ("b", {GPU: 4, "pods": 10})))
    second = Group(frozenset({GPU}), (("b", {GPU: 16}),))
    cq = ClusterQueue("cq", "queues/cq.yaml", (first, second))
    assert cq.quota == {("a", GPU): 8, ("b", GPU): 16, ("b", "pods"): 10}
    assert cq.quota is cq.quota  # built once
    assert ClusterQueue("empty", "queues/e.yaml", ()).quota == {}
