"""The generated PrometheusRules and dashboard queries, checked by the real `promtool`.

For each example site (every `sites/*.yaml` run by NVCRE: trainer-mode sites have no
monitoring layer; plus a factory site with goodput and algorithm-bandwidth thresholds)
the rule groups of the generated PrometheusRule are written to `rules.yaml` and run
through `promtool check rules` and `promtool test rules` with the unit tests in
`tests/promtool/<case>.test.yaml`, which must exercise every recording rule and every
alert. promtool comes from Debian's `prometheus` package; when it is missing these tests
fail rather than skip, so a green run always means promtool ran.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from sitefactory import catalog, parse, site_yaml

from nvcregen.compile.monitoring.layer import monitoring_manifests
from nvcregen.core.manifest import Manifest
from nvcregen.plan.resolve import plan

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
UNIT_TESTS = Path(__file__).resolve().parent / "promtool"
SITES = sorted((ROOT / "sites").glob("*.yaml"))

FACTORY_STAGES = """\
- name: node
  scope: intra-node
  tests: [nccl-all-reduce]
- name: fabric
  scope: inter-node
  tests: [nccl-all-reduce, training-goodput]
"""
FACTORY_THRESHOLDS = """\
- {test: nccl-all-reduce, scope: inter-node, algbw: ">= 20 GB/s"}
- {test: training-goodput, scope: inter-node, goodput: ">= 0.9"}
"""


def factory_text() -> str:
    """A site with an algbw threshold (no `at`) and a goodput threshold."""
    return site_yaml(stages=FACTORY_STAGES, thresholds=FACTORY_THRESHOLDS)


def case_texts() -> dict[str, str]:
    """Site text per case; the case name is the unit-test file's stem."""
    texts = {path.stem: path.read_text(encoding="utf-8") for path in SITES}
    cases = {k: t for k, t in texts.items() if parse(t)[0].spec.readiness.engine == "nvcre"}
    cases["factory-goodput"] = factory_text()
    return cases


CASES = case_texts()


def promtool() -> str:
    """The promtool executable; fails (never skips) when it is not installed."""
    found = shutil.which("promtool")
    if found is None:
        pytest.fail(
            "promtool is not on PATH: install Debian's `prometheus` package "
            "(sudo apt-get install prometheus), as CI does",
            pytrace=False,
        )
    return found


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [promtool(), *args], cwd=cwd, capture_output=True, text=True, check=False, timeout=120
    )


def manifests(case: str) -> list[Manifest]:
    site, _ = parse(CASES[case])
    return monitoring_manifests(site, plan(site, catalog()))


def rule_groups(case: str) -> list[dict[str, Any]]:
    found = [m for m in manifests(case) if m.kind == "PrometheusRule"]
    assert len(found) == 1, [m.kind for m in manifests(case)]
    groups: list[dict[str, Any]] = found[0].obj["spec"]["groups"]
    return groups


def write_rules(case: str, folder: Path) -> Path:
    path = folder / "rules.yaml"
    text = yaml.safe_dump({"groups": rule_groups(case)}, sort_keys=False, width=1000)
    path.write_text(text, encoding="utf-8")
    return path


def unit_test_file(case: str) -> Path:
    path = UNIT_TESTS / f"{case}.test.yaml"
    assert path.is_file(), f"write promtool unit tests for {case} in {path}"
    return path


@pytest.mark.parametrize("case", sorted(CASES))
def test_promtool_check_rules(case: str, tmp_path: Path) -> None:
    write_rules(case, tmp_path)
    result = run("check", "rules", "rules.yaml", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS" in result.stdout


@pytest.mark.parametrize("case", sorted(CASES))
def test_promtool_unit_tests(case: str, tmp_path: Path) -> None:
    write_rules(case, tmp_path)
    shutil.copy(unit_test_file(case), tmp_path / "rules.test.yaml")
    result = run("test", "rules", "rules.test.yaml", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS" in result.stdout


@pytest.mark.parametrize("case", sorted(CASES))
def test_unit_tests_cover_every_rule(case: str) -> None:
    spec = yaml.safe_load(unit_test_file(case).read_text(encoding="utf-8"))
    tests = spec["tests"]
    queried = [t["expr"] for test in tests for t in test.get("promql_expr_test", [])]
    fired = [t for test in tests for t in test.get("alert_rule_test", []) if t["exp_alerts"]]
    for group in rule_groups(case):
        for rule in group["rules"]:
            if "record" in rule:
                with_samples = [
                    t
                    for test in tests
                    for t in test.get("promql_expr_test", [])
                    if t["expr"] == rule["record"] and t["exp_samples"]
                ]
                assert with_samples, f"no test expects samples of {rule['record']}"
                continue
            labels = rule["labels"]
            expected = [
                a
                for t in fired
                if t["alertname"] == rule["alert"]
                for a in t["exp_alerts"]
                if labels.items() <= a["exp_labels"].items()
            ]
            assert expected, f"no test expects {rule['alert']} with labels {labels}"
    assert queried, "the unit tests query no recording rule"


@pytest.mark.parametrize(
    "monitoring",
    ["serviceMonitor: {honorLabels: false}", "recordingRules: true"],
    ids=["exported-labels", "plain"],
)
@pytest.mark.parametrize("cluster", ["lab", '"gpu.prod+1 (a|b)"'])
def test_promtool_check_rules_variants(monitoring: str, cluster: str, tmp_path: Path) -> None:
    text = factory_text().replace("  cluster: lab\n", f"  cluster: {cluster}\n", 1)
    text += f"  monitoring:\n    {monitoring}\n"
    site, _ = parse(text)
    planned = plan(site, catalog())
    found = [m for m in monitoring_manifests(site, planned) if m.kind == "PrometheusRule"]
    groups = found[0].obj["spec"]["groups"]
    (tmp_path / "rules.yaml").write_text(yaml.safe_dump({"groups": groups}, width=1000))
    result = run("check", "rules", "rules.yaml", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr


def dashboard_queries(case_manifests: list[Manifest]) -> list[str]:
    found = [m for m in case_manifests if m.kind == "ConfigMap"]
    assert len(found) == 1
    model = json.loads(next(iter(found[0].obj["data"].values())))
    return [t["expr"] for panel in model["panels"] for t in panel.get("targets", [])]


@pytest.mark.parametrize("operator", [True, False])
def test_dashboard_queries_are_valid_promql(operator: bool, tmp_path: Path) -> None:
    """Each panel query, with Grafana's variables filled in, parses as PromQL."""
    text = site_yaml(dependencies=f"prometheus: {{operator: {str(operator).lower()}}}")
    site, _ = parse(text)
    queries = dashboard_queries(monitoring_manifests(site, plan(site, catalog())))
    assert queries
    filled = [q.replace("$__range", "6h").replace("$nccl_test", ".*") for q in queries]
    assert not [q for q in filled if re.search(r"\$\w", q)], filled
    rules = [{"record": f"nvcregen:dashboard_query:p{i}", "expr": q} for i, q in enumerate(filled)]
    path = tmp_path / "queries.yaml"
    path.write_text(yaml.safe_dump({"groups": [{"name": "dashboard", "rules": rules}]}))
    result = run("check", "rules", path.name, cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
