"""Fast YAML loading with libyaml, for inputs whose positions are rarely needed.

Every YAML nvcregen reads with it (generated trees, exports, old revisions, the
catalog) is read without aliases: an alias makes one node count many times, and a
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


class _NoAliasLoader(_BASE):  # type: ignore[misc]  # PyYAML's loaders are untyped
    """PyYAML's safe loader that refuses any node used twice (an alias)."""

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


LOADER: Any = _NoAliasLoader


def parse_fast(raw: bytes) -> Any:
    """Parse one YAML document without aliases; raise `yaml.YAMLError` when it is not that.

    Raises:
        AliasError: The document uses an alias (a `yaml.YAMLError` too).
        yaml.YAMLError: It is not valid YAML.

    """
    return yaml.load(raw, Loader=LOADER)


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
