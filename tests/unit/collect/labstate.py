"""The cluster state after the `lab` site (tests/fixtures/collect/site.yaml) has run.

Objects follow the NVCRE 0.7.0 CRD schemas in schemas/upstream/ (the test
`test_lab_state_follows_the_crd_schemas` checks those that are vendored), with statuses
as NVCRE writes them: decimal strings, `Complete=True` reason `JobSucceeded`, node
results as gzip JSON/CSV in ConfigMap binaryData, a ReportExport and its snapshot.

- single-node: the all-reduce ran on each node alone (groups `node-a`, `node-b`),
  3 iterations each; DCGM level 1 as a WorkloadRun.
- two-node: all-reduce over RoCE with 1 GiB bus bandwidths 363.76 / 427.58 / 452.28
  GB/s (the field report's rounds), the TCP baseline (a WorkloadRun pinning
  NCCL_NET=Socket) at about 2.25 GB/s, and a training run with goodput 0.93-0.95.
- Objects of another site and an unrelated ConfigMap, which collect must leave out.
"""

from __future__ import annotations

import base64
import copy
import gzip
import hashlib
import json
from pathlib import Path
from typing import Any

Obj = dict[str, Any]
NS = "nvcre"
API = "nvcre.nvidia.com/v1alpha1"
MIB = 1 << 20
GIB = 1 << 30
SIZES = (MIB, 64 * MIB, GIB)
TWO_NODE_1GIB = (363.76, 427.58, 452.28)
SINGLE_NODE_1GIB = {"node-a": (465.1, 466.0, 464.2), "node-b": (463.5, 467.2, 465.9)}
TCP_1GIB = (2.21, 2.25, 2.31)
GOODPUT = (0.942373, 0.95, 0.93)
SITE_LABEL = "nvcregen.io/site"


def _time(hour: int, minute: int = 0) -> str:
    return f"2026-10-14T{hour:02d}:{minute:02d}:00Z"


def condition(kind: str, state: str, reason: str, message: str = "", at: str = "") -> Obj:
    """A metav1.Condition."""
    return {
        "type": kind,
        "status": state,
        "reason": reason,
        "message": message,
        "lastTransitionTime": at or _time(12),
    }


def execution(state: str) -> list[Obj]:
    """Exclusive InProgress / Succeeded / Failed conditions, one of them True."""
    reasons = {
        "Succeeded": "WorkflowSucceeded",
        "Failed": "WorkflowFailed",
        "InProgress": "WorkflowRunning",
    }
    return [
        condition(
            kind,
            "True" if kind == state else "False",
            reasons[kind] if kind == state else "NotApplicable",
        )
        for kind in ("InProgress", "Succeeded", "Failed")
    ]


