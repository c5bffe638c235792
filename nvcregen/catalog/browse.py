"""`nvcregen catalog list|show`: the catalog as tables, entries, or JSON."""

from __future__ import annotations

import difflib
import json
import statistics
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal, get_args

from pydantic import BaseModel

from nvcregen.catalog.load import Catalog, load_catalog, model_key
from nvcregen.catalog.models import Baseline, HardwareEntry, TestEntry
from nvcregen.core.units import format_gbs
from nvcregen.kindapi.registry import kind_of

Kind = Literal["hardware", "tests", "baselines"]
KINDS: tuple[Kind, ...] = get_args(Kind)


class NotInCatalogError(LookupError):
    """No entry (or more than one) answers to a name; the message says which exist."""


@dataclass(frozen=True)
class Entry:
    """One catalog entry with the name `show` finds it by and the file it came from."""

    kind: Kind
    name: str
    file: str
    model: BaseModel

    def to_json(self) -> dict[str, object]:
        """The entry as `--format json` prints it."""
        data = self.model.model_dump(mode="json", by_alias=True, exclude_none=True)
        return {"kind": self.kind, "name": self.name, "file": f"catalog/{self.file}", "entry": data}


def entries(catalog: Catalog, kinds: Iterable[Kind] = KINDS) -> list[Entry]:
    """Every entry of the given kinds, by kind then name."""
    found: list[Entry] = []
    for kind in kinds:
        table: dict[str, BaseModel] = dict(getattr(catalog, kind))
        found.extend(
            Entry(kind, name, catalog.origin(kind, name), table[name]) for name in sorted(table)
        )
    return found


def entry_names(kind: str | None = None) -> list[tuple[str, str]]:
    """(kind, name) of every entry, for shell completion."""
    kinds = [k for k in KINDS if kind in {None, k}]
    return [(e.kind, e.name) for e in entries(load_catalog(), kinds)]


def find(catalog: Catalog, name: str, kind: Kind | None = None) -> Entry:
    """The entry called `name` (a model also by its written name, `RTX PRO 6000`).

    Raises:
        NotInCatalogError: When no entry, or entries of several kinds, answer to it.

    """
    kinds = [kind] if kind else list(KINDS)
    every = entries(catalog, kinds)
    wanted = {name, name.lower(), model_key(name)}
    matches = [e for e in every if e.name in wanted]
    if len(matches) == 1:
        return matches[0]
    if matches:
        options = " or ".join(f"--kind {e.kind}" for e in matches)
        raise NotInCatalogError(f"'{name}' names entries of several kinds; add {options}")
    names = sorted({e.name for e in every})
    close = difflib.get_close_matches(model_key(name), names, n=3, cutoff=0.5)
    where = f"catalog {kind}" if kind else "the catalog"
    hint = f"did you mean {', '.join(close)}?" if close else "see `nvcregen catalog list`"
    raise NotInCatalogError(f"'{name}' is not in {where}; {hint}")


def list_text(catalog: Catalog, kinds: Iterable[Kind] = KINDS) -> str:
    """One table per kind; the first column is the name `catalog show` takes."""
    blocks = []
    for kind in kinds:
        rows = [_row(e) for e in entries(catalog, [kind])]
        blocks.append(f"{kind}:\n" + _table([_HEADERS[kind], *rows]))
    return "\n".join(blocks)


def list_json(catalog: Catalog, kinds: Iterable[Kind] = KINDS) -> str:
    """Every entry of the given kinds as a JSON object per kind."""
    kinds = list(kinds)
    data = {k: [e.to_json() for e in entries(catalog, [k])] for k in kinds}
    return json.dumps(data, indent=2) + "\n"


def show_text(entry: Entry) -> str:
    """The entry's fields in the order the catalog file defines them."""
    data = entry.model.model_dump(mode="json", by_alias=True, exclude_none=True)
    lines = [f"{_SINGULAR[entry.kind]} {entry.name} (catalog/{entry.file})"]
    lines.extend(_field_lines(data, 1))
    if isinstance(entry.model, HardwareEntry):
        lines.append(f"start a site: nvcregen init --model {entry.name} --name SITE")
    return "\n".join(lines) + "\n"


