"""Shape object values for CEL the way the API server does, and find where each rule binds.

The API server does not hand CEL the raw JSON of an object: it decodes it against the
CRD's structural schema first. This module does the same, for one object at a time:

- fields the schema does not declare are pruned (kept under
  `x-kubernetes-preserve-unknown-fields` and in free-form maps), so `has()` sees what the
  server would see;
- missing properties with a schema `default` are filled in (the server defaults before it
  validates); a `null` in a field that is not `nullable` counts as absent;
- `integer` stays a Python int (CEL int), `number` becomes a float (CEL double),
  `x-kubernetes-int-or-string` stays as written, `format: byte` becomes bytes; maps keep
  string keys and lists keep their order;
- the `metadata` of the root and of embedded resources shows only `name` and
  `generateName`, as in Kubernetes.

`format: date-time` and `format: duration` strings stay strings (CEL timestamps and
durations in Kubernetes): the engine's Python binding cannot hold those inside dynamic
maps. A rule that compares them to a timestamp or duration finds no overload and is then
reported unchecked, never passed.
"""

from __future__ import annotations

import base64
import binascii
import copy
import enum
import functools
import marshal
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from nvcregen.kubeschema.memo import Memo
from nvcregen.kubeschema.problems import pointer

__all__ = ["MISSING", "Binding", "align", "bindings", "schema_at", "to_cel"]


class _Absent(enum.Enum):
    MISSING = "missing"


MISSING = _Absent.MISSING
"""No old value: the object is new, or the value did not exist or cannot be correlated."""

_RESOURCE_METADATA = ("name", "generateName")


@dataclass(frozen=True)
class Binding:
    """One value that a rule's `self` binds to.

    Attributes:
        pointer: RFC 6901 pointer of the value in the object.
        value: The value, shaped by `to_cel`.
        old: The correlated value in the old object, or MISSING.

    """

    pointer: str
    value: Any
    old: Any

    @property
    def has_old(self) -> bool:
        """Whether an old value exists for `oldSelf`."""
        return self.old is not MISSING


def to_cel(value: Any, schema: Mapping[str, Any], *, resource: bool = False) -> Any:
    """Return `value` (plain JSON data) shaped by its structural schema for CEL.

    Objects and lists are shaped once per process for each schema node and value (many
    generated objects hold equal parts), so shaped values are shared: read them, never
    change them.

    Args:
        value: The value, as plain JSON data.
        schema: Its node of the CRD's `openAPIV3Schema`.
        resource: True for the root of an object (its `metadata` is restricted).

    Returns:
        The value CEL sees.

    """
    if not isinstance(value, dict | list):
        return _scalar(value, schema)
    key = _shape_key(value, schema, resource)
    known = _SHAPED.get(key) if key is not None else None
    if known is not None:
        return known[1]
    if isinstance(value, dict):
        embedded = bool(schema.get("x-kubernetes-embedded-resource"))
        shaped: Any = _object(value, schema, resource=resource or embedded)
    else:
        items = schema.get("items")
        item_schema = items if isinstance(items, Mapping) else _ANY
        shaped = [to_cel(item, item_schema) for item in value]
    if key is not None:
        _SHAPED.put(key, (schema, shaped), len(key[2]))  # holds the node: its id stays its own
    return shaped


_SHAPED: Memo[tuple[int, bool, bytes], tuple[Mapping[str, Any], Any]] = Memo(32 << 20)
_ANY: Mapping[str, Any] = MappingProxyType({})  # the schema of free-form data


def _shape_key(
    value: Any, schema: Mapping[str, Any], resource: bool
) -> tuple[int, bool, bytes] | None:
    """The schema node, the flag and the value's marshal bytes (equal only for equal values)."""
    try:
        return id(schema), resource, marshal.dumps(value)
    except ValueError:  # not plain data: shaped every time
        return None


def _scalar(value: Any, schema: Mapping[str, Any]) -> Any:
    if schema.get("x-kubernetes-int-or-string") or isinstance(value, bool):
        return value
    kind = schema.get("type")
    if kind == "number" and isinstance(value, int):
        return float(value)
    if kind == "integer" and isinstance(value, float) and value.is_integer():
        return int(value)
    if kind == "string" and schema.get("format") == "byte" and isinstance(value, str):
        try:
            return base64.b64decode(value, validate=True)
        except binascii.Error:
            return value
    return value


def _object(value: dict[str, Any], schema: Mapping[str, Any], *, resource: bool) -> dict[str, Any]:
    properties: Mapping[str, Any] = schema.get("properties") or {}
    out: dict[str, Any] = {}
    for key, item in value.items():
        if resource and key == "metadata" and isinstance(item, dict):
            out[key] = {k: item[k] for k in _RESOURCE_METADATA if isinstance(item.get(k), str)}
            continue
        child = _child_schema(key, schema, resource=resource)
        if child is None or (item is None and child and not child.get("nullable")):
            continue
        out[key] = to_cel(item, child)
    for key, child in properties.items():
        if key not in out and key not in value and "default" in child:
            out[key] = to_cel(copy.deepcopy(child["default"]), child)
    return out


def _child_schema(
    key: str, schema: Mapping[str, Any], *, resource: bool
) -> Mapping[str, Any] | None:
    """The schema of a field, {} for free-form data, None when the server prunes it."""
    properties = schema.get("properties") or {}
    if key in properties:
        child: Mapping[str, Any] = properties[key]
        return child
    extra = schema.get("additionalProperties")
    if isinstance(extra, Mapping):
        return extra
    if extra is True or schema.get("x-kubernetes-preserve-unknown-fields"):
        return _ANY
    if resource and key in ("apiVersion", "kind"):
        return _ANY
    closed = "properties" in schema or schema.get("type") == "object"
    return None if closed else _ANY


