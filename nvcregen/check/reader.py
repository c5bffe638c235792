"""Read generated files fast with libyaml; load positions only for files with problems."""

from __future__ import annotations

from functools import cached_property
from pathlib import Path
from typing import Any

import yaml

from nvcregen.core.errors import Diagnostic
from nvcregen.core.regular import read_regular
from nvcregen.spec.bounded import RefusedInputError
from nvcregen.spec.fast import parse_fast
from nvcregen.spec.positions import Document


class GeneratedFile:
    """One file of an output tree: its bytes, its data, and (on demand) its positions.

    Parsing with libyaml is an order of magnitude faster than the position-keeping
    loader, and almost every generated file is fine, so positions are only worked out
    when a diagnostic has to name a line. PyYAML reads YAML 1.1, as Kubernetes does.
    """

    def __init__(self, path: Path, shown: str) -> None:
        self.path = path
        self.shown = shown

    @cached_property
    def raw(self) -> bytes:
        """The file's bytes, read on first use."""
        return read_regular(self.path)  # never a FIFO: its reader would wait forever

    @cached_property
    def data(self) -> Any:
        """The parsed object, or None when libyaml cannot parse the file."""
        try:
            return parse_fast(self.raw)
        except yaml.YAMLError:
            return None

    @cached_property
    def limit(self) -> RefusedInputError | None:
        """Why libyaml could not read the file, when it is a limit (NVC605, NVC606)."""
        try:
            parse_fast(self.raw)
        except RefusedInputError as exc:
            return exc
        except yaml.YAMLError:
            return None
        return None

    @cached_property
    def loaded(self) -> tuple[Document | None, list[Diagnostic]]:
        """The position-keeping load, with its diagnostics (its loader imported on first use)."""
        from nvcregen.spec.load import load_document

        return load_document(self.raw, self.shown)

    @property
    def document(self) -> Document:
        """Positions for diagnostics (a file libyaml read is also valid for this loader)."""
        doc = self.loaded[0]
        if doc is None:
            return Document(self.shown, "", self.data, {}, {}, {})
        return doc