def meta(
    name: str, uid: str, *, labels: dict[str, str] | None = None, owner: Obj | None = None
) -> Obj:
    """ObjectMeta as the API server returns it."""
    data: Obj = {
        "name": name,
        "namespace": NS,
        "uid": uid,
        "resourceVersion": f"{sum(map(ord, uid)) + 100}",
        "generation": 1,
        "creationTimestamp": _time(8),
    }
    if labels:
        data["labels"] = labels
    if owner is not None:
        data["ownerReferences"] = [
            {
                "apiVersion": owner["apiVersion"],
                "kind": owner["kind"],
                "name": owner["metadata"]["name"],
                "uid": owner["metadata"]["uid"],
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ]
    return data


def site_labels(site: str, stage: str, test: str | None = None) -> dict[str, str]:
    """The labels nvcregen puts on readiness objects."""
    labels = {
        "app.kubernetes.io/managed-by": "nvcregen",
        SITE_LABEL: site,
        "nvcregen.io/stage": stage,
    }
    if test:
        labels["nvcregen.io/test"] = test
    return labels


TARGET = {"nodeNames": ["node-a", "node-b"], "nodeSelector": {"nvidia.com/gpu.present": "true"}}


def certification(
    name: str, uid: str, stage: str, variants: list[tuple[str, str]], site: str = "lab"
) -> Obj:
    """A Certification whose categories all succeeded, each with its Workflow named."""
    statuses = [
        {
            "domain": domain,
            "variant": variant,
            "status": "Succeeded",
            "workflowRef": {"name": f"{name}-{domain}-{variant}", "namespace": NS},
            "succeededNodesRef": {"kind": "ConfigMap", "name": f"nodes-{name}-{variant}-ok"},
        }
        for domain, variant in variants
    ]
    return {
        "apiVersion": API,
        "kind": "Certification",
        "metadata": meta(name, uid, labels=site_labels(site, stage)),
        "spec": {
            "target": TARGET,
            "gpusPerNode": 8,
            "image": "nvcr.io/nvidia/pytorch:26.01-py3@sha256:" + "4c" * 32,
            "repeatCount": 3,
            "categories": [{"domain": d, "variant": v} for d, v in variants],
        },
        "status": {"conditions": execution("Succeeded"), "categoryStatuses": statuses},
    }


def workload_run(name: str, uid: str, stage: str, test: str, net: str | None = None) -> Obj:
    """A WorkloadRun that succeeded; `net` pins NCCL_NET."""
    env = [{"name": "NCCL_NET", "value": net}] if net else []
    return {
        "apiVersion": API,
        "kind": "WorkloadRun",
        "metadata": meta(name, uid, labels=site_labels("lab", stage, test)),
        "spec": {
            "image": "nvcr.io/nvidia/cloud-native/dcgm:4.5.2-1-ubuntu22.04@sha256:" + "9e" * 32,
            "numNodes": 2 if stage == "two-node" else 1,
            "framework": {"exec": {"command": ["/bin/true"]}},
            "env": env,
        },
        "status": {
            "conditions": execution("Succeeded"),
            "workflowRef": {"name": f"{name}-wf", "namespace": NS},
            "succeededNodesRef": {"kind": "ConfigMap", "name": f"nodes-{name}-ok"},
        },
    }


def job_name(workflow: str, group: str, iteration: int) -> str:
    """The NVCRE Job of one group in one iteration."""
    return f"{workflow}-{group}-{iteration}-job"


def workflow(
    name: str, uid: str, owner: Obj, groups: dict[str, list[str]], state: str = "Succeeded"
) -> Obj:
    """A Workflow that ran 3 iterations of its groups; the last one stays in `groups`."""
    history = [
        {
            "iteration": i,
            "groups": [
                {"name": g, "phase": "Succeeded", "jobName": job_name(name, g, i)} for g in groups
            ],
        }
        for i in (1, 2)
    ]
    current = [
        {
            "name": g,
            "nodes": nodes,
            "phase": "Succeeded" if state == "Succeeded" else "Running",
            "jobRef": {
                "apiVersion": API,
                "kind": "Job",
                "name": job_name(name, g, 3),
                "namespace": NS,
            },
        }
        for g, nodes in groups.items()
    ]
    return {
        "apiVersion": API,
        "kind": "Workflow",
        "metadata": meta(name, uid, owner=owner),
        "spec": {"namespace": NS, "orchestration": {"iterations": 3}, "jobTemplate": {"spec": {}}},
        "status": {
            "namespace": NS,
            "conditions": execution(state),
            "succeededNodesRef": {"kind": "ConfigMap", "name": _ok_nodes_name(owner, name)},
            "orchestration": {
                "totalNodes": sum(len(n) for n in groups.values()),
                "nodesPerJob": len(next(iter(groups.values()))),
                "totalGroups": len(groups),
                "currentIteration": 3,
                "completedIterations": 3 if state == "Succeeded" else 2,
                "iterationHistory": history,
                "groups": current,
            },
        },
    }


def _ok_nodes_name(owner: Obj, workflow_name: str) -> str:
    owner_name = owner["metadata"]["name"]
    if owner["kind"] == "WorkloadRun":
        return f"nodes-{owner_name}-ok"
    variant = workflow_name.removeprefix(owner_name + "-").split("-", 1)[1]
    return f"nodes-{owner_name}-{variant}-ok"


def bandwidth(wf: Obj, group: str, iteration: int, busbw_1gib: float, *, ranks: int = 16) -> Obj:
    """A final BandwidthMeasurement of one round: three sizes, 10 samples each."""
    job = job_name(wf["metadata"]["name"], group, iteration)
    factor = 2 * (ranks - 1) / ranks  # all-reduce: busbw = algbw * 2(n-1)/n
    results = [
        {
            "sizeBytes": size,
            "busBW": f"{busbw_1gib * scale:.2f}",
            "algBW": f"{busbw_1gib * scale / factor:.2f}",
            "samples": 10,
        }
        for size, scale in zip(SIZES, (0.1, 0.8, 1.0), strict=True)
    ]
    start = _time(9 + iteration)
    return {
        "apiVersion": API,
        "kind": "BandwidthMeasurement",
        "metadata": meta(f"{job}-bw", f"uid-{job}-bw", owner=wf),
        "spec": {
            "logProfileRef": "nccl-bandwidth",
            "jobRef": {"apiGroup": "nvcre.nvidia.com", "kind": "Job", "name": job},
            "testType": "all_reduce",
        },
        "status": {
            "results": results,
            "startTime": start,
            "completionTime": _time(9 + iteration, 5),
            "conditions": [
                condition("Measuring", "False", "JobSucceeded", at=_time(9 + iteration, 5)),
                condition("Complete", "True", "JobSucceeded", at=_time(9 + iteration, 5)),
            ],
        },
    }


def goodput(wf: Obj, iteration: int, ratio: float) -> Obj:
    """A frozen GoodputMeasurement of one round (t_w 1000 s, no rescheduling)."""
    job = job_name(wf["metadata"]["name"], "group-0", iteration)
    saved = 1000 - 20 - 10 - ratio * 1000
    return {
        "apiVersion": API,
        "kind": "GoodputMeasurement",
        "metadata": meta(f"{job}-gp", f"uid-{job}-gp", owner=wf),
        "spec": {
            "logProfileRef": "megatron-training",
            "jobRef": {"apiGroup": "nvcre.nvidia.com", "kind": "Job", "name": job},
        },
        "status": {
            "result": f"{ratio:.6f}",
            "trainingTimeSec": "1000.000000",
            "lostWorkTimeSec": "20.000000",
            "resumeTimeSec": "10.000000",
            "rescheduleTimeSec": "0.000000",
            "checkpointSaveTimeSec": f"{saved:.6f}",
            "avgStepTimeSec": "1.950000",
            "avgTFLOPSPerGPU": "295.000000",
            "interruptionCount": 1,
            "currentStep": 500,
            "startTime": _time(9 + iteration),
            "completionTime": _time(9 + iteration, 30),
            "conditions": [
                condition("Measuring", "False", "JobSucceeded"),
                condition("Complete", "True", "JobSucceeded"),
            ],
        },
    }


def gz64(data: bytes) -> str:
    """base64 of gzip, as binaryData holds it (mtime 0: the same bytes every time)."""
    return base64.b64encode(gzip.compress(data, mtime=0)).decode()


def node_results(
    name: str, owner: Obj, *, failed: list[Obj] | None = None, succeeded: list[str] | None = None
) -> Obj:
    """A node-results ConfigMap owned by a Workflow."""
    binary = {}
    if failed is not None:
        binary["failed-nodes.json.gz"] = gz64(json.dumps(failed).encode())
    if succeeded is not None:
        binary["succeeded-nodes.csv.gz"] = gz64(",".join(succeeded).encode())
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": meta(name, f"uid-{name}", owner=owner),
        "binaryData": binary,
    }


