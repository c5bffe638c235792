"""The Kubernetes CEL library and value mapping, on a small made-up CRD."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from nvcregen.check.cel import CelResult, evaluate_rules, uses_old_self
from nvcregen.check.cel_k8s import parse_quantity
from nvcregen.kubeschema.registry import SchemaRegistry

Obj = dict[str, Any]

SPEC_SCHEMA: Obj = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "count": {"type": "integer"},
        "ratio": {"type": "number"},
        "port": {"x-kubernetes-int-or-string": True},
        "items": {"type": "array", "items": {"type": "string"}},
        "labels": {"type": "object", "additionalProperties": {"type": "string"}},
        "url": {"type": "string"},
        "quantity": {"type": "string"},
        "data": {"type": "string", "format": "byte"},
        "when": {"type": "string", "format": "date-time"},
        "mode": {"type": "string", "default": "fast"},
        "note": {"type": "string", "nullable": True},
        "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
        "tags": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"},
        "ports": {
            "type": "array",
            "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["name"],
            "items": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "port": {"type": "integer"},
                    "tags": {"type": "array", "items": {"type": "string"}},
                },
            },
        },
    },
}


def make_registry(tmp_path: Path, *rules: Obj, root_rules: tuple[Obj, ...] = ()) -> SchemaRegistry:
    schema = {
        "type": "object",
        "x-kubernetes-validations": list(root_rules),
        "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "metadata": {"type": "object"},
            "spec": {**SPEC_SCHEMA, "x-kubernetes-validations": list(rules)},
        },
    }
    compiled = tmp_path / "_compiled"
    compiled.mkdir(exist_ok=True)
    crd = {
        "group": "example.com",
        "version": "v1",
        "kind": "Widget",
        "scope": "Namespaced",
        "source": "test",
        "schema": schema,
    }
    (compiled / "example.com_Widget_v1.json").write_text(json.dumps(crd), encoding="utf-8")
    return SchemaRegistry(tmp_path)


def widget(**spec: Any) -> Obj:
    return {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w", "namespace": "default", "labels": {"a": "b"}},
        "spec": spec,
    }


def run(tmp_path: Path, rule: Obj | str, spec: Obj, old: Obj | None = None) -> CelResult:
    entry = {"rule": rule} if isinstance(rule, str) else rule
    registry = make_registry(tmp_path, entry)
    previous = None if old is None else widget(**old)
    (result,) = evaluate_rules(widget(**spec), old=previous, registry=registry)
    return result


def status(tmp_path: Path, rule: str, **spec: Any) -> str:
    return run(tmp_path, rule, spec).status


# --- value mapping -------------------------------------------------------------------

PASSING = [
    ("has(self.name) && !has(self.count)", {"name": "x"}),
    ("self.count + 1 == 3 && type(self.count) == int", {"count": 2}),
    ("type(self.ratio) == double && self.ratio == 1.0", {"ratio": 1}),
    ("type(self.port) == int && self.port == 8080", {"port": 8080}),
    ("type(self.port) == string && self.port == 'http'", {"port": "http"}),
    ("self.items[0] == 'b' && self.items == ['b', 'a']", {"items": ["b", "a"]}),
    ("self.labels.all(k, k.startsWith('x')) && self.labels['x1'] == 'v'", {"labels": {"x1": "v"}}),
    ("!has(self.unknown)", {"unknown": 1}),
    ("self.free.anything.deep == [1, 'two']", {"free": {"anything": {"deep": [1, "two"]}}}),
    ("self.mode == 'fast'", {}),
    ("!has(self.note)", {}),
    ("self.note == null", {"note": None}),
    ("!has(self.count)", {"count": None}),
    ("self.data == b'hi'", {"data": "aGk="}),
    ("self.?count.orValue(7) == 7 && self.?name.hasValue()", {"name": "x"}),
    ("size('héllo') == 5 && self.name.size() == 2", {"name": "né"}),
    ("self.count < 1.5 && 2.0 > self.count", {"count": 1}),
    (
        "self.name.split('/')[1].upperAscii() == 'B' && ['a', 'b'].join('-') == 'a-b'",
        {"name": "a/b"},
    ),
    ("self.name.lowerAscii().replace('x', 'y').trim().substring(1) == 'y'", {"name": " XX "}),
    ("self.name.indexOf('b') == 1 && self.name.lastIndexOf('b') == 2", {"name": "abb"}),
    ("self.name.matches('^[a-z]+$')", {"name": "abc"}),
    ("cel.bind(n, self.count, n * n) == 9", {"count": 3}),
]


@pytest.mark.parametrize(("rule", "spec"), PASSING)
def test_values_map_as_in_kubernetes(tmp_path: Path, rule: str, spec: Obj) -> None:
    result = run(tmp_path, rule, spec)
    assert (result.status, result.reason) == ("passed", "rule evaluated to true")


def test_root_metadata_shows_only_name(tmp_path: Path) -> None:
    rule = "self.metadata.name == 'w' && !has(self.metadata.labels) && self.kind == 'Widget'"
    registry = make_registry(tmp_path, root_rules=({"rule": rule},))
    (result,) = evaluate_rules(widget(), registry=registry)
    assert (result.pointer, result.status) == ("", "passed")


def test_int_overflow_and_missing_keys_fail(tmp_path: Path) -> None:
    overflow = run(tmp_path, "self.count + 1 > 0", {"count": 2**63 - 1})
    assert overflow.status == "failed"
    assert "overflow" in overflow.reason
    missing = run(tmp_path, "self.name == 'x'", {"count": 1})
    assert (missing.status, missing.reason.split(":")[0]) == ("failed", "evaluation error")


# --- unsupported functions never pass -------------------------------------------------


@pytest.mark.parametrize(
    ("rule", "name"),
    [
        ("self.name.isFancy()", "isFancy"),
        ("has(self.count) || frobnicate(self.name)", "frobnicate"),
        ("format.dns1123Label().validate(self.name).hasValue()", "format.dns1123Label"),
        ("self.labels.all(k, v, v != '')", "all"),
        ("ip(self.name).family() == 4", "ip"),
    ],
)
def test_unknown_functions_are_unchecked(tmp_path: Path, rule: str, name: str) -> None:
    result = run(tmp_path, rule, {"name": "x", "count": 1, "labels": {"a": "b"}})
    assert result.status == "unchecked"
    assert result.reason.startswith("unsupported function or macro: ")
    assert name in result.reason


def test_missing_overload_at_run_time_is_unchecked(tmp_path: Path) -> None:
    result = run(tmp_path, "self.port.lowerAscii() == 'x'", {"port": 80})
    assert (result.status, result.reason) == (
        "unchecked",
        "no overload of lowerAscii for these argument types",
    )


def test_non_bool_result_is_unchecked(tmp_path: Path) -> None:
    result = run(tmp_path, "self.count", {"count": 1})
    assert result.status == "unchecked"
    assert "not a bool" in result.reason


def test_syntax_error_is_unchecked(tmp_path: Path) -> None:
    result = run(tmp_path, "self.count ==", {"count": 1})
    assert result.status == "unchecked"
    assert result.reason.startswith("does not compile: Syntax error")


# --- messages and transition rules ----------------------------------------------------


def test_message_expression(tmp_path: Path) -> None:
    rule = {
        "rule": "self.count < 10",
        "message": "fixed",
        "messageExpression": "'count must be below 10, got ' + string(self.count)",
    }
    assert run(tmp_path, rule, {"count": 12}).message == "count must be below 10, got 12"
    broken = {**rule, "messageExpression": "self.missing + ''"}
    assert run(tmp_path, broken, {"count": 12}).message == "fixed"
    blank = {"rule": "self.count < 10", "messageExpression": "'  '"}
    assert run(tmp_path, blank, {"count": 12}).message == "failed rule: self.count < 10"


def test_optional_old_self_runs_on_create(tmp_path: Path) -> None:
    rule = {
        "rule": "!oldSelf.hasValue() || self.count >= oldSelf.value().count",
        "optionalOldSelf": True,
        "message": "count may only grow",
    }
    assert run(tmp_path, rule, {"count": 1}).status == "passed"
    assert run(tmp_path, rule, {"count": 2}, old={"count": 1}).status == "passed"
    shrunk = run(tmp_path, rule, {"count": 1}, old={"count": 2})
    assert (shrunk.status, shrunk.message) == ("failed", "count may only grow")
    plain = {"rule": "self.count >= oldSelf.count"}
    assert run(tmp_path, plain, {"count": 1}).status == "skipped"


def test_set_and_map_lists_compare_without_order(tmp_path: Path) -> None:
    rule = "self == oldSelf"
    old: Obj = {
        "tags": ["a", "b"],
        "ports": [{"name": "x", "port": 1, "tags": ["p", "q"]}, {"name": "y", "port": 2}],
    }
    swapped = {"tags": ["b", "a"], "ports": [old["ports"][1], old["ports"][0]]}
    assert run(tmp_path, rule, swapped, old=old).status == "passed"
    changed = {"tags": ["b", "c"], "ports": old["ports"]}
    assert run(tmp_path, rule, changed, old=old).status == "failed"
    reordered_atomic = [{"name": "x", "port": 1, "tags": ["q", "p"]}, old["ports"][1]]
    atomic: Obj = {"tags": ["a", "b"], "ports": reordered_atomic}
    assert run(tmp_path, rule, atomic, old=old).status == "failed"  # atomic lists keep order


def test_old_self_detection_ignores_string_literals() -> None:
    assert uses_old_self("self == oldSelf")
    assert uses_old_self("has(oldSelf.x)")
    assert not uses_old_self("self.name != 'oldSelf'")
    assert not uses_old_self("self.oldSelfish == 1")


# --- quantity, URL, lists, regex, sets ------------------------------------------------


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("0", Fraction(0)),
        ("128", Fraction(128)),
        ("500m", Fraction(1, 2)),
        ("1.5Gi", Fraction(3 * 2**29)),
        ("2e3", Fraction(2000)),
        ("1E-3", Fraction(1, 1000)),
        ("+.5k", Fraction(500)),
        ("-1Ki", Fraction(-1024)),
        ("100n", Fraction(1, 10**7)),
        ("0.0000000001", Fraction(1, 10**9)),  # rounds up to a nano-unit
        ("10E", Fraction(2**63 - 1)),  # capped
    ],
)
def test_parse_quantity(text: str, value: Fraction) -> None:
    assert parse_quantity(text) == value


@pytest.mark.parametrize("text", ["", "1K", "1.2.3", "abc", "1Mx", "--1", "e3", "1 Gi"])
def test_parse_quantity_rejects(text: str) -> None:
    with pytest.raises(ValueError, match="quantit"):
        parse_quantity(text)


LIBRARY = [
    "quantity('1Gi') == quantity('1073741824')",
    "quantity('1').compareTo(quantity('1000m')) == 0",
    "quantity('2').isGreaterThan(quantity('1999m')) && quantity('1m').isLessThan(quantity('1'))",
    "quantity('1.5').add(quantity('500m')).asInteger() == 2",
    "quantity('1').add(2).asInteger() == 3 && quantity('3').sub(1).asInteger() == 2",
    "quantity('1').sub(quantity('2')).sign() == -1 && quantity('0').sign() == 0",
    "quantity('1500m').asApproximateFloat() == 1.5 && !quantity('1500m').isInteger()",
    "isQuantity('1Gi') && !isQuantity('1G i')",
    "url('https://user@example.com:8443/a%20b?x=1').getHost() == 'example.com:8443'",
    "url('https://[::1]:80/p').getHostname() == '::1'",
    "url('https://[::1]:80/p').getPort() == '80' && url('https://e.com/').getPort() == ''",
    "url('https://example.com/a b').getEscapedPath() == '/a%20b'",
    "url('/abs').getScheme() == '' && url('https://e.com').getScheme() == 'https'",
    "url('https://e.com/p?x=1&x=2&y').getQuery() == {'x': ['1', '2'], 'y': ['']}",
    "isURL('https://example.com') && !isURL('relative/path') && isURL('/absolute')",
    "[1, 2, 2].isSorted() && ![3, 1].isSorted() && ['a', 'b'].isSorted()",
    "[1, 2, 3].sum() == 6 && [1.5, 2.0].sum() == 3.5",
    "[3, 1, 2].min() == 1 && [3, 1].max() == 3",
    "'abc123def45'.find('[0-9]+') == '123' && 'abc'.find('[0-9]') == ''",
    "'a1b22c3'.findAll('[0-9]+') == ['1', '22', '3']",
    "'a1b22c3'.findAll('[0-9]+', 2) == ['1', '22']",
    "sets.contains([1, 2, 3], [2]) && sets.equivalent([1, 2], [2, 1, 1])",
    "!sets.intersects([1], [2])",
]


@pytest.mark.parametrize("rule", LIBRARY)
def test_kubernetes_library(tmp_path: Path, rule: str) -> None:
    result = run(tmp_path, rule, {})
    assert (result.status, result.reason) == ("passed", "rule evaluated to true")


@pytest.mark.parametrize(
    ("rule", "error"),
    [
        ("quantity('1.5').asInteger() == 1", "cannot convert value to integer"),
        ("quantity(self.quantity).sign() >= 0", "quantities must match"),
        ("url('relative').getHost() == ''", "URL parse error"),
        ("[].min() == 0", "min called on empty list"),
        ("{'a': 'b'}.sign() == 0", "not a quantity"),
    ],
)
def test_kubernetes_library_errors_fail(tmp_path: Path, rule: str, error: str) -> None:
    result = run(tmp_path, rule, {"quantity": "lots"})
    assert result.status == "failed"
    assert error in result.reason
