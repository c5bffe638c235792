"""Tests of nvcregen.validate.schema: JSON Schema violations as actionable diagnostics."""

from __future__ import annotations

import pytest
from sitefactory import edit, line_of, schema_diagnostics, site_yaml

from nvcregen.core.errors import Diagnostic, Severity


def only(diags: list[Diagnostic], code: str) -> Diagnostic:
    found = [d for d in diags if d.code == code]
    assert len(found) == 1, diags
    assert found[0].severity is Severity.ERROR
    return found[0]


def test_the_base_site_is_schema_valid() -> None:
    assert schema_diagnostics(site_yaml()) == []


def test_unknown_key_points_at_the_key_and_suggests_the_known_one() -> None:
    text = edit(site_yaml(), "gpuHours: 500}", "gpuHours: 500, retest: 1}")
    diag = only(schema_diagnostics(text), "NVC208")
    assert diag.message == "unknown key 'retest'"
    assert diag.hint == "did you mean 'retests'?"
    assert diag.path == "/spec/readiness/window/retest"
    assert (diag.span.line, diag.span.column) == (
        line_of(text, "retest:"),
        text.splitlines()[line_of(text, "retest:") - 1].index("retest:") + 1,
    )


def test_misspelt_required_key_is_unknown_and_missing() -> None:
    text = edit(site_yaml(), "      model: H100\n", "      modle: H100\n")
    diags = schema_diagnostics(text)
    unknown = only(diags, "NVC208")
    assert (unknown.message, unknown.hint) == ("unknown key 'modle'", "did you mean 'model'?")
    assert unknown.span.line == line_of(text, "modle")
    missing = only(diags, "NVC201")
    assert missing.message == "missing required key 'model'"
    assert missing.path == "/spec/nodePools/0"


def test_unknown_key_without_a_close_match_lists_the_allowed_keys() -> None:
    text = edit(site_yaml(), "  cluster: lab\n", "  cluster: lab\n  zzz: 1\n")
    diag = only(schema_diagnostics(text), "NVC208")
    assert diag.hint.startswith("allowed keys: cluster, dependencies, gitops, images")


def test_unquoted_version_is_the_float_trap() -> None:
    text = edit(site_yaml(), 'version: "1.30"', "version: 1.30")
    diag = only(schema_diagnostics(text), "NVC202")
    assert diag.message == "1.30 was read as the number 1.3, not as text"
    assert diag.hint == 'quote it: "1.30"'
    assert diag.path == "/spec/kubernetes/version"
    assert diag.span.line == line_of(text, "version: 1.30")
    assert diag.notes == ("schema: schemas/site.v1alpha1.json#/$defs/KubernetesSpec",)


@pytest.mark.parametrize(
    ("old", "new", "path", "message", "hint"),
    [
        (
            "scope: inter-node",
            "scope: inter-nodes",
            "/spec/readiness/stages/1/scope",
            '"inter-nodes" is not one of: intra-node, inter-node',
            "did you mean 'inter-node'?",
        ),
        (
            "fabric: ib",
            "fabric: rcoe",
            "/spec/nodePools/0/nics/fabric",
            '"rcoe" is not one of: roce, ib, tcp',
            "did you mean 'roce'?",
        ),
        (
            "fabric: ib",
            "fabric: ethernet",
            "/spec/nodePools/0/nics/fabric",
            '"ethernet" is not one of: roce, ib, tcp',
            "use one of: roce, ib, tcp",
        ),
        (
            "kind: Site",
            "kind: Sites",
            "/kind",
            "\"Sites\" must be 'Site'",
            "did you mean 'Site'?",
        ),
    ],
    ids=["close-match", "typo", "no-close-match", "const"],
)
def test_wrong_choice(old: str, new: str, path: str, message: str, hint: str) -> None:
    text = edit(site_yaml(), old, new)
    diag = only(schema_diagnostics(text), "NVC203")
    assert (diag.path, diag.message, diag.hint) == (path, message, hint)
    assert diag.span.line == line_of(text, new)


@pytest.mark.parametrize(
    ("old", "new", "code", "path", "message", "hint"),
    [
        (
            "speed: 400Gb/s",
            "speed: 200",  # a number: quoting it would not help
            "NVC202",
            "/spec/nodePools/0/nics/speed",
            "a bandwidth needs a unit: GB/s (bytes) or Gb/s (bits)",
            "write 200 GB/s (gigabytes per second) or 200 Gb/s (gigabits per second)",
        ),
        (
            "speed: 400Gb/s",
            'speed: "200"',
            "NVC204",
            "/spec/nodePools/0/nics/speed",
            "a bandwidth needs a unit: GB/s (bytes) or Gb/s (bits)",
            "write 200 GB/s (gigabytes per second) or 200 Gb/s (gigabits per second)",
        ),
        (
            "speed: 400Gb/s",
            "speed: 200 Gbit/s",
            "NVC204",
            "/spec/nodePools/0/nics/speed",
            "unknown bandwidth unit 'Gbit/s' (units are case-sensitive: B = bytes, b = bits)",
            "write 200 Gb/s",
        ),
        (
            "deadline: 12h",
            "deadline: 12 hours",
            "NVC204",
            "/spec/readiness/window/deadline",
            "invalid duration '12 hours': units are h, m, s, ms, not hours, no spaces",
            "write 12h",
        ),
        (
            "deadline: 12h",
            "deadline: 90",
            "NVC202",
            "/spec/readiness/window/deadline",
            "a duration needs a unit: '90'",
            "write 90s or 90m",
        ),
    ],
    ids=["bare-number", "quoted-number", "unknown-unit", "spelt-out-unit", "bare-duration"],
)
def test_unit_fields_explain_with_the_units_message(
    old: str, new: str, code: str, path: str, message: str, hint: str
) -> None:
    text = edit(site_yaml(), old, new)
    diag = only(schema_diagnostics(text), code)
    assert (diag.path, diag.message, diag.hint) == (path, message, hint)
    assert diag.span.line == line_of(text, new)


