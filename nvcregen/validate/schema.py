"""Validate a loaded Site against `schemas/site.v1alpha1.json`, with actionable messages."""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterator, Mapping
from functools import cache
from typing import Any

from jsonschema import Draft202012Validator, validators
from jsonschema.exceptions import ValidationError

from nvcregen.core import codes
from nvcregen.core.datafiles import data_dir
from nvcregen.core.errors import Diagnostic, Severity
from nvcregen.core.secrets import MAX_SHOWN, shown
from nvcregen.core.units import check_unit
from nvcregen.spec.positions import Document, pointer
from nvcregen.spec.schema import SCHEMA_FILE
from nvcregen.spec.v1alpha1 import (
    CHART_VERSION,
    GIT_URL,
    HOST_PORT,
    IMAGE,
    MIRROR,
    OCI_REF,
    REPOSITORY,
)

SCHEMA_REF = f"schemas/{SCHEMA_FILE}"
_YAML11_BOOLEANS = {"y", "n", "yes", "no", "on", "off"}
_TYPE_HINTS = {
    "integer": "write a whole number, without quotes",
    "number": "write a number, without quotes",
    "boolean": "write true or false",
    "array": "write a list: [a, b] or one '- item' per line",
    "object": "write a mapping: one 'key: value' per line",
    "string": "write text; quote it if it looks like a number or a boolean",
}
_PATTERN_HINTS = {
    "^[a-z]([-a-z0-9]*[a-z0-9])?$": "use lowercase letters, digits and '-', starting with a letter",
    "^1\\.(2[5-9]|3[0-7])$": 'write the minor version as a quoted string, e.g. "1.30"',
}


def _pattern(
    validator: Draft202012Validator, pattern: str, instance: object, schema: Mapping[str, Any]
) -> Iterator[ValidationError]:
    """JSON Schema's `pattern`, with `$` the end of the text as in ECMA-262 and Rust.

    Python's `$` also matches before a last line break, so `name: |` (a block scalar,
    which ends in one) would pass `^[a-z]+$` with a newline in the value.
    """
    if not isinstance(instance, str):
        return
    if re.search(pattern, instance) is None or (pattern.endswith("$") and instance.endswith("\n")):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


_SiteValidator = validators.extend(Draft202012Validator, {"pattern": _pattern})  # type: ignore[no-untyped-call]

_NO_SPACE = "with no space, line break or quote"
# Fields that name an image, a repository or a host: their grammar in words, not as the
# regular expression (OCI distribution references, RFC 1123 host names).
_GRAMMARS = {
    IMAGE: (
        "an image reference",
        f"[registry[:port]/]path[:tag][@sha256:<64 hex>], the path in lower case, {_NO_SPACE}",
    ),
    REPOSITORY: (
        "an image repository",
        f"[registry[:port]/]path, the path in lower case, no tag or digest, {_NO_SPACE}",
    ),
    OCI_REF: ("an OCI chart reference", f"oci://registry[:port]/path, {_NO_SPACE}"),
    CHART_VERSION: ("a chart version", "an OCI tag: letters, digits, '.', '_', '-' and '+'"),
    MIRROR: (
        "a registry (and path) to pull through",
        f"registry[:port][/path], the path in lower case, {_NO_SPACE}",
    ),
    HOST_PORT: ("a host and port", f"an RFC 1123 host name (or [IPv6]) and :port, {_NO_SPACE}"),
    GIT_URL: (
        "a Git repository URL",
        f"https://host/path, ssh://user@host/path or user@host:path, {_NO_SPACE}",
    ),
}


@cache
def site_validator() -> Draft202012Validator:
    """Return the compiled validator for Site files (built once per process)."""
    schema = json.loads((data_dir("schemas") / SCHEMA_FILE).read_text(encoding="utf-8"))
    validator: Draft202012Validator = _SiteValidator(schema)
    return validator


def validate_schema(doc: Document) -> list[Diagnostic]:
    """Return every schema violation in `doc`, each at the line that caused it."""
    diags = [d for err in site_validator().iter_errors(doc.data) for d in _explain(doc, err)]
    return sorted(set(diags), key=Diagnostic.sort_key)