def report_export(cert: Obj, report_id: str = "r-lab-two-node") -> tuple[Obj, Obj]:
    """A delivered ReportExport of a Certification and its immutable snapshot ConfigMap."""
    envelope = {
        "schemaVersion": "v1",
        "reportID": report_id,
        "source": {
            "clusterID": "lab",
            "namespace": NS,
            "name": cert["metadata"]["name"],
            "uid": cert["metadata"]["uid"],
        },
        "generatedAt": _time(13),
        "report": {"result": "PASSED"},
    }
    body = json.dumps(envelope, separators=(",", ":")).encode()
    name = f"rex-{report_id}"
    export = {
        "apiVersion": API,
        "kind": "ReportExport",
        "metadata": meta(
            name,
            f"uid-{name}",
            labels={"nvcre.nvidia.com/report-source-uid": cert["metadata"]["uid"]},
        ),
        "spec": {
            "sourceRef": {
                "kind": "Certification",
                "namespace": NS,
                "name": cert["metadata"]["name"],
                "uid": cert["metadata"]["uid"],
            },
            "policyRef": {"name": "webhook", "uid": "uid-policy", "generation": 1},
            "webhook": {"url": "https://reports.example.com/hook", "timeout": "10s"},
            "retry": {},
            "retention": {},
            "clusterID": "lab",
            "reportID": report_id,
        },
        "status": {
            "phase": "Delivered",
            "reason": "Accepted",
            "reportID": report_id,
            "result": "PASSED",
            "snapshotRef": {"name": f"snapshot-{report_id}"},
            "sha256": hashlib.sha256(body).hexdigest(),
            "payloadBytes": len(body),
            "attempts": 1,
            "completionTime": _time(13, 1),
        },
    }
    snapshot = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": meta(f"snapshot-{report_id}", f"uid-snapshot-{report_id}", owner=export),
        "immutable": True,
        "binaryData": {"report.json.gz": gz64(body)},
    }
    return export, snapshot


