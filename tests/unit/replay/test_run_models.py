"""The replay asks a readiness engine's run model for the runs of its own objects (issue 35
item 3): NVCRE's Certifications and WorkloadRuns, from NVCRE's package."""

from __future__ import annotations

from nvcregen.engineapi.registry import READINESS
from nvcregen.replay.context import queue_pointer
from nvcregen.replay.model import Run, TreeObject
from nvcregen.replay.runmodels import is_run_model, run_models
from nvcregen.replay.runs import is_run, written_kinds


def _object(api: str, kind: str) -> TreeObject:
    return TreeObject("f.yaml", "readiness/01-a/f.yaml", {"apiVersion": api, "kind": kind})


def test_nvcres_objects_are_expanded_by_its_own_run_model() -> None:
    models = run_models()
    assert sorted(models) == [
        ("nvcre.nvidia.com", "Certification"),
        ("nvcre.nvidia.com", "WorkloadRun"),
    ]
    for model in models.values():
        assert is_run_model(model)
        assert type(model).__module__ == "nvcregen.engines.readiness.nvcre.replay"
    assert not is_run_model(object())


def test_a_run_is_one_nvcregen_writes_or_one_an_engine_expands() -> None:
    assert is_run(_object("batch/v1", "Job"))
    assert is_run(_object("trainer.kubeflow.org/v1alpha1", "TrainJob"))
    assert is_run(_object("nvcre.nvidia.com/v1alpha1", "WorkloadRun"))
    assert is_run(_object("nvcre.nvidia.com/v1alpha1", "Certification"))
    assert not is_run(_object("nvcre.nvidia.com/v1alpha1", "LogProfile"))
    assert not is_run(_object("v1", "ConfigMap"))


def test_a_run_names_its_queue_where_its_engine_puts_its_labels() -> None:
    nvcre = Run(_object("nvcre.nvidia.com/v1alpha1", "WorkloadRun"), "01-a", "t", None, ())
    job = Run(_object("batch/v1", "Job"), "01-a", "t", None, ())
    assert queue_pointer(nvcre) == "/spec/workloadMetadata"
    assert queue_pointer(job) == "/metadata/labels"


def test_the_runs_nvcregen_writes_are_those_of_the_engine_that_writes_them() -> None:
    assert written_kinds() == {("batch", "Job"), ("trainer.kubeflow.org", "TrainJob")}
    nvcre = READINESS["nvcre"]
    objects = {nvcre.run_object(mode, False) for mode in ("category", "workloadrun")}
    assert set(run_models()) == objects  # the replay expands what the steps wait on
