"""RDMA pod networks (issue 12 item 4): RoCE pods need host networking or Multus networks.

Before, trainer-mode RDMA pods ran on the cluster network only, where RoCE connection setup
fails with the common OFED setup; and on models NVCRE does not know, a Certification could
silently run RDMA collectives over TCP.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from sitefactory import load, parse, site_yaml, units_of
from trainerfactory import compiled, trainer_text

from nvcregen.compile.readiness.network import MULTUS, check_pod_network
from nvcregen.core.errors import Severity
from nvcregen.core.labels import PREVIEW_ASSUMED, PREVIEW_CERTAIN
from nvcregen.core.manifest import Manifest, Obj
from nvcregen.core.podsecurity import pod_specs
from nvcregen.engines.readiness.nvcre.layer import readiness_manifests
from nvcregen.engines.readiness.nvcre.preview import certainty, preview_manifests
from nvcregen.spec.parse import parse_model
from nvcregen.spec.v1alpha1 import Site
from nvcregen.validate.schema import validate_schema

STAGES = """\
- {name: node, scope: intra-node, tests: [nccl-all-reduce]}
- {name: pair, scope: inter-node, tests: [nccl-all-reduce, nccl-all-reduce-tcp]}
"""


def pool(fabric: str = "roce", network: str = "", model: str = "H100") -> str:
    line = f"\n    podNetwork: {network}" if network else ""
    return f"""\
- name: gpu
  model: {model}
  nodes: [gpu-1, gpu-2]
  nics:
    count: 2
    fabric: {fabric}
    speed: 200Gb/s
    hcas: [mlx5_0, mlx5_1]
    resourceName: rdma/roce{line}
