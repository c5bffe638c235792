"""Semantic checks of admission (nvcregen.validate.admission): NVC360 to NVC364."""

from __future__ import annotations

from typing import Any

import pytest
from sitefactory import catalog, line_of, parse, site_yaml
from trainerfactory import trainer_text

from nvcregen.core.errors import Severity
from nvcregen.validate.admission import trainer_problem, workflow_namespace_gap
from nvcregen.validate.semantic import check_references

GANG = "gangScheduler: {schedulerName: kai-scheduler}\n"
INTRA_NCCL = "- {name: node, scope: intra-node, tests: [nccl-all-reduce]}\n"


def diagnose(text: str) -> list[Any]:
    site, doc = parse(text)
    return check_references(site, catalog(), doc)


def codes(text: str) -> list[str]:
    return [d.code for d in diagnose(text)]


@pytest.mark.parametrize(
    ("kueue", "trainer", "problem"),
    [
        ((0, 19, 2), (2, 2, 1), None),
        ((0, 17, 0), (2, 2, 0), None),
        ((0, 15, 3), (2, 1, 0), None),  # podTemplateOverrides on both sides
        ((0, 16, 9), (2, 2, 1), "podTemplateOverrides"),
        ((0, 17, 0), (2, 1, 9), "Kueue >= 0.17 needs Trainer >= 2.2"),
        ((0, 13, 0), (2, 0, 0), "no TrainJob integration"),
    ],
)
def test_which_kueue_can_admit_which_trainers_trainjobs(
    kueue: tuple[int, ...], trainer: tuple[int, ...], problem: str | None
) -> None:
    found = trainer_problem(kueue, trainer)
    if problem is None:
        assert found is None
    else:
        assert found is not None and problem in found


def test_an_old_external_kueue_is_an_error_at_its_version() -> None:
    text = site_yaml(dependencies="kueue: {managed: false, version: 0.16.2}\n")
    (diag,) = [d for d in diagnose(text) if d.code == "NVC360"]
    assert diag.severity is Severity.ERROR
    assert diag.path == "/spec/dependencies/kueue/version"
    assert diag.span.line == line_of(text, "version: 0.16.2")
    assert "Trainer 2.2.1" in diag.message
    assert codes(site_yaml(dependencies="kueue: {managed: false, version: 0.18.6}\n")) == []


def test_nvcregen_installs_only_the_pinned_kueue() -> None:
    text = site_yaml(dependencies="kueue: {version: 0.18.6}\n")
    assert codes(text) == ["NVC361"]
    assert codes(site_yaml(dependencies="kueue: {version: 0.19.2}\n")) == []


def test_kueue_and_a_gang_scheduler_together_is_an_error() -> None:
    text = site_yaml(dependencies=GANG + "kueue: {managed: true}\n", stages=INTRA_NCCL)
    (diag,) = [d for d in diagnose(text) if d.code == "NVC362"]
    assert diag.span.line == line_of(text, "gangScheduler:")
    assert codes(site_yaml(dependencies=GANG, stages=INTRA_NCCL)) == []


def test_a_gang_scheduler_in_trainer_mode_is_an_error() -> None:
    text = trainer_text(site_yaml(dependencies=GANG, stages=INTRA_NCCL))
    assert codes(text) == ["NVC363"]


def test_a_queue_label_key_with_workloadruns_is_an_error() -> None:
    gang = "gangScheduler: {schedulerName: runai-scheduler, queueLabelKey: runai/queue}\n"
    # the factory's dcgm-l1 runs as a WorkloadRun: its schema has no queueLabelKey
    text = site_yaml(dependencies=gang)
    (diag,) = [d for d in diagnose(text) if d.code == "NVC364"]
    assert diag.path == "/spec/dependencies/gangScheduler/queueLabelKey"
    assert codes(site_yaml(dependencies=gang, stages=INTRA_NCCL)) == []


def test_the_default_site_admits_through_a_managed_kueue_without_a_word() -> None:
    site, _ = parse(site_yaml())
    assert site.spec.dependencies.kueue.managed
    assert site.spec.dependencies.gang_scheduler is None
    assert codes(site_yaml()) == []


def test_nvcre_mode_under_kueue_names_the_workflow_namespace_gap_nvc381() -> None:
    # NVCRE's controllers create a Workflow's TrainJobs in its Certification's or
    # WorkloadRun's namespace (issue 32, read from NVCRE's source): the note states it and
    # how to confirm it, the one precondition a catalog manifest could break.
    text = site_yaml()
    site, doc = parse(text)
    (diag,) = workflow_namespace_gap(site, doc)
    assert (diag.code, diag.severity) == ("NVC381", Severity.INFO)
    assert "'readiness'" in diag.message and "'nvcre'" in diag.message
    assert "kubectl get trainjobs -A -l kueue.x-k8s.io/queue-name=readiness" in diag.hint
    named = text.replace("  nodePools:\n", "  nvcre: {namespace: gpu-check}\n  nodePools:\n")
    site, doc = parse(named)
    (diag,) = workflow_namespace_gap(site, doc)
    assert diag.path == "/spec/nvcre/namespace"
    assert diag.span.line == line_of(named, "nvcre: {namespace: gpu-check}")


def test_the_workflow_namespace_gap_is_not_reported_where_it_cannot_happen() -> None:
    trainer = trainer_text(site_yaml())
    assert workflow_namespace_gap(*parse(trainer)) == []  # trainer mode: its own TrainJobs
    gang = site_yaml(dependencies=GANG)
    assert workflow_namespace_gap(*parse(gang)) == []  # a KAI queue is cluster-wide
