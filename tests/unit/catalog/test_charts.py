"""catalog/charts: what each chart version installs, checked against the vendored chart files."""

from __future__ import annotations

from pathlib import Path

import yaml
from sitefactory import catalog

from nvcregen.catalog.charts import Condition, chart_key

UPSTREAM = Path(__file__).resolve().parents[3] / "schemas" / "upstream"


def test_every_chart_nvcregen_installs_is_in_the_catalog() -> None:
    assert sorted(catalog().charts) == [
        "cluster-readiness-engine@0.7.0",
        "kubeflow-trainer@2.2.1",
        "kueue@0.19.2",
    ]


def test_chart_entries_match_the_vendored_chart_yaml() -> None:
    for folder, key in [("kubeflow-trainer/v2.2.1", "kubeflow-trainer@2.2.1"),
                        ("kueue/v0.19.2", "kueue@0.19.2")]:  # fmt: skip
        chart = yaml.safe_load((UPSTREAM / folder / "chart" / "Chart.yaml").read_text())
        assert chart_key(chart["name"], chart["version"]) == key


def test_kueue_conditions_default_as_its_vendored_values_do() -> None:
    values = yaml.safe_load((UPSTREAM / "kueue/v0.19.2/chart/values.yaml").read_text())
    entry = catalog().charts["kueue@0.19.2"]
    for part in entry.parts:
        for condition in part.when:
            assert values[condition.path] == condition.default, condition.path


def test_parts_follow_the_values_nvcregen_sets() -> None:
    trainer = catalog().charts["kubeflow-trainer@2.2.1"]
    assert [i.name for i in trainer.pulled({"jobset": {"install": False}})] == [
        "Trainer controller manager"
    ]
    assert len(trainer.pulled({})) == 2  # jobset.install defaults to true
    kueue = catalog().charts["kueue@0.19.2"]
    assert kueue.installs({}).namespaces == {"kube-system"}
    assert kueue.installs({"enableVisibilityAuthReaderRoleBinding": False}).namespaces == set()


def test_a_condition_reads_dotted_paths_and_defaults() -> None:
    condition = Condition(path="a.b", equals=True, default=False)
    assert condition.holds({"a": {"b": True}})
    assert not condition.holds({})
    assert not condition.holds({"a": "not a mapping"})