"""


def text(network: str = "", *, fabric: str = "roce", model: str = "H100") -> str:
    return site_yaml(pools=pool(fabric, network, model), stages=STAGES)


def runtime_pods(found: list[Manifest], test: str, stage: str = "pair") -> list[Mapping[str, Any]]:
    return [
        pod
        for m in found
        if m.kind == "TrainingRuntime"
        and m.obj["metadata"]["labels"]["nvcregen.io/test"] == test
        and m.obj["metadata"]["labels"]["nvcregen.io/stage"] == stage
        for _, pod in pod_specs(m.obj)
    ]


def runtime_templates(found: list[Manifest], test: str) -> list[Obj]:
    return [
        job["template"]["spec"]["template"]
        for m in found
        if m.kind == "TrainingRuntime"
        and m.obj["metadata"]["labels"]["nvcregen.io/test"] == test
        and m.obj["metadata"]["labels"]["nvcregen.io/stage"] == "pair"
        for job in m.obj["spec"]["template"]["spec"]["replicatedJobs"]
    ]


# trainer mode


def test_host_network_pods_run_sshd_beside_the_nodes_own() -> None:
    found = compiled(trainer_text(text("{hostNetwork: true}")))
    pods = runtime_pods(found, "nccl-all-reduce")
    assert len(pods) == 2  # worker and launcher
    for pod in pods:
        assert (pod["hostNetwork"], pod["dnsPolicy"]) == (True, "ClusterFirstWithHostNet")
    (worker,) = [p for p in pods if "readinessProbe" in p["containers"][0]]
    assert worker["containers"][0]["readinessProbe"]["tcpSocket"]["port"] == 2222
    assert "sshd -De -p 2222" in worker["containers"][0]["command"][2]
    job = next(m.obj for m in found if m.kind == "TrainJob" and "pair-nccl-all-reduce-" in m.name)
    assert "Port 2222" in job["spec"]["trainer"]["command"][2]
    # the TCP baseline and the one-node run keep the cluster network
    assert not any("hostNetwork" in p for p in runtime_pods(found, "nccl-all-reduce-tcp"))
    assert not any("hostNetwork" in p for p in runtime_pods(found, "nccl-all-reduce", "node"))


def test_multus_networks_are_annotated_on_every_rdma_pod() -> None:
    found = compiled(trainer_text(text("{networks: [roce-0, nvcre/roce-1]}")))
    templates = runtime_templates(found, "nccl-all-reduce")
    assert len(templates) == 2
    for template in templates:
        assert template["metadata"]["annotations"][MULTUS] == "roce-0,nvcre/roce-1"
        assert "hostNetwork" not in template["spec"]
    assert not any(
        MULTUS in t["metadata"].get("annotations", {})
        for t in runtime_templates(found, "nccl-all-reduce-tcp")
    )


def test_roce_without_a_pod_network_is_nvc371_a_warning_or_a_strict_error() -> None:
    site, doc = parse(trainer_text(text()))
    units = units_of(trainer_text(text()))
    (diag,) = check_pod_network(site, units, doc)
    assert (diag.code, diag.severity, diag.path) == (
        "NVC371",
        Severity.WARNING,
        "/spec/nodePools/0/nics",
    )
    assert check_pod_network(site, units, doc, strict=True)[0].severity is Severity.ERROR
    ib = trainer_text(text(fabric="ib"))
    ib_site, ib_doc = parse(ib)
    assert check_pod_network(ib_site, units_of(ib), ib_doc) == []  # InfiniBand needs no netdev


def test_one_network_per_nic_or_nvc373() -> None:
    written = trainer_text(text("{networks: [roce-0]}"))
    site, doc = parse(written)
    (diag,) = check_pod_network(site, units_of(written), doc)
    assert diag.code == "NVC373" and diag.is_error


def test_nvcre_mode_says_it_cannot_give_pods_a_network() -> None:
    written = text("{hostNetwork: true}")
    site, doc = parse(written)
    (diag,) = check_pod_network(site, units_of(written), doc, strict=True)
    # the site asked for a network NVCRE mode drops: a warning at the setting itself
    assert (diag.code, diag.severity) == ("NVC372", Severity.WARNING)
    assert diag.path.endswith("/nics/podNetwork")
    assert "this podNetwork is not applied in NVCRE mode" in diag.message
    unset = text()
    assert "podNetwork" not in unset
    bare, bare_doc = parse(unset)
    (note,) = check_pod_network(bare, units_of(unset), bare_doc, strict=True)
    assert (note.code, note.severity) == ("NVC372", Severity.INFO)
    assert "may fail" in note.message


@pytest.mark.parametrize("network", ["{}", "{hostNetwork: true, networks: [a, b]}"])
def test_a_pod_network_is_one_of_the_two(network: str) -> None:
    doc = load(text(network))
    _, diags = parse_model(doc, Site)
    assert any(d.is_error for d in validate_schema(doc) + diags)


# NVCRE mode on models NVCRE does not know


def _nvcre(written: str) -> list[Manifest]:
    found = readiness_manifests(parse(written)[0], units_of(written))
    return found + preview_manifests(found)


def test_rdma_on_an_unknown_model_is_a_workloadrun_with_its_nics_certain() -> None:
    found = _nvcre(text(model="L20"))
    (run,) = [m for m in found if m.kind == "WorkloadRun" and "pair-nccl-all-reduce-" in m.name
              and "tcp" not in m.name]  # fmt: skip
    assert run.obj["spec"]["resources"]["limits"]["rdma/roce"] == 2
    job = next(m.obj for m in found if m.kind == "TrainJob" and m.source == run.source)["metadata"][
        "annotations"
    ]
    assert "2 rdma/roce per node (resources)" in job[PREVIEW_CERTAIN]
    assert "pod network for RDMA" in job[PREVIEW_ASSUMED]
    # on a model NVCRE knows the collective stays a Certification category
    known = _nvcre(text(model="H100"))
    assert not any(m.kind == "WorkloadRun" and "pair-nccl-all-reduce-" in m.name
                   and "tcp" not in m.name for m in known)  # fmt: skip


def test_a_preview_without_named_nics_says_they_are_assumed() -> None:
    found = _nvcre(text(model="L20"))
    run = next(m for m in found if m.kind == "WorkloadRun" and "pair-nccl-all-reduce-" in m.name)
    spec = dict(run.obj["spec"])
    spec["resources"] = {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"memory": "2Gi"}}
    notes = certainty(spec)[PREVIEW_ASSUMED]
    assert "GPUs per node (from gpusPerNode)" in notes
    assert "RDMA NICs per node (mlnxPerNode/nicResourceName, per model)" in notes


def test_a_site_that_checked_nvcres_nic_requests_keeps_categories() -> None:
    checked = text(model="L20").replace(
        "resourceName: rdma/roce\n", "resourceName: rdma/roce\n        nvcreNicsChecked: true\n"
    )
    found = _nvcre(checked)
    assert not any(m.kind == "WorkloadRun" and "pair-nccl-all-reduce-" in m.name
                   and "tcp" not in m.name for m in found)  # fmt: skip
