"""Evaluate the CEL rules (`x-kubernetes-validations`) of vendored CRDs on objects, offline.

The engine is cel-expr-python, the Python binding of the CEL reference implementation in
C++ (why: docs/design/0001-cel-engine.md), with its strings, optional-types and bindings
extensions and the Kubernetes library of `nvcregen.check.cel_k8s`. Each rule is compiled
once per process (cached by its text) against `self` and `oldSelf` of dynamic type, so
the checker still rejects every function, macro or overload the environment lacks.

Every rule gets one result per value it binds to (each list item and map value on the
way counts; see `nvcregen.check.cel_values`), with one of four statuses:

- passed: the rule evaluated to true;
- failed: it evaluated to false, or hit an error the API server would report as a
  failure (a missing key, an invalid quantity, an overflow, an operator applied to
  values of the wrong types, ...);
- unchecked: it uses a function, macro or overload the engine lacks, named in `reason`
  (found by the checker, or at run time a function with no overload for the argument
  types), or it could not be evaluated for another reason of ours. Never a pass;
- skipped: a transition rule (it reads `oldSelf`) without an old value: on create, and
  for values new on update, the API server does not run it. With `optionalOldSelf: true`
  it runs anyway, `oldSelf` being an optional value.
"""

from __future__ import annotations

import functools
import marshal
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from cel_expr_python import cel  # type: ignore[import-untyped]
from cel_expr_python.ext import (  # type: ignore[import-untyped]
    ext_bindings,
    ext_optional,
    ext_strings,
)

from nvcregen.check.cel_k8s import declarations
from nvcregen.check.cel_values import MISSING, Binding, align, bindings, schema_at, to_cel
from nvcregen.kubeschema.memo import Memo
from nvcregen.kubeschema.normalize import to_json
from nvcregen.kubeschema.registry import CelRule, CrdSchema, SchemaRegistry, default_registry

__all__ = [
    "CelResult",
    "CelStatus",
    "Program",
    "compile_rule",
    "evaluate_rules",
    "reported_rules",
    "uses_old_self",
]

CelStatus = Literal["passed", "failed", "unchecked", "skipped"]

_OLD = "nvcregenOldSelf"
_HAS_OLD = "nvcregenHasOldSelf"
_SKIPPED = "transition rule without an old value: not run on create or for new values"
_UNDECLARED = re.compile(r"undeclared reference to '([^']+)'")
_NO_OVERLOAD = re.compile(r"found no matching overload for '([^']+)'")
_RUNTIME_NO_OVERLOAD = re.compile(r"No matching overloads found : (?:\([^)]*\)\.)?([\w.]+)\(")
_CALL = re.compile(r"((?:[A-Za-z_]\w*\s*\.\s*)*)([A-Za-z_]\w*)\s*\(")
_STATUS_PREFIX = re.compile(r"^(?:[A-Z_]+: )?(?:ERROR: <input>:\d+:\d+: )?")
_STRING_LITERAL = re.compile(r"""[rRbB]*('''|\"\"\"|'|")(?:\\.|(?!\1).)*?\1""", re.S)
_OLD_SELF = re.compile(r"\boldSelf\b")
_SELF = re.compile(r"(?<![\w.])self\b")
_SELF_FIELD = re.compile(r"\s*\.\s*([A-Za-z_]\w*)\b\s*(\()?")


@dataclass(frozen=True)
class CelResult:
    """The outcome of one CEL rule on one value of an object.

    Attributes:
        pointer: RFC 6901 pointer of the value `self` was bound to ("" for the object).
        rule: The rule's CEL expression.
        message: For failed rules the message the API server would give (from
            `messageExpression` when it yields a non-blank string, else `message`, else
            "failed rule: <rule>"); otherwise the rule's fixed message.
        status: "passed", "failed", "unchecked" or "skipped" (see the module docstring).
        reason: Why the status: "rule evaluated to false", "evaluation error: ...",
            "unsupported function or macro: quantity", ...

    """

    pointer: str
    rule: str
    message: str
    status: CelStatus
    reason: str


