"""Fast YAML loading with libyaml, for inputs whose positions are rarely needed.

Every YAML nvcregen reads with it (generated trees, exports, old revisions, the
catalog) is read as JSON-shaped data, as the Kubernetes tools read it: a plain date stays
its text, and tags with no JSON form (`!!binary`, `!!set`, ...) are refused. It is read
without aliases: an alias makes one node count many times, and a
few hundred bytes of nested aliases ("billion laughs") would expand to gigabytes in
whatever walks the data next. The loader refuses the second use of any node, so the
cost of a load stays linear in the size of the file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from yaml.constructor import ConstructorError, SafeConstructor
from yaml.nodes import MappingNode, ScalarNode, SequenceNode

from nvcregen.spec.bounded import (
    DUPLICATE_KEY,
    MAX_SITE_BYTES,
    TOO_LARGE,
    RefusedInputError,
    read_limited,
    too_deep,
    too_long,
)
from nvcregen.spec.positions import Document

# libyaml's C loader when PyYAML was built with it; the pure-Python one otherwise.
_BASE: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class AliasError(ConstructorError):
    """The YAML uses an alias (or a merge key), which nvcregen does not expand."""


class RefusedYAMLError(RefusedInputError, yaml.YAMLError):
    """A YAML input refused by a limit (`spec/bounded.py`): a `yaml.YAMLError` too."""


class _JsonLoader(_BASE):  # type: ignore[misc]  # PyYAML's loaders are untyped
    """PyYAML's safe loader with JSON's scalars; other tags, long numbers, twice keys refused."""

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        mapping = super().construct_mapping(node, deep)
        if len(mapping) != len(node.value):
            raise _duplicate(node)
        return mapping


class _NoAliasLoader(_JsonLoader):
    """The JSON loader that refuses any node used twice (an alias)."""

    def construct_object(self, node: Any, deep: bool = False) -> Any:
        if node in self.constructed_objects or node in self.recursive_objects:
            raise AliasError(
                None,
                None,
                "found an alias (or merge key) of the node that starts here; nvcregen"
                " reads YAML without aliases",
                node.start_mark,
            )
        return super().construct_object(node, deep)


def _bounded_int(loader: Any, node: Any) -> int:
    """A YAML int, refused (NVC605) when Python will not convert it (too many digits)."""
    try:
        value = int(SafeConstructor.construct_yaml_int(loader, node))
    except ValueError:
        value = None
    if value is None or abs(value) >= TOO_LARGE:  # hex, octal, base 60: any length converts
        mark = node.start_mark
        error = too_long(len(str(node.value)), mark.line + 1, mark.column + 1)
        raise RefusedYAMLError(error.code, error.message, error.line, error.column)
    return value


def _duplicate(node: Any) -> RefusedYAMLError:
    """NVC607 at the second of two equal keys (or at the mapping, if not told by text)."""
    seen: set[tuple[str, str]] = set()
    mark = node.start_mark
    for key, _ in node.value:
        ident = (key.tag, str(key.value))
        if ident in seen:
            mark = key.start_mark
            break
        seen.add(ident)
    return RefusedYAMLError(
        DUPLICATE_KEY,
        "a key is given twice in one mapping; readers disagree on which value wins",
        mark.line + 1,
        mark.column + 1,
    )


def _timestamp_text(loader: Any, node: Any) -> str:
    """A plain date or time stays the text it is, as kubectl reads it (JSON has no date)."""
    return str(loader.construct_scalar(node))


def _not_json(loader: Any, node: Any) -> Any:
    raise ConstructorError(
        None,
        None,
        f"{node.tag} has no JSON form; nvcregen reads YAML that maps to JSON",
        node.start_mark,
    )


_JsonLoader.add_constructor("tag:yaml.org,2002:timestamp", _timestamp_text)
_JsonLoader.add_constructor("tag:yaml.org,2002:int", _bounded_int)
for _tag in ("binary", "set", "omap", "pairs"):
    _JsonLoader.add_constructor(f"tag:yaml.org,2002:{_tag}", _not_json)

LOADER: Any = _NoAliasLoader

_TAG = "tag:yaml.org,2002:"
_STR, _MAP, _SEQ = f"{_TAG}str", f"{_TAG}map", f"{_TAG}seq"
# Scalars built by the loader's own constructor for the tag (str is the node's text).
_SCALARS = frozenset(f"{_TAG}{name}" for name in ("null", "bool", "int", "float", "timestamp"))
# Keys PyYAML rewrites before building a mapping: `<<` (merge) and `=` (value).
_REWRITTEN_KEYS = frozenset({f"{_TAG}merge", f"{_TAG}value"})


def parse_fast(raw: bytes) -> Any:
    """Parse one YAML document without aliases; raise `yaml.YAMLError` when it is not that.

    Raises:
        AliasError: The document uses an alias (a `yaml.YAMLError` too).
        RefusedYAMLError: A number too long, nesting too deep or a key given twice (a
            `yaml.YAMLError` too).
        yaml.YAMLError: It is not valid YAML.

    """
    # An alias is written `*name`: bytes without a `*` have none, and are read without
    # asking of every node whether it was built before (a fifth of a tree check's parse).
    try:
        return yaml.load(raw, Loader=LOADER) if b"*" in raw else _quick_load(raw)
    except RecursionError:  # libyaml stops at 1000 levels; Python's stack may not reach it
        error = too_deep()
        raise RefusedYAMLError(error.code, error.message) from None


class _UnusualNodeError(Exception):
    """A node the quick builder leaves to PyYAML's constructor."""