def align(old: Any, new: Any, schema: Mapping[str, Any]) -> Any:
    """Return `old` with its set and map lists in the order of the same lists in `new`.

    Kubernetes compares lists of `x-kubernetes-list-type` set or map without regard to
    order, so `self == oldSelf` holds for a reordered list; CEL here compares in order.
    Putting the old items in the new order (unmatched ones last) makes the two agree.

    Args:
        old: The old value, shaped by `to_cel`.
        new: The new value at the same place, shaped by `to_cel`.
        schema: Their schema node.

    Returns:
        The old value, reordered where Kubernetes ignores order.

    """
    if isinstance(old, dict) and isinstance(new, dict):
        return {
            key: align(item, new[key], _field_schema(key, schema)) if key in new else item
            for key, item in old.items()
        }
    if not isinstance(old, list) or not isinstance(new, list):
        return old
    items = schema.get("items")
    item_schema = items if isinstance(items, Mapping) else {}
    if schema.get("x-kubernetes-list-type") not in ("set", "map"):
        pairs = zip(old, new, strict=False)
        return [align(o, n, item_schema) for o, n in pairs] + old[len(new) :]
    keys = schema.get("x-kubernetes-list-map-keys") or []
    identity = _map_key(keys) if schema.get("x-kubernetes-list-type") == "map" else _same
    order = [identity(item) for item in new]
    placed = sorted(old, key=lambda item: _index(order, identity(item)))
    return [_align_item(item, new, order, identity(item), item_schema) for item in placed]


def _align_item(
    item: Any, new: list[Any], order: list[Any], ident: Any, schema: Mapping[str, Any]
) -> Any:
    at = _index(order, ident)
    return align(item, new[at], schema) if at < len(new) else item


def _index(order: list[Any], ident: Any) -> int:
    return next((i for i, candidate in enumerate(order) if candidate == ident), len(order))


def _same(item: Any) -> Any:
    return item


def _map_key(keys: list[str]) -> Callable[[Any], Any]:
    def identity(item: Any) -> Any:
        return tuple(item.get(k) for k in keys) if isinstance(item, dict) else item

    return identity


def _field_schema(key: str, schema: Mapping[str, Any]) -> Mapping[str, Any]:
    properties = schema.get("properties") or {}
    extra = schema.get("additionalProperties")
    found = properties.get(key, extra if isinstance(extra, Mapping) else {})
    return found if isinstance(found, Mapping) else {}


def schema_at(schema: Mapping[str, Any], schema_pointer: str) -> Mapping[str, Any]:
    """Return the schema node at an RFC 6901 pointer into `schema`."""
    node = schema
    for token in _tokens(schema_pointer):
        node = node[token]
    return node


@functools.cache
def _tokens(schema_pointer: str) -> tuple[str, ...]:
    parts = schema_pointer.split("/")[1:]
    return tuple(part.replace("~1", "/").replace("~0", "~") for part in parts)


def bindings(
    schema: Mapping[str, Any], schema_pointer: str, new: Any, old: Any = MISSING
) -> Iterator[Binding]:
    """Yield every value of an object that the rule at `schema_pointer` applies to.

    Each list item (`items`) and map value (`additionalProperties`) on the way counts;
    absent and null values carry no rule. The old value is found the way the API server
    correlates them: by field name, by map key, and for `x-kubernetes-list-type: map`
    lists by the list-map keys; items of other lists have no old value.

    Args:
        schema: The CRD's `openAPIV3Schema`.
        schema_pointer: Where the rule sits in it (`CelRule.pointer_in_schema`).
        new: The object, shaped by `to_cel`.
        old: The old object, shaped by `to_cel`, or MISSING.

    Yields:
        The bindings, in document order.

    """
    yield from _walk(_tokens(schema_pointer), schema, new, old, ())


def _walk(
    tokens: tuple[str, ...],
    node: Mapping[str, Any],
    value: Any,
    old: Any,
    path: tuple[str | int, ...],
) -> Iterator[Binding]:
    if value is None:
        return
    if not tokens:
        yield Binding(pointer(path), value, MISSING if old is None else old)
        return
    head, rest = tokens[0], tokens[1:]
    if head == "properties" and rest and isinstance(value, dict) and rest[0] in value:
        name = rest[0]
        old_child = old.get(name, MISSING) if isinstance(old, dict) else MISSING
        child = node["properties"][name]
        yield from _walk(rest[1:], child, value[name], old_child, (*path, name))
    elif head == "items" and isinstance(value, list):
        for index, item in enumerate(value):
            old_item = _correlate(node, item, old)
            yield from _walk(rest, node["items"], item, old_item, (*path, index))
    elif head == "additionalProperties" and isinstance(value, dict):
        for key, item in value.items():
            old_item = old.get(key, MISSING) if isinstance(old, dict) else MISSING
            yield from _walk(rest, node["additionalProperties"], item, old_item, (*path, key))


def _correlate(list_schema: Mapping[str, Any], item: Any, old: Any) -> Any:
    if list_schema.get("x-kubernetes-list-type") != "map" or not isinstance(old, list):
        return MISSING
    if not isinstance(item, dict):
        return MISSING
    keys = list_schema.get("x-kubernetes-list-map-keys") or []
    for candidate in old:
        if isinstance(candidate, dict) and all(candidate.get(k) == item.get(k) for k in keys):
            return candidate
    return MISSING
