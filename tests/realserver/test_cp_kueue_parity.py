"""Does Kueue v0.19.2 itself find nvcregen's prebuilt Workloads equivalent to their jobs?

Kueue adopts a prebuilt Workload (the job's `kueue.x-k8s.io/prebuilt-workload-name`
label) only when `jobframework.EquivalentToWorkload` holds: the pod sets Kueue derives
from the job must equal the Workload's (count, minCount, tolerations, init containers,
containers, compared semantically, field by field). Otherwise Kueue finishes the Workload
as OutOfSync and the run never starts. `tests/kueueparity.py` runs that check with Kueue's
and Trainer's own Go code on objects read back from the real API server (so defaulted as
a cluster defaults them; the Workload CRD is installed), design note 0016.

- Every Kueue-managed run nvcregen renders (a TrainJob, or a batch Job with a queue name)
  in the shipped sites' out/ and the trainer-mode examples: a Workload written from the pod
  sets Kueue derives is equivalent, and each prebuilt Workload nvcregen renders is.
- Negative cases, each failing for its own reason at its own field: a changed value, a
  reordered list, the API server's default terminationMessagePath left out of a Job's
  Workload or added to a TrainJob's (Kueue's TrainJob pod sets come from a custom
  resource and have none; the Workload CRD defaults no container field), a wrong count;
  and a Workload named as its TrainJob, which Kueue's defaulting dry-run create collides
  with.
"""

from __future__ import annotations

import copy
import functools
import json
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import kueueparity
import pytest
import yaml
from click.testing import CliRunner
from kubecontrolplane import ControlPlane, collection_path, object_path

from nvcregen.cli import main

ROOT = Path(__file__).resolve().parents[2]
Obj = dict[str, Any]
PREBUILT = "kueue.x-k8s.io/prebuilt-workload-name"
QUEUE = "kueue.x-k8s.io/queue-name"
RUNTIME_KINDS = frozenset({"TrainingRuntime", "ClusterTrainingRuntime"})
EXAMPLES = ("node-health/h200-trainer", "fabric/fleet")
# An example's runs checked per stage and test: the fleet's 496 cross-leaf runs differ only
# in their nodes and runtimes' names; every run of the shipped sites is checked.
EXAMPLE_RUNS_PER_TEST = 8


@functools.cache
def rendered_example(example: str, folder: Path) -> Path:
    """A trainer-mode example rendered into `folder` (once a session)."""
    out = folder / example.replace("/", "-")
    site = ROOT / "examples" / f"{example}.yaml"
    result = CliRunner().invoke(main, ["render", "--out", str(out), str(site)])
    assert result.exit_code == 0, result.output
    (tree,) = (p for p in out.iterdir() if p.is_dir())
    return tree


def documents(tree: Path) -> Iterator[Obj]:
    for path in sorted(tree.rglob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text("utf-8")):
            if isinstance(doc, dict) and "kind" in doc:
                yield doc


def is_run(doc: Obj) -> bool:
    """A run Kueue manages: a TrainJob, or a batch Job with a queue name."""
    labels = doc.get("metadata", {}).get("labels") or {}
    if doc["kind"] == "TrainJob":
        return True
    return doc["kind"] == "Job" and doc.get("apiVersion") == "batch/v1" and QUEUE in labels


def site_tree(site: str, tmp: pytest.TempPathFactory) -> Path:
    """A shipped site's out/ tree, or an example's, rendered."""
    if site in EXAMPLES:
        return rendered_example(site, tmp.getbasetemp() / "kueue-parity-examples")
    return ROOT / "out" / site