def _quick_load(raw: bytes) -> Any:
    """`yaml.load(raw, Loader=_JsonLoader)`, building the usual nodes in one tight walk.

    PyYAML's constructor spends a third of a load in Python bookkeeping (a registry
    look-up, an alias table and a generator per node). A document of plain mappings,
    sequences and JSON scalars without aliases (bytes without `*`) is built here with the
    loader's own scalar constructors; anything else (a tag of its own, a merge key, a key
    given twice, a refused value, nesting deeper than Python's stack) is built from the
    text again by PyYAML's constructor, so whatever it returns or raises for the document
    is what this returns or raises.
    """
    loader = _JsonLoader(raw)
    try:
        node = loader.get_single_node()  # libyaml's errors are raised here, as by yaml.load
        if node is None:
            return None
        try:
            return _build(node, loader)
        except (_UnusualNodeError, yaml.YAMLError, ValueError, RecursionError):
            pass
    finally:
        loader.dispose()
    return yaml.load(raw, Loader=_JsonLoader)


def _build(node: Any, loader: Any) -> Any:
    """The data of one node, as PyYAML's safe constructor builds a node without aliases."""
    kind = node.__class__
    tag = node.tag
    if kind is ScalarNode:
        if tag == _STR:
            return node.value
        if tag in _SCALARS:
            return loader.yaml_constructors[tag](loader, node)
    elif kind is MappingNode and tag == _MAP:
        mapping = {}
        for key_node, value_node in node.value:
            if key_node.tag in _REWRITTEN_KEYS:
                raise _UnusualNodeError
            key = _build(key_node, loader)
            if key.__class__ is dict or key.__class__ is list:  # unhashable: PyYAML says so
                raise _UnusualNodeError
            mapping[key] = _build(value_node, loader)
        if len(mapping) != len(node.value):  # a key given twice: NVC607 from PyYAML
            raise _UnusualNodeError
        return mapping
    elif kind is SequenceNode and tag == _SEQ:
        return [_build(item, loader) for item in node.value]
    raise _UnusualNodeError


def fast_document(path: Path, shown: str) -> Document | None:
    """Read a YAML file into a Document without positions (None if unreadable).

    For inputs that are usually valid (the catalog, a rendered site's source): callers
    reload with `nvcregen.spec.load.load_file` only when they need to report a line.
    PyYAML reads YAML 1.1, as Kubernetes does.
    """
    try:
        raw = read_limited(path, MAX_SITE_BYTES)  # sites and catalog files are small
        data = parse_fast(raw) if raw is not None else None
    except (OSError, yaml.YAMLError):
        return None
    if raw is None:
        return None
    return Document(shown, "", data, {}, {}, {})
