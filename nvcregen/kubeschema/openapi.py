"""Turn Kubernetes structural OpenAPI v3 schemas into JSON Schema and collect CEL rules.

The conversion mirrors what the API server does with a CRD's `openAPIV3Schema` under
strict field validation:

- an object node that is not `x-kubernetes-preserve-unknown-fields: true` and has no
  `additionalProperties` rejects unknown fields (`additionalProperties: false`); this
  includes `type: object` nodes without `properties`, whose fields the server would prune;
- the root `metadata` (and that of embedded resources) stays open: it is checked by
  `nvcregen.kubeschema.objectmeta` instead, as the server checks ObjectMeta in Go;
- `nullable: true` adds `null` to the type (and to `enum`);
- `x-kubernetes-int-or-string: true` means integer or string;
- `x-kubernetes-embedded-resource`, `x-kubernetes-list-type` and `x-kubernetes-list-map-keys`
  are kept as keywords that `nvcregen.kubeschema.kubejsonschema` implements;
- `x-kubernetes-validations` (CEL) are dropped here and returned by `collect_cel_rules`;
- `default` is kept (JSON Schema ignores it; list-map keys use it).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from nvcregen.kubeschema.problems import pointer

_DROPPED = frozenset(
    {
        "description",
        "example",
        "externalDocs",
        "nullable",
        "x-kubernetes-int-or-string",
        "x-kubernetes-preserve-unknown-fields",
        "x-kubernetes-validations",
        "x-kubernetes-map-type",
    }
)
_SCHEMA_LISTS = ("allOf", "anyOf", "oneOf")
_CHILDREN = frozenset({"properties", "items", "additionalProperties", "not", *_SCHEMA_LISTS})
_INT_OR_STRING = [{"type": "integer"}, {"type": "string"}]
_EMBEDDED_IMPLICIT = {
    "apiVersion": {"type": "string"},
    "kind": {"type": "string"},
    "metadata": {"type": "object"},
}


@dataclass(frozen=True)
class CelRule:
    """One `x-kubernetes-validations` entry of a CRD schema, not evaluated here.

    Attributes:
        pointer_in_schema: RFC 6901 pointer, into the `openAPIV3Schema`, of the node that
            carries the rule ("" for the root, "/properties/spec", ...).
        rule: The CEL expression; `self` is the value at that node.
        message: The fixed message, "" when the CRD gives none.
        field_path: The `fieldPath` the API server reports, when the CRD gives one.
        message_expression: A CEL expression producing the message, when given.
        reason: The `reason` (FieldValueInvalid, FieldValueForbidden, ...), when given.
        object_path: Pointer pattern of the values `self` binds to in an object, with "*"
            for any list index or map key ("/spec/categories/*/options").

    """

    pointer_in_schema: str
    rule: str
    message: str
    field_path: str | None
    message_expression: str | None = None
    reason: str | None = None
    object_path: str = ""


def to_json_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """Return the JSON Schema (Draft 2020-12) for a CRD's `openAPIV3Schema`."""
    converted = _convert(schema, structural=True, holds_metadata=True)
    converted["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    return converted


def _convert(node: Mapping[str, Any], *, structural: bool, holds_metadata: bool) -> dict[str, Any]:
    out = {k: v for k, v in node.items() if k not in _DROPPED and k not in _CHILDREN}
    embedded = bool(node.get("x-kubernetes-embedded-resource"))
    holds_metadata = holds_metadata or embedded
    properties = node.get("properties")
    if isinstance(properties, Mapping):
        out["properties"] = {
            name: _convert(
                child,
                structural=structural and not (holds_metadata and name == "metadata"),
                holds_metadata=False,
            )
            for name, child in properties.items()
        }
    for key in ("items", "additionalProperties"):
        child = node.get(key)
        if isinstance(child, Mapping):
            out[key] = _convert(child, structural=structural, holds_metadata=False)
        elif isinstance(child, bool):
            out[key] = child
    _convert_combinators(node, out)
    _apply_types(node, out)
    if structural and _closed(node):
        if embedded:
            out["properties"] = {**_EMBEDDED_IMPLICIT, **out.get("properties", {})}
        out["additionalProperties"] = False
    return out


def _convert_combinators(node: Mapping[str, Any], out: dict[str, Any]) -> None:
    """Value validations (allOf/anyOf/oneOf/not) may not declare fields: never close them."""
    for key in _SCHEMA_LISTS:
        if isinstance(node.get(key), list):
            out[key] = [_convert(s, structural=False, holds_metadata=False) for s in node[key]]
    if isinstance(node.get("not"), Mapping):
        out["not"] = _convert(node["not"], structural=False, holds_metadata=False)


def _apply_types(node: Mapping[str, Any], out: dict[str, Any]) -> None:
    if node.get("x-kubernetes-int-or-string"):
        out["type"] = ["integer", "string"]
        if out.get("anyOf") == _INT_OR_STRING:
            del out["anyOf"]
    if node.get("nullable"):
        declared = out.get("type")
        if isinstance(declared, str):
            out["type"] = [declared, "null"]
        elif isinstance(declared, list) and "null" not in declared:
            out["type"] = [*declared, "null"]
        if isinstance(out.get("enum"), list) and None not in out["enum"]:
            out["enum"] = [*out["enum"], None]


def _closed(node: Mapping[str, Any]) -> bool:
    if node.get("x-kubernetes-preserve-unknown-fields") or "additionalProperties" in node:
        return False
    return "properties" in node or node.get("type") == "object"


def collect_cel_rules(schema: Mapping[str, Any]) -> list[CelRule]:
    """Return every `x-kubernetes-validations` rule of a CRD schema, parents first."""
    rules: list[CelRule] = []
    _collect(schema, (), "", rules)
    return rules


def _collect(
    node: Mapping[str, Any], at: tuple[str, ...], object_path: str, rules: list[CelRule]
) -> None:
    rules.extend(
        CelRule(
            pointer_in_schema=pointer(at),
            rule=str(entry.get("rule", "")),
            message=str(entry.get("message", "")),
            field_path=entry.get("fieldPath"),
            message_expression=entry.get("messageExpression"),
            reason=entry.get("reason"),
            object_path=object_path,
        )
        for entry in node.get("x-kubernetes-validations") or []
    )
    for name, child in (node.get("properties") or {}).items():
        _collect(child, (*at, "properties", name), f"{object_path}/{_escape(name)}", rules)
    for key in ("items", "additionalProperties"):
        child = node.get(key)
        if isinstance(child, Mapping):
            _collect(child, (*at, key), f"{object_path}/*", rules)


def _escape(name: str) -> str:
    return name.replace("~", "~0").replace("/", "~1")
