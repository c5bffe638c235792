"""NVC625: no readiness run bypasses admission (nvcregen.check.admission).

Hand-built objects first, then render (`check_manifests`) and `nvcregen check` on a tree.
"""

from __future__ import annotations

import copy
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from sitefactory import parse, plan_of

from nvcregen.check.admission import admission_findings
from nvcregen.check.gate import check_manifests
from nvcregen.cli import main
from nvcregen.compile.layers import site_manifests
from nvcregen.compile.postprocess import postprocess
from nvcregen.core.kueuekeys import QUEUE_LABEL
from nvcregen.core.manifest import Manifest
from nvcregen.emit.canonical import dump_yaml
from nvcregen.plan.resolved import Plan

ROOT = Path(__file__).resolve().parents[3]
Obj = dict[str, Any]


def job(labels: dict[str, str] | None = None) -> Obj:
    pod = {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}
    metadata: Obj = {"name": "j", "namespace": "nvcre"}
    if labels is not None:
        metadata["labels"] = labels
    spec = {"template": {"spec": pod}}
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": metadata, "spec": spec}


def trainjob(labels: dict[str, str]) -> Obj:
    return {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "metadata": {"name": "t", "namespace": "nvcre", "labels": labels},
        "spec": {"runtimeRef": {"name": "r"}},
    }


def certification(spec: Obj) -> Obj:
    base = {"target": {}, "categories": [{"domain": "d", "variant": "v", "options": {}}]}
    meta = {"name": "c", "namespace": "nvcre"}
    api = "nvcre.nvidia.com/v1alpha1"
    return {"apiVersion": api, "kind": "Certification", "metadata": meta, "spec": base | spec}


def _labelled_category(variant: str) -> Obj:
    options = {"workloadMetadata": {"labels": {QUEUE_LABEL: "q"}}}
    return {"domain": "d", "variant": variant, "options": options}


# Hand-built objects


@pytest.mark.parametrize(
    "obj",
    [
        job(),
        job({"app": "x"}),
        job({QUEUE_LABEL: ""}),
        trainjob({"nvcregen.io/site": "lab"}),
        certification({}),
        certification({"workloadMetadata": {"labels": {"nvcregen.io/site": "lab"}}}),
    ],
    ids=["job", "job-other-label", "job-empty-queue", "trainjob", "cert", "cert-other-label"],
)
def test_a_run_without_a_queue_is_reported(obj: Obj) -> None:
    (finding,) = admission_findings(obj)
    assert finding.code == "NVC625"
    assert QUEUE_LABEL in finding.hint


@pytest.mark.parametrize(
    "obj",
    [
        job({QUEUE_LABEL: "readiness"}),
        trainjob({QUEUE_LABEL: "readiness"}),
        certification({"workloadMetadata": {"labels": {QUEUE_LABEL: "readiness"}}}),
        certification({"gangScheduler": {"schedulerName": "kai-scheduler"}}),
        certification({"categories": [_labelled_category("a"), _labelled_category("b")]}),
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}},
    ],
    ids=["job", "trainjob", "cert", "cert-gang", "cert-every-category", "configmap"],
)
def test_a_queued_run_or_another_kind_passes(obj: Obj) -> None:
    assert admission_findings(obj) == []


# render


def _manifests(site_file: str) -> tuple[list[Manifest], Plan]:
    planned = plan_of(*parse((ROOT / "sites" / site_file).read_text(encoding="utf-8")))
    built = site_manifests(planned, root=Path())
    return postprocess(built, planned.site, f"sites/{site_file}"), planned


def _unlabelled(manifests: list[Manifest], kind: str, component: str) -> list[Manifest]:
    """The manifests, the first `kind` without its queue label and put in `component`."""
    index = next(i for i, m in enumerate(manifests) if m.kind == kind)
    obj = copy.deepcopy(manifests[index].obj)
    nvcre = kind == "Certification"
    labels = obj["spec"]["workloadMetadata"]["labels"] if nvcre else obj["metadata"]["labels"]
    del labels[QUEUE_LABEL]
    broken = Manifest(obj, component, manifests[index].source, manifests[index].catalog)
    return [*manifests[:index], broken, *manifests[index + 1 :]]


@pytest.mark.parametrize(
    ("site_file", "kind"),
    [
        ("h20-3e-trainer.yaml", "Job"),
        ("h20-3e-trainer.yaml", "TrainJob"),
        ("h20-3e-lab.yaml", "Certification"),
    ],
)
def test_render_refuses_a_readiness_run_without_a_queue(site_file: str, kind: str) -> None:
    manifests, planned = _manifests(site_file)
    assert not [d for d in check_manifests(manifests, planned) if d.code == "NVC625"]
    broken = _unlabelled(manifests, kind, "readiness")
    (diag,) = [d for d in check_manifests(broken, planned) if d.code == "NVC625"]
    assert diag.is_error and kind in diag.message


def test_the_policy_is_for_the_readiness_layer_only() -> None:
    manifests, planned = _manifests("h20-3e-trainer.yaml")
    elsewhere = _unlabelled(manifests, "Job", "preview")
    assert not [d for d in check_manifests(elsewhere, planned) if d.code == "NVC625"]


# nvcregen check on a rendered tree


def test_check_reports_a_job_without_a_queue_in_a_rendered_tree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = "h20-3e-trainer"
    shutil.copytree(ROOT / "out" / site, tmp_path / "out" / site)
    shutil.copytree(ROOT / "sites", tmp_path / "sites")
    file = sorted((tmp_path / "out" / site / "readiness").rglob("job-*-r1-c0.yaml"))[0]
    obj = yaml.safe_load(file.read_text())
    del obj["metadata"]["labels"][QUEUE_LABEL]
    file.write_text(dump_yaml(obj))
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["check", "out"])
    assert result.exit_code == 1, result.output
    assert "NVC625" in result.output and file.name in result.output