class Cluster:
    """The control plane with a namespace per case; objects created and read back."""

    def __init__(self, plane: ControlPlane) -> None:
        self.plane = plane
        self.namespaces: set[str] = set()

    def put(self, obj: Obj, namespace: str) -> Obj:
        """Create `obj` in `namespace` (a cluster-scoped kind as is), return it as stored.
        A ClusterTrainingRuntime another case created already is read back instead."""
        obj = copy.deepcopy(obj)
        obj["metadata"].pop("resourceVersion", None)
        if obj["kind"] != "ClusterTrainingRuntime":
            obj["metadata"]["namespace"] = namespace
            self.put_namespace(namespace)
        code, answer = self.plane.request("POST", collection_path(obj), obj)
        if code == 409 and obj["kind"] == "ClusterTrainingRuntime":
            code, answer = self.plane.request("GET", object_path(obj))
        assert code in {200, 201}, json.dumps(answer)[:2000]
        stored: Obj = answer
        return stored

    def put_all(self, objs: list[Obj], namespace: str) -> list[Obj]:
        """`put` each, four at a time (a fleet has hundreds), in order."""
        if objs and objs[0]["kind"] != "ClusterTrainingRuntime":
            self.put_namespace(namespace)
        with ThreadPoolExecutor(4) as pool:
            return list(pool.map(lambda o: self.put(o, namespace), objs))

    def put_namespace(self, namespace: str) -> None:
        if namespace not in self.namespaces:
            self.plane.namespace(namespace)
            self.namespaces.add(namespace)


@pytest.fixture(scope="module")
def cluster(control_plane: ControlPlane) -> Cluster:
    return Cluster(control_plane)


def placeholder_workload(job: Obj) -> Obj:
    """A Workload with no pod sets: asks the tool only for Kueue's own pod sets."""
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Workload",
        "metadata": {"name": "placeholder", "namespace": job["metadata"]["namespace"]},
        "spec": {"podSets": []},
    }


def workload_from(job: Obj, pod_sets: list[Obj], name: str) -> Obj:
    """A prebuilt Workload for `job` written from the pod sets Kueue derived for it."""
    labels = job["metadata"].get("labels") or {}
    spec: Obj = {"podSets": pod_sets}
    if QUEUE in labels:
        spec["queueName"] = labels[QUEUE]
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Workload",
        "metadata": {"name": name, "namespace": job["metadata"]["namespace"]},
        "spec": spec,
    }


def kueue_pod_sets(cluster: Cluster, runtimes: list[Obj], jobs: list[Obj]) -> list[list[Obj]]:
    """The pod sets Kueue derives for each stored job."""
    verdicts = kueueparity.judge(
        runtimes, [(j, placeholder_workload(j)) for j in jobs], cluster.plane.kubeconfig
    )
    for verdict in verdicts:
        assert not verdict.get("error"), verdict
        assert verdict["podSets"], verdict
    return [v["podSets"] for v in verdicts]


def sampled(runs: list[Obj], per_test: int | None) -> list[Obj]:
    """The first `per_test` runs of each stage and test, in file order (all when None)."""
    if per_test is None:
        return runs
    seen: Counter[tuple[str, str]] = Counter()
    chosen = []
    for run in runs:
        labels = run["metadata"].get("labels") or {}
        key = (labels.get("nvcregen.io/stage", ""), labels.get("nvcregen.io/test", ""))
        seen[key] += 1
        if seen[key] <= per_test:
            chosen.append(run)
    return chosen


def load_site(
    cluster: Cluster, tree: Path, namespace: str, *, prebuilt_only: bool = False
) -> tuple[list[Obj], list[Obj], dict[str, Obj]]:
    """The site's runs (sampled for an example) and the runtimes they name, created in
    `namespace` and read back, and the Workloads it renders (as written)."""
    docs = list(documents(tree))
    runs = [d for d in docs if is_run(d)]
    if prebuilt_only:
        runs = [r for r in runs if PREBUILT in (r["metadata"].get("labels") or {})]
    runs = sampled(runs, None if tree.parent == ROOT / "out" else EXAMPLE_RUNS_PER_TEST)
    named = {
        (
            r["spec"]["runtimeRef"].get("kind", "ClusterTrainingRuntime"),
            r["spec"]["runtimeRef"]["name"],
        )
        for r in runs
        if r["kind"] == "TrainJob"
    }
    wanted = [d for d in docs if (d["kind"], d["metadata"]["name"]) in named]
    runtimes = cluster.put_all([d for d in wanted if d["kind"] == "TrainingRuntime"], namespace)
    runtimes += cluster.put_all(
        [d for d in wanted if d["kind"] == "ClusterTrainingRuntime"], namespace
    )
    jobs = cluster.put_all(runs, namespace)
    workloads = {d["metadata"]["name"]: d for d in docs if d["kind"] == "Workload"}
    return runtimes, jobs, workloads