def show_json(entry: Entry) -> str:
    """The entry as one JSON object."""
    return json.dumps(entry.to_json(), indent=2) + "\n"


def list_catalog(kind: str | None, fmt: str) -> str:
    """`nvcregen catalog list`: every entry (of one kind) as tables or JSON."""
    kinds = [k for k in KINDS if kind in {None, k}]
    catalog = load_catalog()
    return list_json(catalog, kinds) if fmt == "json" else list_text(catalog, kinds)


def show_catalog(name: str, kind: str | None, fmt: str) -> str:
    """`nvcregen catalog show NAME`: one entry as text or JSON.

    Raises:
        NotInCatalogError: When `name` is unknown or ambiguous.

    """
    kinds = [k for k in KINDS if k == kind]
    entry = find(load_catalog(), name, kinds[0] if kinds else None)
    return show_json(entry) if fmt == "json" else show_text(entry)


_SINGULAR: dict[Kind, str] = {"hardware": "hardware", "tests": "test", "baselines": "baseline"}
_HEADERS: dict[Kind, list[str]] = {
    "hardware": ["NAME", "MODEL", "GPUS", "MEMORY", "FORM", "NVLINK", "TYPICAL NICS", "NVCRE"],
    "tests": ["NAME", "KIND", "SCOPES", "TRANSPORT", "DURATION", "BECOMES", "TITLE"],
    "baselines": ["NAME", "MODEL", "NODES", "TEST", "SCOPE", "TRANSPORT", "AT", "MEDIAN"],
}


def _row(entry: Entry) -> list[str]:
    e = entry.model
    if isinstance(e, HardwareEntry):
        nics = e.typical_nics
        typical = f"{nics.count} x {nics.speed} {nics.fabric}" if nics else "-"
        nvcre = (e.nvcre.arch or "known") if e.nvcre.known else "unknown"
        gpus, memory = str(e.gpus_per_node), f"{e.memory_gb} GB"
        return [entry.name, e.model, gpus, memory, e.form_factor, e.nvlink or "-", typical, nvcre]
    if isinstance(e, TestEntry):
        becomes = f"{e.nvcre.domain}/{e.nvcre.variant}" if e.nvcre else "WorkloadRun"
        if kind_of(e).nvcre_refusal is not None:  # NVCRE mode cannot run it (NVC333, NVC344)
            becomes = "trainer only"
        scopes = ",".join(e.scopes)
        return [entry.name, e.kind, scopes, e.transport, _duration(e), becomes, e.title]
    assert isinstance(e, Baseline)
    median = statistics.median(r.busbw for r in e.rounds)
    shape = f"{e.nodes} x {e.gpus_per_node} GPUs"
    busbw = f"{format_gbs(median)} {e.unit}"
    return [entry.name, e.model, shape, e.test, e.scope, e.transport, e.at, busbw]


def _duration(test: TestEntry) -> str:
    """What a test's duration follows from: a fixed time, or its sweep (hardware decides)."""
    return kind_of(test).duration_basis(test)


def _table(rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "".join(
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() + "\n"
        for row in rows
    )


def _field_lines(data: object, depth: int) -> list[str]:
    pad = "  " * depth
    lines: list[str] = []
    items = data.items() if isinstance(data, dict) else []
    for key, value in items:
        if value in ([], {}):
            continue
        if isinstance(value, dict):
            lines.append(f"{pad}{key}:")
            lines.extend(_field_lines(value, depth + 1))
        elif isinstance(value, list) and any(isinstance(v, dict | list) for v in value):
            lines.append(f"{pad}{key}:")
            lines.extend(f"{pad}  - {_flow(item)}" for item in value)
        elif isinstance(value, list) and sum(len(str(v)) for v in value) > 60:
            lines.append(f"{pad}{key}:")
            lines.extend(f"{pad}  - {v}" for v in value)
        else:
            lines.append(f"{pad}{key}: {_flow(value)}")
    return lines


def _flow(value: object) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_flow(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_flow(v) for v in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
