"""Validate each distinct sub-value against each schema node once per process.

Generated objects repeat themselves: hundreds of TrainJobs share a trainer block, every
Job of a test the same pod template. jsonschema descends into each of them again, at a
cost per node visited. The `properties`, `items` and `additionalProperties` keywords here
do what jsonschema's do, except that a child value already found valid against the same
schema node is not descended into again, nor one whose node asks for a type alone and
gets it.

Only success is remembered, never errors: a child that fails is validated afresh each
time, so the errors, their order and their paths are exactly jsonschema's. A child is
known by its schema node (by identity, the node kept alive by the memo so its id cannot
be reused) and its value: containers by their `marshal` bytes, which differ between
values that differ in anything (types included: `1`, `1.0` and `true` are distinct),
scalars by type and value. Equal values may still differ in bytes (marshal marks objects
referenced more than once): that costs a second validation, never a wrong answer.

Validity of a child depends on nothing else: the keywords used (ours included) read only
the value and the schema, and every `$ref` of a schema node resolves in the one document
that holds it.
"""

from __future__ import annotations

import marshal
from collections.abc import Hashable, Iterator, Mapping
from typing import Any, Generic, TypeVar

from jsonschema import Draft202012Validator, ValidationError

_SCALARS = (str, int, float, bool, type(None))
_UPSTREAM_ITEMS = Draft202012Validator.VALIDATORS["items"]
_UPSTREAM_ADDITIONAL = Draft202012Validator.VALIDATORS["additionalProperties"]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class Memo(Generic[K, V]):
    """A dict that starts again, empty, once the bytes its keys hold pass a budget.

    Keys hold values as marshal bytes, so a long run over large objects would otherwise
    keep all of them; forgetting costs only speed.
    """

    def __init__(self, budget: int) -> None:
        self._entries: dict[K, V] = {}
        self._size = 0
        self._budget = budget

    def get(self, key: K) -> V | None:
        """The remembered value, or None."""
        return self._entries.get(key)

    def __contains__(self, key: object) -> bool:
        return key in self._entries

    def __len__(self) -> int:
        return len(self._entries)

    def put(self, key: K, value: V, size: int) -> None:
        """Remember `value`; `size` is the bytes its key holds."""
        if self._size + size > self._budget:
            self.clear()
        self._entries[key] = value
        self._size += size

    def clear(self) -> None:
        """Forget everything."""
        self._entries.clear()
        self._size = 0


_valid: Memo[tuple[int, type, object], object] = Memo(64 << 20)


def clear() -> None:
    """Forget every remembered result (for tests and benchmarks)."""
    _valid.clear()


def _key(schema: object, value: Any) -> tuple[int, type, object] | None:
    """The memo key of `value` under `schema`; None when it cannot have one."""
    if not isinstance(schema, dict):
        return None
    kind = type(value)
    if kind is dict or kind is list:
        try:
            return id(schema), kind, marshal.dumps(value)
        except ValueError:  # not plain data (marshal cannot write it): no memo
            return None
    if kind in _SCALARS:
        return id(schema), kind, value
    return None


def _plainly_valid(validator: Any, value: object, schema: dict[str, Any]) -> bool:
    """Whether a node without keywords, or with `type` alone, certainly accepts `value`.

    Most leaves of a schema are `{"type": "string"}` and the like: checking the type here
    costs far less than a descent. When it fails, the caller descends, for the error.
    """
    if not schema:
        return True
    if len(schema) != 1 or "type" not in schema:
        return False
    types = schema["type"]
    if isinstance(types, str):
        return bool(validator.is_type(value, types))
    return isinstance(types, list) and any(validator.is_type(value, t) for t in types)


def _descend(
    validator: Any, value: object, schema: object, path: str | int, schema_path: str | int | None
) -> Iterator[ValidationError]:
    """`validator.descend`, skipped for a value known valid under `schema`."""
    if isinstance(schema, dict) and _plainly_valid(validator, value, schema):
        return
    key = _key(schema, value)
    if key is not None and key in _valid:
        return
    failed = False
    for error in validator.descend(value, schema, path=path, schema_path=schema_path):
        failed = True
        yield error
    if key is not None and not failed:
        value_key = key[2]
        size = len(value_key) if isinstance(value_key, bytes | str) else 8
        _valid.put(key, schema, size)  # holds the node, so its id stays its own


def properties(
    validator: Any, value: Mapping[str, Any], instance: Any, schema: Mapping[str, Any]
) -> Iterator[ValidationError]:
    """Draft 2020-12 `properties`, with the memo."""
    if not validator.is_type(instance, "object"):
        return
    for name, subschema in value.items():
        if name in instance:
            yield from _descend(validator, instance[name], subschema, name, name)


def additional_properties(
    validator: Any, value: Any, instance: Any, schema: Mapping[str, Any]
) -> Iterator[ValidationError]:
    """Draft 2020-12 `additionalProperties`, with the memo when it is a schema.

    Upstream's own for `false` (its messages) and next to `patternProperties`.
    """
    if not isinstance(value, dict) or "patternProperties" in schema:
        yield from _UPSTREAM_ADDITIONAL(validator, value, instance, schema)
        return
    if not validator.is_type(instance, "object"):
        return
    declared = schema.get("properties", {})
    for name in {name for name in instance if name not in declared}:  # upstream's order
        yield from _descend(validator, instance[name], value, name, None)


def items(
    validator: Any, value: Any, instance: Any, schema: Mapping[str, Any]
) -> Iterator[ValidationError]:
    """Draft 2020-12 `items`, with the memo (upstream's own for `prefixItems` or a boolean)."""
    if not isinstance(value, dict) or "prefixItems" in schema:
        yield from _UPSTREAM_ITEMS(validator, value, instance, schema)
        return
    if not validator.is_type(instance, "array"):
        return
    for index, item in enumerate(instance):
        yield from _descend(validator, item, value, index, None)