def lab_state() -> list[Obj]:
    """Every object on the cluster after the lab site ran (plus another site's)."""
    single = certification(
        "lab-single-node-0001", "uid-cert-1", "single-node", [("communication", "nccl-all-reduce")]
    )
    two = certification(
        "lab-two-node-0002",
        "uid-cert-2",
        "two-node",
        [("communication", "nccl-all-reduce"), ("training", "nemotron5-8b")],
    )
    dcgm = workload_run("lab-single-node-dcgm-l1-0003", "uid-wlr-3", "single-node", "dcgm-l1")
    tcp = workload_run(
        "lab-two-node-nccl-all-reduce-tcp-0004",
        "uid-wlr-4",
        "two-node",
        "nccl-all-reduce-tcp",
        "Socket",
    )
    wf_single = workflow(
        "lab-single-node-0001-communication-nccl-all-reduce",
        "uid-wf-1",
        single,
        {"node-a": ["node-a"], "node-b": ["node-b"]},
    )
    wf_two = workflow(
        "lab-two-node-0002-communication-nccl-all-reduce",
        "uid-wf-2",
        two,
        {"group-0": ["node-a", "node-b"]},
    )
    wf_train = workflow(
        "lab-two-node-0002-training-nemotron5-8b",
        "uid-wf-3",
        two,
        {"group-0": ["node-a", "node-b"]},
    )
    wf_dcgm = workflow(
        "lab-single-node-dcgm-l1-0003-wf",
        "uid-wf-4",
        dcgm,
        {"node-a": ["node-a"], "node-b": ["node-b"]},
    )
    wf_tcp = workflow(
        "lab-two-node-nccl-all-reduce-tcp-0004-wf",
        "uid-wf-5",
        tcp,
        {"group-0": ["node-a", "node-b"]},
    )
    objects = [single, two, dcgm, tcp, wf_single, wf_two, wf_train, wf_dcgm, wf_tcp]
    for node, values in SINGLE_NODE_1GIB.items():
        objects += [bandwidth(wf_single, node, i, v, ranks=8) for i, v in enumerate(values, 1)]
    objects += [bandwidth(wf_two, "group-0", i, v) for i, v in enumerate(TWO_NODE_1GIB, 1)]
    objects += [bandwidth(wf_tcp, "group-0", i, v) for i, v in enumerate(TCP_1GIB, 1)]
    objects += [goodput(wf_train, i, v) for i, v in enumerate(GOODPUT, 1)]
    for wf in (wf_single, wf_two, wf_train, wf_dcgm, wf_tcp):
        name = wf["status"]["succeededNodesRef"]["name"]
        objects.append(node_results(name, wf, succeeded=["node-a", "node-b"]))
    export, snapshot = report_export(two)
    objects += [export, snapshot]
    other = certification(
        "other-site-0009",
        "uid-cert-9",
        "single-node",
        [("communication", "nccl-all-reduce")],
        site="other",
    )
    wf_other = workflow(
        "other-site-0009-communication-nccl-all-reduce", "uid-wf-9", other, {"group-0": ["node-z"]}
    )
    objects += [other, wf_other, bandwidth(wf_other, "group-0", 1, 100.0)]
    objects.append(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": meta("kube-root-ca.crt", "uid-ca"),
            "data": {"ca.crt": "x"},
        }
    )
    return copy.deepcopy(objects)


def find(objects: list[Obj], kind: str, name: str) -> Obj:
    """The one object of a kind whose name is `name`."""
    found = [o for o in objects if o["kind"] == kind and o["metadata"]["name"] == name]
    assert len(found) == 1, (kind, name, len(found))
    return found[0]


def write_export(folder: Path, objects: list[Obj]) -> Path:
    """Write objects as `kubectl get -o yaml` and the API would: Lists, typed lists, singles.

    Certifications and WorkloadRuns go to one `kind: List` YAML file, Workflows to a
    JSON `WorkflowList` whose items have no apiVersion or kind, measurements to a
    multi-document YAML file, ConfigMaps and ReportExports one file each.
    """
    import yaml

    class Dumper(yaml.SafeDumper):
        """As kubectl writes: shared values written out in full, never as aliases."""

        def ignore_aliases(self, data: object) -> bool:
            return True

    folder.mkdir(parents=True, exist_ok=True)
    by_kind: dict[str, list[Obj]] = {}
    for obj in objects:
        by_kind.setdefault(obj["kind"], []).append(obj)
    owners = by_kind.get("Certification", []) + by_kind.get("WorkloadRun", [])
    (folder / "owners.yaml").write_text(
        yaml.dump(
            {"apiVersion": "v1", "kind": "List", "items": owners}, Dumper=Dumper, sort_keys=False
        )
    )
    items = [
        {k: v for k, v in o.items() if k not in {"apiVersion", "kind"}}
        for o in by_kind.get("Workflow", [])
    ]
    (folder / "workflows.json").write_text(
        json.dumps({"apiVersion": API, "kind": "WorkflowList", "items": items})
    )
    measurements = by_kind.get("BandwidthMeasurement", []) + by_kind.get("GoodputMeasurement", [])
    (folder / "measurements.yaml").write_text(
        yaml.dump_all(measurements, Dumper=Dumper, sort_keys=False)
    )
    single = folder / "single"
    single.mkdir(exist_ok=True)
    for obj in by_kind.get("ConfigMap", []) + by_kind.get("ReportExport", []):
        (single / f"{obj['kind'].lower()}-{obj['metadata']['name']}.yaml").write_text(
            yaml.safe_dump(obj)
        )
    return folder
