"""A jsonschema validator that knows the Kubernetes extensions, and readable errors.

Adds to Draft 2020-12:

- `x-kubernetes-list-type: set` (items unique) and `map` (items unique by the
  `x-kubernetes-list-map-keys`, a missing key taking its schema default), as the API
  server and server-side apply enforce them;
- `x-kubernetes-embedded-resource: true` (apiVersion and kind required, metadata checked
  like any object's, but neither metadata nor a name required);
- the formats `int32`, `int64` (ranges), `date-time` (RFC 3339) and `byte` (base64);
  other formats (`double`, `quantity`, ...) are accepted as the type allows.

`properties`, `items` and `additionalProperties` skip values already found valid
(`memo.py`): same errors, less work.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from jsonschema import Draft202012Validator, FormatChecker, ValidationError, validators
from jsonschema.protocols import Validator
from referencing import Registry

from nvcregen.kubeschema import memo
from nvcregen.kubeschema.objectmeta import check_metadata, is_rfc3339
from nvcregen.kubeschema.problems import (
    SCHEMA_VIOLATION,
    Issue,
    JsonPath,
    Problem,
    show,
    unknown_field,
)

_INT_RANGES = {"int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1)}

FORMATS = FormatChecker(formats=())


def _in_range(fmt: str) -> Callable[[object], bool]:
    low, high = _INT_RANGES[fmt]
    return lambda value: not isinstance(value, int) or low <= value <= high


FORMATS.checks("int32")(_in_range("int32"))
FORMATS.checks("int64")(_in_range("int64"))


@FORMATS.checks("date-time")
def _date_time(value: object) -> bool:
    return not isinstance(value, str) or is_rfc3339(value)


@FORMATS.checks("byte")
def _byte(value: object) -> bool:
    if not isinstance(value, str):
        return True
    try:
        base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


class CodedError(ValidationError):
    """A ValidationError raised by our own keywords, carrying its problem code."""

    def __init__(self, issue: Issue) -> None:
        super().__init__(issue.message, path=issue.path)
        self.code = issue.code


def _identity(item: object) -> str:
    return json.dumps(item, sort_keys=True, separators=(",", ":"))


def _map_key(item: object, keys: list[str], defaults: Mapping[str, Any]) -> str:
    values = item if isinstance(item, Mapping) else {}
    return ", ".join(f"{k}={show(values.get(k, defaults.get(k)))}" for k in keys)


def _list_type(
    validator: Any, value: Any, instance: Any, schema: Mapping[str, Any]
) -> Iterator[ValidationError]:
    if value not in {"set", "map"} or not isinstance(instance, list):
        return
    keys = list(schema.get("x-kubernetes-list-map-keys") or [])
    if value == "map":
        item_schema = schema.get("items")
        properties = item_schema.get("properties", {}) if isinstance(item_schema, Mapping) else {}
        defaults = {k: properties[k]["default"] for k in keys if "default" in properties.get(k, {})}
        identify: Callable[[object], str] = lambda item: _map_key(item, keys, defaults)  # noqa: E731
        what = "key"
    else:
        identify, what = _identity, "value"
    seen: dict[str, int] = {}
    for index, item in enumerate(instance):
        first = seen.setdefault(identify(item), index)
        if first != index:
            shown = identify(item) if value == "map" else show(item)
            message = f"duplicate {what} {shown}: item {first} has the same {what}"
            yield CodedError(Issue((index,), f"{message} (list-type {value})", SCHEMA_VIOLATION))


def _embedded(
    validator: Any, value: Any, instance: Any, schema: Mapping[str, Any]
) -> Iterator[ValidationError]:
    if value is not True or not isinstance(instance, Mapping):
        return
    for key in ("apiVersion", "kind"):
        if not isinstance(instance.get(key), str) or not instance[key]:
            message = f'missing required field "{key}" (an embedded object names its type)'
            yield CodedError(Issue((), message, SCHEMA_VIOLATION))
    kind = str(instance.get("kind") or "object")
    issues = check_metadata(instance.get("metadata"), kind=kind, namespaced=None, embedded=True)
    yield from (CodedError(issue) for issue in issues)


KubeValidator: type[Validator] = validators.extend(  # type: ignore[no-untyped-call]
    Draft202012Validator,
    {
        "x-kubernetes-list-type": _list_type,
        "x-kubernetes-embedded-resource": _embedded,
        # jsonschema's own, except that a value found valid once is not checked again
        "properties": memo.properties,
        "items": memo.items,
        "additionalProperties": memo.additional_properties,
    },
)


def make_validator(schema: Mapping[str, Any], registry: Registry[Any] | None = None) -> Validator:
    """Return a validator for `schema`, with our keywords and format checks."""
    if registry is None:
        return KubeValidator(schema, format_checker=FORMATS)
    return KubeValidator(schema, format_checker=FORMATS, registry=registry)


def _types(value: object) -> str:
    names = [value] if isinstance(value, str) else list(value) if isinstance(value, list) else []
    return " or ".join(str(n) for n in names) or "the declared type"


def _format(error: ValidationError) -> str:
    fmt = error.validator_value
    if fmt in _INT_RANGES:
        low, high = _INT_RANGES[fmt]
        return f"{show(error.instance)} is out of range for {fmt} ({low}..{high})"
    if fmt == "date-time":
        return f"{show(error.instance)} is not an RFC 3339 date-time"
    return f"{show(error.instance)} is not valid {fmt}"


def _size(what: str, bound: str) -> Callable[[ValidationError], str]:
    def message(error: ValidationError) -> str:
        instance: Any = error.instance
        count = len(instance)
        return f"has {count} {what}; {bound} {error.validator_value} allowed"

    return message


def _enum(error: ValidationError) -> str:
    allowed: Any = error.validator_value
    choices = ", ".join(show(v) for v in allowed)
    return f"{show(error.instance)} is not one of {choices}"


_MESSAGES: dict[str, Callable[[ValidationError], str]] = {
    "type": lambda e: f"{show(e.instance)} is not of type {_types(e.validator_value)}",
    "enum": _enum,
    "const": lambda e: f"{show(e.instance)} must be {show(e.validator_value)}",
    "pattern": lambda e: f"{show(e.instance)} does not match the pattern {e.validator_value}",
    "minimum": lambda e: f"{show(e.instance)} is less than the minimum of {e.validator_value}",
    "maximum": lambda e: f"{show(e.instance)} is greater than the maximum of {e.validator_value}",
    "exclusiveMinimum": lambda e: f"{show(e.instance)} must be greater than {e.validator_value}",
    "exclusiveMaximum": lambda e: f"{show(e.instance)} must be less than {e.validator_value}",
    "minLength": _size("characters", "at least"),
    "maxLength": _size("characters", "at most"),
    "minItems": _size("items", "at least"),
    "maxItems": _size("items", "at most"),
    "minProperties": _size("entries", "at least"),
    "maxProperties": _size("entries", "at most"),
    "uniqueItems": lambda e: "items must be unique",
    "format": _format,
    "anyOf": lambda e: f"{show(e.instance)} does not match any of the allowed forms",
    "oneOf": lambda e: f"{show(e.instance)} must match exactly one of the allowed forms",
}


def _unknown_fields(error: ValidationError, path: JsonPath) -> list[Issue]:
    schema = error.schema if isinstance(error.schema, Mapping) else {}
    allowed = list(schema.get("properties", {}))
    instance = error.instance if isinstance(error.instance, Mapping) else {}
    return [unknown_field(path, str(k), allowed) for k in instance if k not in allowed]


def _required(error: ValidationError, path: JsonPath) -> list[Issue]:
    instance = error.instance if isinstance(error.instance, Mapping) else {}
    required: Any = error.validator_value
    missing = [name for name in required if name not in instance]
    return [Issue(path, f'missing required field "{name}"', SCHEMA_VIOLATION) for name in missing]


def issues_from(error: ValidationError) -> list[Issue]:
    """Turn one jsonschema error into issues located by absolute path in the instance."""
    path: JsonPath = tuple(error.absolute_path)
    if isinstance(error, CodedError):
        return [Issue(path, error.message, error.code)]
    if error.validator == "additionalProperties" and error.validator_value is False:
        return _unknown_fields(error, path)
    if error.validator == "required":
        return _required(error, path)
    render = _MESSAGES.get(str(error.validator))
    message = render(error) if render else error.message[:200]
    return [Issue(path, message, SCHEMA_VIOLATION)]


def problems_from(errors: Iterable[ValidationError]) -> list[Problem]:
    """Turn jsonschema errors into problems (pointers into the validated object)."""
    return [issue.at() for error in errors for issue in issues_from(error)]
