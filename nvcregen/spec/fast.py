"""Fast YAML loading with libyaml, for inputs whose positions are rarely needed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from nvcregen.spec.positions import Document

# libyaml's C loader when PyYAML was built with it; the pure-Python one otherwise.
LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def parse_fast(raw: bytes) -> Any:
    """Parse one YAML document; raise `yaml.YAMLError` when it is not valid YAML."""
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