@dataclass(frozen=True)
class Program:
    """A compiled rule, or why it could not be compiled.

    Attributes:
        expression: The engine's compiled expression; None when `problem` is set.
        problem: Why the rule cannot be evaluated ("" when it compiled).

    """

    expression: Any
    problem: str


@functools.cache
def _env() -> Any:
    variables = {
        "self": cel.Type.DYN,
        "oldSelf": cel.Type.DYN,
        _OLD: cel.Type.DYN,
        _HAS_OLD: cel.Type.BOOL,
    }
    extensions = [ext_strings.ExtStrings(), ext_optional.ExtOptional(), ext_bindings.ExtBindings()]
    return cel.NewEnv(variables=variables, extensions=extensions, functions=declarations())


@functools.cache
def uses_old_self(rule: str) -> bool:
    """Whether a rule is a transition rule: it reads `oldSelf` (outside string literals)."""
    return _OLD_SELF.search(_STRING_LITERAL.sub("''", rule)) is not None


@functools.cache
def compile_rule(rule: str, *, optional_old_self: bool = False) -> Program:
    """Compile a CEL rule once (cached by its text) for `self` and `oldSelf`.

    Args:
        rule: The CEL expression.
        optional_old_self: Bind `oldSelf` as an optional value (`optionalOldSelf: true`).

    Returns:
        The compiled program, or the problem that leaves the rule unchecked.

    """
    source = rule
    if optional_old_self:
        optional = f"{_HAS_OLD} ? optional.of({_OLD}) : optional.none()"
        source = f"cel.bind(oldSelf, {optional}, ({rule}))"
    try:
        return Program(_env().compile(source), "")
    except RuntimeError as error:
        text = str(error)
    names = _unsupported_names(rule, text)
    if names:
        return Program(None, f"unsupported function or macro: {', '.join(names)}")
    overloads = list(dict.fromkeys(_NO_OVERLOAD.findall(text)))
    if overloads and not all(_is_operator(name) for name in overloads):
        return Program(None, f"unsupported overload of {', '.join(overloads)}")
    if overloads:
        # Kubernetes compares int, uint and double with each other; the engine's runtime
        # does too, but its checker rejects such operands when their types are static.
        try:
            return Program(_env().compile(source, disable_check=True), "")
        except RuntimeError as error:
            text = str(error)
    return Program(None, f"does not compile: {_first_line(text)}")


def _unsupported_names(rule: str, text: str) -> list[str]:
    """The functions (or, failing that, identifiers) the checker could not resolve."""
    undeclared = set(_UNDECLARED.findall(text))
    if not undeclared:
        return []
    calls: list[str] = []
    for match in _CALL.finditer(rule):
        qualifier, name = re.sub(r"\s+", "", match[1]), match[2]
        if name in undeclared:
            calls.append(qualifier + name if qualifier.split(".")[0] in undeclared else name)
    return list(dict.fromkeys(calls)) or sorted(undeclared)


def _is_operator(name: str) -> bool:
    return not name[:1].isalpha()


def _first_line(text: str) -> str:
    return _STATUS_PREFIX.sub("", text.strip().splitlines()[0] if text.strip() else "")


def evaluate_rules(
    obj: Mapping[str, Any],
    *,
    old: Mapping[str, Any] | None = None,
    registry: SchemaRegistry | None = None,
) -> list[CelResult]:
    """Evaluate every CEL rule of an object's CRD on the object, as the API server would.

    Args:
        obj: The object, as plain data; its apiVersion and kind select the CRD.
        old: The object before an update, for transition rules (`oldSelf`); None for a
            create, when transition rules are skipped.
        registry: Where the CRDs come from; defaults to the vendored schemas.

    Returns:
        One result per rule and value it binds to, in rule order (parents first), then
        document order; [] for core kinds, unknown kinds and objects without CEL rules.

    """
    return _results(to_json(obj)[0], old, registry, reported_only=False)