SITE_NAMES = sorted(p.name for p in (ROOT / "out").iterdir() if p.is_dir()) + list(EXAMPLES)


@pytest.mark.parametrize("site", SITE_NAMES)
def test_a_workload_of_kueues_own_pod_sets_is_equivalent_for_every_rendered_run(
    cluster: Cluster, site: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    tree = site_tree(site, tmp_path_factory)
    namespace = f"kp-own-{site.replace('/', '-')}"
    runtimes, jobs, _ = load_site(cluster, tree, namespace)
    if not jobs:
        pytest.skip(f"{site} renders no Kueue-managed run")
    pod_sets = kueue_pod_sets(cluster, runtimes, jobs)
    written = [
        workload_from(job, sets, f"{job['metadata']['name'][:50]}-wl")
        for job, sets in zip(jobs, pod_sets, strict=True)
    ]
    runs = list(zip(jobs, cluster.put_all(written, namespace), strict=True))
    verdicts = kueueparity.judge(runtimes, runs, cluster.plane.kubeconfig)
    assert [(v["kind"], v["name"], v["equivalent"], v.get("error")) for v in verdicts] == [
        (j["kind"], j["metadata"]["name"], True, None) for j in jobs
    ]


def explain(verdicts: list[Obj]) -> str:
    """The runs Kueue does not find equivalent, one line each, with what to change."""
    lines = []
    for v in (v for v in verdicts if not v["equivalent"]):
        why = v.get("error") or v["difference"]
        if v["kind"] == "TrainJob" and v["workload"] == v["name"] and "already exists" in str(why):
            why = (
                f"{why} (Kueue's TrainJob pod sets dry-run-create a Workload named as the"
                " TrainJob: a prebuilt Workload needs another name)"
            )
        lines.append(f"{v['kind']} {v['name']} / Workload {v['workload']} ({v['state']}): {why}")
    return "\n".join(lines)


@pytest.mark.parametrize("admitted", [False, True], ids=["queued", "admitted"])
@pytest.mark.parametrize("site", SITE_NAMES)
def test_every_prebuilt_workload_nvcregen_renders_is_equivalent(
    cluster: Cluster, site: str, tmp_path_factory: pytest.TempPathFactory, *, admitted: bool
) -> None:
    """Queued, and once admitted on the site's first flavor with the job started from it."""
    tree = site_tree(site, tmp_path_factory)
    namespace = f"kp-prebuilt-{'admitted' if admitted else 'queued'}-{site.replace('/', '-')}"
    docs = list(documents(tree))
    if not any(d["kind"] == "Workload" for d in docs):
        pytest.skip(f"{site} renders no prebuilt Workload")
    runtimes, prebuilt, workloads = load_site(cluster, tree, namespace, prebuilt_only=True)
    assert prebuilt, f"{site} renders Workloads but no run names one ({PREBUILT})"
    for job in prebuilt:
        name = job["metadata"]["labels"][PREBUILT]
        assert name in workloads, f"{job['kind']} {job['metadata']['name']}: no Workload {name}"
    stored = cluster.put_all(
        [workloads[j["metadata"]["labels"][PREBUILT]] for j in prebuilt], namespace
    )
    objects = list(runtimes)
    if admitted:
        flavors = [d for d in docs if d["kind"] == "ResourceFlavor"]
        stored = [admit(cluster, wl, flavors[0]["metadata"]["name"]) for wl in stored]
        objects += flavors
    runs = list(zip(prebuilt, stored, strict=True))
    verdicts = kueueparity.judge(objects, runs, cluster.plane.kubeconfig, start=admitted)
    assert len(verdicts) == len(runs), "the tool must answer once for every run"
    assert all(v["equivalent"] for v in verdicts), explain(verdicts)


# --- negative cases: each is not equivalent, for its own reason ------------------------------


def _first_container(workload: Obj) -> Obj:
    container: Obj = workload["spec"]["podSets"][0]["template"]["spec"]["containers"][0]
    return container


def _listed(workload: Obj) -> tuple[str, list[Any]]:
    """The first container's env (a TrainJob's launcher has one), else its command."""
    container = _first_container(workload)
    field = "env" if len(container.get("env") or ()) >= 2 else "command"
    entries: list[Any] = container[field]
    assert len(entries) >= 2 and entries[0] != entries[-1]
    return field, entries


def _changed_value(workload: Obj) -> str:
    field, entries = _listed(workload)
    if field == "env":
        entries[0]["value"] = "changed-by-the-test"
        return "template.spec.containers[0].env[0].value"
    entries[0] = "/bin/changed-by-the-test"
    return "template.spec.containers[0].command[0]"


def _reordered(workload: Obj) -> str:
    field, entries = _listed(workload)
    entries.reverse()
    first = "[0].name" if field == "env" else "[0]"
    return f"template.spec.containers[0].{field}{first}"


def _termination_message_path(workload: Obj) -> str:
    """The API server's default for a container (a batch Job's pod template has it) left
    out, or, where Kueue's pod sets lack it, added: a TrainJob's come from the runtime, a
    custom resource, and the Workload CRD defaults no container field either."""
    container = _first_container(workload)
    if container.pop("terminationMessagePath", None) is None:
        container["terminationMessagePath"] = "/dev/termination-log"
    return "template.spec.containers[0].terminationMessagePath"


def _count(workload: Obj) -> str:
    workload["spec"]["podSets"][0]["count"] += 1
    return "count"


# Each changes a Workload written from Kueue's own pod sets and says where Kueue must find
# the first difference.
MUTATIONS: dict[str, Callable[[Obj], str]] = {
    "changed-value": _changed_value,
    "reordered-list": _reordered,
    "termination-message-path": _termination_message_path,
    "count": _count,
}


def shipped_runs(cluster: Cluster, namespace: str) -> tuple[list[Obj], dict[str, Obj]]:
    """The trainer site's runtimes, and its first TrainJob and first Job, stored."""
    runtimes, jobs, _ = load_site(cluster, ROOT / "out" / "h20-3e-trainer", namespace)
    first: dict[str, Obj] = {}
    for job in jobs:
        first.setdefault(job["kind"], job)
    assert set(first) == {"TrainJob", "Job"}
    return runtimes, first


@pytest.mark.parametrize("kind", ["TrainJob", "Job"])
@pytest.mark.parametrize("mutation", sorted(MUTATIONS))
def test_a_workload_that_differs_is_not_equivalent_at_the_field_that_differs(
    cluster: Cluster, kind: str, mutation: str
) -> None:
    namespace = f"kp-neg-{kind.lower()}-{mutation}"
    runtimes, first = shipped_runs(cluster, namespace)
    job = first[kind]
    (sets,) = kueue_pod_sets(cluster, runtimes, [job])
    written = workload_from(job, copy.deepcopy(sets), f"{job['metadata']['name'][:50]}-wl")
    before = copy.deepcopy(written)
    path = MUTATIONS[mutation](written)
    assert written != before
    stored = cluster.put(written, namespace)
    (verdict,) = kueueparity.judge(runtimes, [(job, stored)], cluster.plane.kubeconfig)
    assert verdict["equivalent"] is False, verdict
    assert not verdict.get("error"), verdict
    assert verdict["difference"]["path"] == path, verdict["difference"]
    # the same Workload unchanged is equivalent: the mutation alone is the reason
    unchanged = cluster.put(
        {**before, "metadata": {**before["metadata"], "name": "unchanged"}}, namespace
    )
    (control,) = kueueparity.judge(runtimes, [(job, unchanged)], cluster.plane.kubeconfig)
    assert control["equivalent"] is True, control


def test_a_workload_named_as_its_train_job_stops_kueues_own_derivation(
    cluster: Cluster,
) -> None:
    """Kueue's TrainJob pod sets dry-run-create a Workload named as the TrainJob; a prebuilt
    Workload of that name makes the create fail, so Kueue can never compare."""
    namespace = "kp-neg-same-name"
    runtimes, first = shipped_runs(cluster, namespace)
    job = first["TrainJob"]
    (sets,) = kueue_pod_sets(cluster, runtimes, [job])
    stored = cluster.put(workload_from(job, sets, job["metadata"]["name"]), namespace)
    (verdict,) = kueueparity.judge(runtimes, [(job, stored)], cluster.plane.kubeconfig)
    assert verdict["equivalent"] is False
    assert "already exists" in verdict["error"], verdict


# --- the admitted state: Kueue started the job, the Workload holds its admission ---------


def admit(cluster: Cluster, workload: Obj, flavor: str) -> Obj:
    """Write an admission to the stored Workload's status, as Kueue's scheduler does: every
    pod set on `flavor` for each resource its containers request, quota reserved, admitted."""
    assignments = []
    for pod_set in workload["spec"]["podSets"]:
        resources = sorted(
            {
                name
                for c in pod_set["template"]["spec"]["containers"]
                for name in (c.get("resources") or {}).get("requests") or {}
            }
        )
        assignments.append(
            {
                "name": pod_set["name"],
                "flavors": dict.fromkeys(resources, flavor),
                "count": pod_set["count"],
            }
        )
    now = "2026-01-01T00:00:00Z"
    conditions = [
        {"type": t, "status": "True", "reason": t, "message": "", "lastTransitionTime": now}
        for t in ("QuotaReserved", "Admitted")
    ]
    status = {
        "admission": {"clusterQueue": "readiness", "podSetAssignments": assignments},
        "conditions": conditions,
    }
    body = {**workload, "status": status}
    admitted: Obj = cluster.plane.ok("PUT", object_path(workload) + "/status", body)
    return admitted


@pytest.mark.parametrize("kind", ["TrainJob", "Job"])
@pytest.mark.parametrize("changed", [False, True], ids=["same", "changed-value"])
def test_an_admitted_workload_is_checked_against_the_job_kueue_started(
    cluster: Cluster, kind: str, *, changed: bool
) -> None:
    """Kueue started the job from the admission (the flavor's node labels on the pods, a
    TrainJob's runtime patch, unsuspended); the Workload written from the queued job's pod
    sets is still equivalent, and a changed container still is not."""
    namespace = f"kp-admitted-{kind.lower()}-{'changed' if changed else 'same'}"
    runtimes, first = shipped_runs(cluster, namespace)
    queues = ROOT / "out" / "h20-3e-trainer" / "queues"
    flavors = [d for d in documents(queues) if d["kind"] == "ResourceFlavor"]
    job = first[kind]
    (sets,) = kueue_pod_sets(cluster, runtimes, [job])
    written = workload_from(job, sets, f"{job['metadata']['name'][:50]}-wl")
    if changed:
        _changed_value(written)
    admitted = admit(cluster, cluster.put(written, namespace), flavors[0]["metadata"]["name"])
    (verdict,) = kueueparity.judge(
        [*runtimes, *flavors], [(job, admitted)], cluster.plane.kubeconfig, start=True
    )
    assert not verdict.get("error"), verdict
    assert (verdict["state"], verdict["started"]) == ("admitted", True)
    assert verdict["equivalent"] is not changed, verdict
    # Kueue's pod sets are the started job's: the flavor's node labels reached every pod
    node_labels = flavors[0]["spec"]["nodeLabels"]
    for pod_set in verdict["podSets"]:
        selector = pod_set["template"]["spec"].get("nodeSelector") or {}
        assert node_labels.items() <= selector.items(), pod_set["name"]
