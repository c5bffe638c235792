"""What `nvcregen ingest <kind>` asks of a kind that reads its own output (a part of its package).

A kind whose package holds an `ingest` module with an `INGEST` (`KindIngest`) is one of
`ingest`'s choices, by the name it gives (`ingest_names`): the command
reads the files with it and prints what it returns, exiting 2 on a file it could not
read and 1 on a failed run or verdict. This layer never imports a kind.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, TypeGuard, runtime_checkable

from nvcregen.core.errors import Diagnostic
from nvcregen.ingest.models import Json
from nvcregen.kindapi.registry import KINDS, part_of


@dataclass(frozen=True)
class IngestArgs:
    """The options `ingest` was given besides the files and `--format`."""

    model: str | None = None  # judge against this GPU model's figures
    order: Path | None = None  # a file the kind reads to make sense of the others
    site: str | None = None  # judge against this site's pool (with `pool`)
    pool: str | None = None
    at: str | None = None  # summarize only this message size (`1GiB`), as given


@dataclass(frozen=True)
class Ingested:
    """What a kind read of the files: its text and JSON forms, what it could not read."""

    text: str  # printed escaped: it quotes the files
    json: Json
    diagnostics: tuple[Diagnostic, ...]
    failed: bool  # a run failed or was cut off, or a verdict did not pass
    markdown: str | None = None  # `--format markdown`, for a kind that takes it
    exit_code: int | None = None  # the kind's own exit code (else 2 on a diagnostic, 1 failed)


class IngestOptionError(ValueError):
    """An option's value the kind cannot judge by (`--model` it knows no figures of)."""

    def __init__(self, message: str, option: str) -> None:
        super().__init__(message)
        self.option = option


class IngestUsageError(ValueError):
    """Options that do not go together (`--site` without `--pool`)."""


class IngestInputError(ValueError):
    """An input the options name that does not read (a site file): nothing was read."""

    def __init__(self, message: str, diagnostics: tuple[Diagnostic, ...] = ()) -> None:
        super().__init__(message)
        self.diagnostics = diagnostics


@runtime_checkable
class KindIngest(Protocol):
    """A kind's reading of its own output, for `nvcregen ingest`."""

    @property
    def name(self) -> str:
        """Its name as `ingest`'s argument (`link-counters`)."""
        ...

    @property
    def options(self) -> frozenset[str]:
        """The options it takes besides `--format text|json`.

        Among `model`, `order`, `site`, `pool`, `at`, and `markdown` for that format.
        """
        ...

    def ingest(self, files: Sequence[Path], args: IngestArgs) -> Ingested:
        """Read each file (and judge it against what `args` name, when they do).

        Raises:
            IngestOptionError: An option names nothing the kind can judge by.
            IngestUsageError: Options that do not go together.
            IngestInputError: A file an option names does not read.

        """
        ...


def ingests(found: object) -> TypeGuard[KindIngest]:
    """Whether a kind's `ingest.INGEST` is a `KindIngest`."""
    return isinstance(found, KindIngest)


def ingest_of(kind: str) -> KindIngest | None:
    """The reading of a registered kind's own output, None when its package holds none."""
    return part_of(kind, "ingest", "INGEST", ingests)


def ingest_names() -> dict[str, KindIngest]:
    """Each kind that reads its own output, by the name `ingest` knows it by.

    Loads every kind and its `ingest` module: asked when `ingest` runs, not as it starts.
    """
    found = (ingest_of(kind) for kind in KINDS)
    return {reading.name: reading for reading in found if reading is not None}