def test_threshold_size_in_bits_is_explained() -> None:
    text = site_yaml(thresholds="- {test: nccl-all-reduce, scope: inter-node, at: 8Gb}")
    diag = only(schema_diagnostics(text), "NVC204")
    assert diag.path == "/spec/thresholds/0/at"
    assert diag.message == "'Gb' is bits, but a size is in bytes (B)"
    assert diag.hint.startswith("8Gb = 1GB; ")
    assert diag.span.line == line_of(text, "at: 8Gb")


def test_other_pattern_failures_show_the_pattern_hint() -> None:
    text = edit(site_yaml(), "  name: lab\n", "  name: Lab_1\n")
    diag = only(schema_diagnostics(text), "NVC204")
    assert diag.path == "/metadata/name"
    assert diag.message.startswith('"Lab_1" does not match the expected form')
    assert diag.hint == "use lowercase letters, digits and '-', starting with a letter"


@pytest.mark.parametrize(
    ("old", "new", "path", "missing", "hint"),
    [
        ("  cluster: lab\n", "", "/spec", "cluster", "add 'cluster:' here"),
        ("deadline: 12h, ", "", "/spec/readiness/window", "deadline", "for example: deadline: 30m"),
    ],
)
def test_missing_required_key(old: str, new: str, path: str, missing: str, hint: str) -> None:
    text = edit(site_yaml(), old, new)
    diag = only(schema_diagnostics(text), "NVC201")
    assert diag.path == path
    assert diag.message == f"missing required key '{missing}'"
    assert diag.hint == hint


def test_missing_key_is_reported_where_its_mapping_starts() -> None:
    text = edit(site_yaml(), "deadline: 12h, ", "")
    diag = only(schema_diagnostics(text), "NVC201")
    assert diag.span.line == line_of(text, "window:")


def test_diagnostics_are_sorted_and_unique() -> None:
    text = edit(site_yaml(), "scope: inter-node", "scope: inter-nodes")
    text = edit(text, "model: H100\n", "model: H100\n      gpusPerNode: many\n")
    diags = schema_diagnostics(text)
    assert [d.code for d in diags] == ["NVC202", "NVC203"]
    assert diags == sorted(set(diags), key=Diagnostic.sort_key)


def test_a_kubernetes_label_selector_says_how_to_write_the_labels() -> None:
    """Issue 19: `{"pool": "h20"} is not of type 'string'` did not say what is expected."""
    text = edit(
        site_yaml(), "  nodes: [gpu-1, gpu-2]\n", "  selector: {matchLabels: {pool: h20}}\n"
    )
    diag = only(schema_diagnostics(text), "NVC202")
    assert diag.message == (
        "selector is a map of labels, each written label: value with a text value, not a "
        "Kubernetes label selector: matchLabels was read as a label whose value is a mapping"
    )
    assert diag.hint == "write the labels directly: selector: {pool: h20} (every label must match)"
    assert diag.path == "/spec/nodePools/0/selector/matchLabels"
    line = line_of(text, "matchLabels")
    assert (diag.span.line, diag.span.column) == (
        line,
        text.splitlines()[line - 1].index("{pool") + 1,
    )


def test_other_mappings_in_a_label_map_say_what_a_label_takes() -> None:
    text = edit(site_yaml(), "  nodes: [gpu-1, gpu-2]\n", "  selector: {pool: {name: h20}}\n")
    diag = only(schema_diagnostics(text), "NVC202")
    assert diag.message.endswith("but label 'pool' has a mapping as its value")
    assert diag.hint.startswith("write selector: {pool: <value>}")
    expressions = edit(
        site_yaml(),
        "  nodes: [gpu-1, gpu-2]\n",
        "  selector: {matchExpressions: [{key: pool, operator: In, values: [h20]}]}\n",
    )
    diag = only(schema_diagnostics(expressions), "NVC202")
    assert "matchExpressions (set-based selection) is not supported" in diag.message
    # a number where a label's value belongs is still the quoting problem
    number = edit(site_yaml(), "  nodes: [gpu-1, gpu-2]\n", "  selector: {rack: 7}\n")
    diag = only(schema_diagnostics(number), "NVC202")
    assert (diag.message, diag.hint) == ("7 was read as the number 7, not as text", 'quote it: "7"')