def reported_rules(
    data: Mapping[str, Any],
    *,
    old: Mapping[str, Any] | None = None,
    registry: SchemaRegistry | None = None,
) -> list[CelResult]:
    """The failed and unchecked results of `evaluate_rules`, in the same order.

    What a checker reports, found with less work: `data` is plain JSON already (as
    `to_json` returns it), and on a create (no `old`) a transition rule without
    `optionalOldSelf` is skipped wherever it binds, so it is not bound at all.
    """
    return [
        result
        for result in _results(data, old, registry, reported_only=True)
        if result.status in {"failed", "unchecked"}
    ]


def _results(
    data: object,
    old: Mapping[str, Any] | None,
    registry: SchemaRegistry | None,
    *,
    reported_only: bool,
) -> list[CelResult]:
    """The results of the object's rules; `data` is plain JSON (see `to_json`)."""
    registry = registry or default_registry()
    crd = _crd_of(data, registry)
    if crd is None:
        return []
    plan = _plan(crd, registry)
    rules = plan.reportable_on_create if reported_only and old is None else plan.rules
    if not rules:  # nothing to run: nothing to shape
        return []
    new = to_cel(data, crd.schema, resource=True)
    previous: Any = MISSING
    if old is not None:
        previous = align(to_cel(to_json(old)[0], crd.schema, resource=True), new, crd.schema)
    activations: dict[Any, Any] = {}
    results: list[CelResult] = []
    for rule, optional in rules:
        results.extend(
            _evaluate(rule, binding, activations, optional_old_self=optional)
            for binding in bindings(crd.schema, rule.pointer_in_schema, new, previous)
        )
    return results


@dataclass(frozen=True)
class _Plan:
    """A CRD's rules in order, each with whether it binds `oldSelf` as optional."""

    crd: CrdSchema  # held so that the id the plan is filed under stays the CRD's
    rules: list[tuple[CelRule, bool]]
    reportable_on_create: list[tuple[CelRule, bool]]  # without transition rules that skip


_PLANS: dict[int, _Plan] = {}


def _plan(crd: CrdSchema, registry: SchemaRegistry) -> _Plan:
    """The CRD's plan, worked out once per CRD (filed by the CRD's identity)."""
    known = _PLANS.get(id(crd))
    if known is None or known.crd is not crd:
        rules = registry.cel_rules(f"{crd.group}/{crd.version}", crd.kind)
        planned = [(rule, _optional_old_self(crd, rule)) for rule in rules]
        runs = [(r, optional) for r, optional in planned if optional or not uses_old_self(r.rule)]
        known = _PLANS[id(crd)] = _Plan(crd, planned, runs)
    return known


def _crd_of(data: object, registry: SchemaRegistry) -> CrdSchema | None:
    if not isinstance(data, dict):
        return None
    api_version, kind = data.get("apiVersion"), data.get("kind")
    if not isinstance(api_version, str) or not isinstance(kind, str):
        return None
    return registry.crd(api_version, kind)


def _optional_old_self(crd: CrdSchema, rule: CelRule) -> bool:
    """Whether the CRD sets `optionalOldSelf: true` on this (transition) rule."""
    if not uses_old_self(rule.rule):
        return False
    entries = schema_at(crd.schema, rule.pointer_in_schema).get("x-kubernetes-validations")
    return any(
        isinstance(entry, Mapping)
        and entry.get("rule") == rule.rule
        and entry.get("optionalOldSelf") is True
        for entry in entries or []
    )


def _activation(
    binding: Binding, value: Any, fields: frozenset[str] | None, activations: dict[Any, Any]
) -> Any:
    """One engine activation per bound value (as the rule sees it), shared between rules."""
    key = binding.pointer, fields
    if key not in activations:
        old = binding.old if binding.has_old else None
        data = {"self": value, "oldSelf": old, _OLD: old, _HAS_OLD: binding.has_old}
        activations[key] = _env().Activation(data)
    return activations[key]