def _explain(doc: Document, err: ValidationError) -> Iterator[Diagnostic]:
    where = pointer(err.absolute_path)
    if err.validator == "additionalProperties":
        yield from _unknown_keys(doc, err, where)
        return
    message, hint = _message(doc, err, where)
    yield Diagnostic(
        span=doc.span(where),
        severity=Severity.ERROR,
        code=_CODES.get(str(err.validator), codes.NVC200.code),
        message=message,
        path=where,
        hint=hint,
        notes=(f"schema: {SCHEMA_REF}#{_defining_model(err)}",),
    )


_CODES = {
    "required": codes.NVC201.code,
    "type": codes.NVC202.code,
    "enum": codes.NVC203.code,
    "const": codes.NVC203.code,
    "pattern": codes.NVC204.code,
    "minimum": codes.NVC205.code,
    "maximum": codes.NVC205.code,
    "exclusiveMinimum": codes.NVC205.code,
    "exclusiveMaximum": codes.NVC205.code,
    "minItems": codes.NVC206.code,
    "maxItems": codes.NVC206.code,
    "minLength": codes.NVC207.code,
    "maxLength": codes.NVC207.code,
}


def _defining_model(err: ValidationError) -> str:
    """Name the `$defs` entry (or the root) whose rule failed, following `$ref`s."""
    root: Mapping[str, Any] = site_validator().schema  # type: ignore[assignment]
    node: Any = root
    where = ""
    for step in list(err.absolute_schema_path)[:-1]:
        if isinstance(node, Mapping) and "$ref" in node:
            where = str(node["$ref"]).removeprefix("#")
            node = root["$defs"][where.rsplit("/", 1)[-1]]
        if isinstance(node, Mapping):
            node = node.get(step)
        elif isinstance(node, list) and isinstance(step, int):
            node = node[step]
    return where or "/"


def _unknown_keys(doc: Document, err: ValidationError, where: str) -> Iterator[Diagnostic]:
    allowed = sorted(err.schema.get("properties", {}))  # type: ignore[union-attr]
    assert isinstance(err.instance, Mapping)
    for key in sorted(set(err.instance) - set(allowed)):
        close = difflib.get_close_matches(str(key)[:MAX_SHOWN], allowed, n=1, cutoff=0.6)
        hint = f"did you mean '{close[0]}'?" if close else f"allowed keys: {', '.join(allowed)}"
        at = pointer([*err.absolute_path, key])
        yield Diagnostic(
            span=doc.span(at, key=True),
            severity=Severity.ERROR,
            code=codes.NVC208.code,
            message="unknown key " + shown(key, quote="'"),
            path=at,
            hint=hint,
        )


def _message(doc: Document, err: ValidationError, where: str) -> tuple[str, str]:
    schema: Mapping[str, Any] = err.schema if isinstance(err.schema, Mapping) else {}
    value = err.instance
    if err.validator == "required":
        missing = str(err.message).split("'")[1]
        return f"missing required key '{missing}'", _describe(schema, missing)
    if err.validator == "type":
        return _type_problem(doc, err, where, schema, value)
    if err.validator in {"enum", "const"}:
        return _choice_message(value, err)
    if err.validator == "pattern":
        return _pattern_message(value, schema, str(err.validator_value))
    return _jsonschema_message(err), ""


def _jsonschema_message(err: ValidationError) -> str:
    """The words of jsonschema, with the value it quotes (first, as Python writes it) shown."""
    message = str(err.message)
    try:
        quoted = repr(err.instance)
    except ValueError:  # an int too long to write
        quoted = ""
    if quoted and message.startswith(quoted):
        return shown(err.instance) + message[len(quoted) :]
    if isinstance(err.instance, str | int | float | list | dict):
        return f"{shown(err.instance)} breaks the schema's {err.validator} rule"
    return message


def _type_problem(
    doc: Document, err: ValidationError, where: str, schema: Mapping[str, Any], value: object
) -> tuple[str, str]:
    """A value of the wrong type: a number without its unit, a selector, or the type."""
    unit, raw = schema.get("x-nvcregen-unit"), doc.raw.get(where)
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if isinstance(unit, str) and raw is not None and number:
        # `speed: 200` is a number without its unit; quoting it would not help.
        problem = check_unit(unit, raw)
        if problem is not None:
            return problem
    if _in_label_map(err) and isinstance(value, Mapping | list):
        return _label_map_message(err, value)
    return _type_message(doc, where, value, str(err.validator_value))


