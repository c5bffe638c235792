"""NVC115: a site's label maps hold Kubernetes labels, refused where written (issue #32).

A value no label takes in `dependencies.prometheus.selector` or
`monitoring.serviceMonitor.labels` passed the site and failed only in the generated
PrometheusRule and ServiceMonitor (NVC604): at the line of `recordingRules`, as "a bug in
nvcregen", with the value printed whole.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from sitefactory import edit, line_of, parse, site_yaml

from nvcregen.cli import main
from nvcregen.core.kube import is_label_key, is_label_value
from nvcregen.validate.labelmaps import label_map_problems

ROOT = Path(__file__).resolve().parents[3]
# Random-looking, 69 characters, of no token family nvcregen knows: no label value.
OPAQUE = "Zq8Rw3Lp0Xc7Vb2Nm5Kd9Hs4Jf6Tg1Yy8Ue3Io0Pa7Sd2Fg5Hj9Kl4Zx6Cv1Bn8Mq3Wer"
POOL_NODES = "      nodes: [gpu-1, gpu-2]\n"


def pool_selector(selector: str) -> str:
    return edit(site_yaml(), POOL_NODES, f"      selector: {selector}\n      nodeCount: 2\n")


def test_the_monitoring_labels_of_issue_32_are_refused_at_their_own_lines(
    tmp_path: Path,
) -> None:
    site = (ROOT / "sites" / "l20-pool.yaml").read_text(encoding="utf-8")
    text = site.replace("release: kube-prometheus-stack", f'release: "{OPAQUE}"')
    (tmp_path / "site.yaml").write_text(text, encoding="utf-8")
    args = ["validate", str(tmp_path / "site.yaml"), "--format", "json"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2, result.output
    errors = [d for d in json.loads(result.stdout) if d["severity"] == "error"]
    selector, labels = line_of(text, "selector: {release"), line_of(text, "labels: {release")
    assert [(d["code"], d["line"], d["path"]) for d in errors] == [
        ("NVC115", selector, "/spec/dependencies/prometheus/selector/release"),
        ("NVC115", labels, "/spec/monitoring/serviceMonitor/labels/release"),
    ]
    assert all(d["message"].endswith("is not a Kubernetes label value") for d in errors)
    assert OPAQUE not in result.output  # it looks encoded: masked, its length said
    assert '"***" (a string of 69 characters, not shown)' in errors[0]["message"]


def test_a_pool_selector_value_and_key_are_refused_at_their_columns() -> None:
    text = pool_selector('{"bad key": h20-}')
    site, doc = parse(text)
    found = [
        (d.code, d.span.line, d.span.column, d.path, d.message)
        for d in label_map_problems(site, doc)
    ]
    line = line_of(text, "selector:")
    column = text.splitlines()[line - 1].index
    assert found == [
        ("NVC115", line, column('"bad key"') + 1, "/spec/nodePools/0/selector/bad key",
         '"bad key" is not a Kubernetes label key'),
        ("NVC115", line, column("h20-") + 1, "/spec/nodePools/0/selector/bad key",
         '"h20-" is not a Kubernetes label value'),
    ]  # fmt: skip


def test_valid_label_maps_are_clean() -> None:
    site, doc = parse(pool_selector(f"{{nvidia.com/gpu.product: NVIDIA-H100, pool: {'a' * 63}}}"))
    assert label_map_problems(site, doc) == []
    site, doc = parse(site_yaml())
    assert label_map_problems(site, doc) == []  # the defaults ({release: prometheus})


@pytest.mark.parametrize(
    ("value", "valid"),
    [
        ("", True),
        ("a", True),
        ("a" * 63, True),
        ("a" * 64, False),
        ("A.b_c-D9", True),
        ("-a", False),
        ("a-", False),
        ("a b", False),
        ("a/b", False),
        ("a\n", False),
    ],
)
def test_label_values_as_kubernetes_takes_them(value: str, valid: bool) -> None:
    assert is_label_value(value) is valid


@pytest.mark.parametrize(
    ("key", "valid"),
    [
        ("pool", True),
        ("nvidia.com/gpu.product", True),
        ("a" * 63, True),
        ("a" * 64, False),
        (f"{'a' * 63}.{'b' * 63}.{'c' * 63}.{'d' * 61}/x", True),  # a 253-character prefix
        (f"{'a' * 63}.{'b' * 63}.{'c' * 63}.{'d' * 62}/x", False),  # 254
        ("", False),
        ("/x", False),
        ("Upper.Case/x", False),  # the prefix is a lower-case subdomain
        ("a/b/c", False),
        ("x/", False),
    ],
)
def test_label_keys_as_kubernetes_takes_them(key: str, valid: bool) -> None:
    assert is_label_key(key) is valid
