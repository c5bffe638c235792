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
from yaml.constructor import ConstructorError

from nvcregen.spec.positions import Document

# libyaml's C loader when PyYAML was built with it; the pure-Python one otherwise.
_BASE: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class AliasError(ConstructorError):
    """The YAML uses an alias (or a merge key), which nvcregen does not expand."""


class _JsonLoader(_BASE):  # type: ignore[misc]  # PyYAML's loaders are untyped
    """PyYAML's safe loader with JSON's scalars: dates stay text, other tags are refused."""


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
for _tag in ("binary", "set", "omap", "pairs"):
    _JsonLoader.add_constructor(f"tag:yaml.org,2002:{_tag}", _not_json)

LOADER: Any = _NoAliasLoader


def parse_fast(raw: bytes) -> Any:
    """Parse one YAML document without aliases; raise `yaml.YAMLError` when it is not that.

    Raises:
        AliasError: The document uses an alias (a `yaml.YAMLError` too).
        yaml.YAMLError: It is not valid YAML.

    """
    # An alias is written `*name`: bytes without a `*` have none, and are read without
    # asking of every node whether it was built before (a fifth of a tree check's parse).
    return yaml.load(raw, Loader=LOADER if b"*" in raw else _JsonLoader)


def fast_document(path: Path, shown: str) -> Document | None:
    """Read a YAML file into a Document without positions (None if unreadable).

    For inputs that are usually valid (the catalog, a rendered site's source): callers
    reload with `nvcregen.spec.load.load_file` only when they need to report a line.
    PyYAML reads YAML 1.1, as Kubernetes does.
    """
    try:
        data = parse_fast(path.read_bytes())
    except (OSError, yaml.YAMLError):
        return None
    return Document(shown, "", data, {}, {}, {})