def _evaluate(
    rule: CelRule, binding: Binding, activations: dict[Any, Any], *, optional_old_self: bool
) -> CelResult:
    fixed = rule.message or f"failed rule: {rule.rule}"
    if uses_old_self(rule.rule) and not binding.has_old and not optional_old_self:
        return CelResult(binding.pointer, rule.rule, fixed, "skipped", _SKIPPED)
    program = compile_rule(rule.rule, optional_old_self=optional_old_self)
    if program.expression is None:
        return CelResult(binding.pointer, rule.rule, fixed, "unchecked", program.problem)
    fields = fields_read(rule.rule, rule.message_expression)
    value = binding.value
    if fields is not None and isinstance(value, dict):
        value = {name: item for name, item in value.items() if name in fields}
    key = _outcome_key(rule, value, binding, optional_old_self)
    known = _OUTCOMES.get(key) if key is not None else None
    if known is None:
        activation = _activation(binding, value, fields, activations)
        status, reason = _outcome(program.expression, activation)
        failed = status == "failed"
        message = _message(rule, activation, optional_old_self) if failed else fixed
        known = status, reason, message
        if key is not None:
            _OUTCOMES.put(key, known, len(key[2]) + len(key[3] or b""))
    status, reason, message = known
    return CelResult(binding.pointer, rule.rule, message, status, reason)


@functools.cache
def fields_read(*expressions: str | None) -> frozenset[str] | None:
    """The fields of `self` that the expressions read, or None when they may read all of it.

    A rule that only names fields of `self` (`self.metadata.name.matches(...)`,
    `has(self.spec)`) sees the same values when `self` holds just those fields, and an
    object is far cheaper to hand to the engine without the rest. Anything else (`self`
    alone, `self[...]`, `self.?x`, a method on `self` such as `self.all(...)`, `oldSelf`)
    keeps the whole value.
    """
    fields: set[str] = set()
    for expression in filter(None, expressions):
        text = _STRING_LITERAL.sub("''", expression)
        if _OLD_SELF.search(text):
            return None
        for match in _SELF.finditer(text):
            field = _SELF_FIELD.match(text, match.end())
            if field is None or field[2]:
                return None
            fields.add(field[1])
    return frozenset(fields)


# A rule's outcome depends on the rule and the values of `self` and `oldSelf` only; many
# generated objects bind the same values, so each outcome is worked out once per process.
_OUTCOMES: Memo[tuple[CelRule, bool, bytes, bytes | None], tuple[CelStatus, str, str]] = Memo(
    16 << 20
)


def _outcome_key(
    rule: CelRule, value: Any, binding: Binding, optional_old_self: bool
) -> tuple[CelRule, bool, bytes, bytes | None] | None:
    """The rule and the values it sees; marshal bytes differ for values that differ at all."""
    try:
        old = marshal.dumps(binding.old) if binding.has_old else None
        return rule, optional_old_self, marshal.dumps(value), old
    except ValueError:  # a value marshal cannot write: evaluate it every time
        return None


def _outcome(expression: Any, activation: Any) -> tuple[CelStatus, str]:
    try:
        value = expression.eval(activation)
        kind = value.type()
        plain = value.plain_value()
    except (RuntimeError, TypeError, ValueError) as error:
        return "unchecked", f"engine error: {error}"
    if kind == cel.Type.ERROR:
        return _error_outcome(str(plain))
    if kind != cel.Type.BOOL:
        return "unchecked", f"rule evaluated to a {kind.name()}, not a bool"
    return ("passed", "rule evaluated to true") if plain else ("failed", "rule evaluated to false")


def _error_outcome(text: str) -> tuple[CelStatus, str]:
    missing = _RUNTIME_NO_OVERLOAD.search(text)
    if missing:
        return "unchecked", f"no overload of {missing[1]} for these argument types"
    if "Non-CEL value type" in text:
        return "unchecked", f"engine cannot hold a value: {_first_line(text)}"
    return "failed", f"evaluation error: {_first_line(text)}"


def _message(rule: CelRule, activation: Any, optional_old_self: bool) -> str:
    """The API server's message for a failed rule."""
    fallback = rule.message or f"failed rule: {rule.rule}"
    if not rule.message_expression:
        return fallback
    program = compile_rule(rule.message_expression, optional_old_self=optional_old_self)
    if program.expression is None:
        return fallback
    try:
        value = program.expression.eval(activation)
        text = value.plain_value() if value.type() == cel.Type.STRING else ""
    except (RuntimeError, TypeError, ValueError):
        return fallback
    return str(text) if str(text).strip() else fallback