def _type_message(doc: Document, where: str, value: object, expected: str) -> tuple[str, str]:
    raw = doc.raw.get(where)
    text = shown(raw, quote="") if raw is not None else shown(value)
    if expected == "string" and raw is not None:
        return (
            f"{text} was read as {_kind(value)} {shown(value)}, not as text",
            f'quote it: "{raw}"' if text == raw else "quote it",
        )
    if expected == "boolean" and isinstance(value, str) and value.lower() in _YAML11_BOOLEANS:
        return f"'{value}' is text in YAML 1.2, not a boolean", "write true or false"
    return f"{text} is not of type '{expected}'", _TYPE_HINTS.get(expected, "")


def _in_label_map(err: ValidationError) -> bool:
    """Whether `err` is about one value of a map of labels (`selector`, `labels`).

    Such maps are objects whose every value must be a string (`additionalProperties`).
    """
    steps = list(err.absolute_schema_path)
    return steps[-2:] == ["additionalProperties", "type"] and len(err.absolute_path) >= 2


def _label_map_message(
    err: ValidationError, value: Mapping[str, Any] | list[Any]
) -> tuple[str, str]:
    """A mapping (or list) where a label's value belongs: most often Kubernetes' form.

    `selector: {matchLabels: {pool: h20}}` is how a Kubernetes LabelSelector reads, but
    the site's selectors are plain label maps: `selector: {pool: h20}`.
    """
    field, key = str(err.absolute_path[-2]), str(err.absolute_path[-1])
    expected = f"{field} is a map of labels, each written label: value with a text value"
    if key == "matchLabels" and isinstance(value, Mapping):
        labels = ", ".join(f"{k}: {_label_value(v)}" for k, v in value.items())
        return (
            f"{expected}, not a Kubernetes label selector: matchLabels was read as a label "
            "whose value is a mapping",
            f"write the labels directly: {field}: {{{labels}}} (every label must match)",
        )
    if key == "matchExpressions":
        return (
            f"{expected}: matchExpressions (set-based selection) is not supported",
            f"write each label with the one value it must have: {field}: {{<label>: <value>}}",
        )
    shown = "a mapping" if isinstance(value, Mapping) else "a list"
    return (
        f"{expected}, but label '{key}' has {shown} as its value",
        f"write {field}: {{{key}: <value>}}, quoting a value that looks like a number or a boolean",
    )


def _label_value(value: object) -> str:
    """A label's value as the site should write it: text, quoted when YAML would not read it so."""
    return value if isinstance(value, str) else json.dumps(str(value))


def _kind(value: object) -> str:
    if isinstance(value, bool):
        return "the boolean"
    if value is None:
        return "null"
    return "the number"


def _choice_message(value: object, err: ValidationError) -> tuple[str, str]:
    options = err.validator_value if err.validator == "enum" else [err.validator_value]
    names = [str(o) for o in options]  # type: ignore[union-attr]
    typed = value[:MAX_SHOWN] if isinstance(value, str) else shown(value)
    close = difflib.get_close_matches(typed, names, n=1, cutoff=0.5)
    hint = f"did you mean '{close[0]}'?" if close else f"use one of: {', '.join(names)}"
    if len(names) == 1:
        return f"{shown(value)} must be '{names[0]}'", hint
    return f"{shown(value)} is not one of: {', '.join(names)}", hint


def _pattern_message(value: object, schema: Mapping[str, Any], pattern: str) -> tuple[str, str]:
    unit = schema.get("x-nvcregen-unit")
    if isinstance(unit, str) and isinstance(value, str):
        problem = check_unit(unit, value)
        if problem is not None:
            return problem
    examples = schema.get("examples") or []
    example = f"for example: {examples[0]}" if examples else ""
    if pattern in _GRAMMARS:
        what, form = _GRAMMARS[pattern]
        return f"{shown(value)} is not {what}", f"write {form}; {example}"
    hint = _PATTERN_HINTS.get(pattern) or example
    return f"{shown(value)} does not match the expected form {pattern}", hint


def _describe(schema: Mapping[str, Any], key: str) -> str:
    prop = schema.get("properties", {}).get(key, {})
    examples = prop.get("examples") if isinstance(prop, Mapping) else None
    return f"for example: {key}: {examples[0]}" if examples else f"add '{key}:' here"
