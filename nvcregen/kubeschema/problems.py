"""Problems found in generated objects, located by RFC 6901 pointers and readable paths."""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from nvcregen.core import codes

UNKNOWN_KIND = codes.NVC601.code
SCHEMA_VIOLATION = codes.NVC602.code
UNKNOWN_FIELD = codes.NVC603.code
METADATA_RULE = codes.NVC604.code

JsonPath = tuple[str | int, ...]

_PLAIN_KEY = re.compile(r"[A-Za-z_$][A-Za-z0-9_$-]*\Z")
_SHOW_LIMIT = 80


@dataclass(frozen=True)
class Problem:
    """One way an object breaks its schema.

    Attributes:
        pointer: RFC 6901 JSON pointer into the object ("" is the object itself).
        message: A sentence for a human, starting with the dotted path when there is one.
        code: NVC601 unknown kind/apiVersion, NVC602 schema violation, NVC603 unknown
            field, NVC604 metadata name/label/namespace rule.

    """

    pointer: str
    message: str
    code: str


@dataclass(frozen=True)
class Issue:
    """A problem whose location is still a path relative to some value."""

    path: JsonPath
    message: str
    code: str

    def at(self, prefix: JsonPath = ()) -> Problem:
        """Return the Problem for this issue found under `prefix`."""
        full = prefix + self.path
        return Problem(pointer(full), located(full, self.message), self.code)


def pointer(path: Iterable[str | int]) -> str:
    """Return the RFC 6901 pointer for a path of keys and indexes."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)


def dotted(path: Sequence[str | int]) -> str:
    """Return a path as people write it: `spec.categories[0].labels["a.b/c"]`."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif _PLAIN_KEY.match(part):
            out += f".{part}" if out else part
        else:
            out += f"[{json.dumps(part)}]"
    return out


def located(path: Sequence[str | int], message: str) -> str:
    """Prefix `message` with the dotted path, unless the path is the object itself."""
    return f"{dotted(path)}: {message}" if path else message


def show(value: object) -> str:
    """Render a value briefly, in JSON notation (strings quoted with double quotes)."""
    try:
        text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= _SHOW_LIMIT else text[: _SHOW_LIMIT - 3] + "..."


def did_you_mean(name: str, choices: Iterable[str]) -> str:
    """Return '; did you mean "x"?' for the closest choice, or "" when none is close."""
    close = difflib.get_close_matches(name, sorted(choices), n=1, cutoff=0.6)
    if not close:
        lowered = {c.lower(): c for c in choices}
        close = [lowered[name.lower()]] if name.lower() in lowered else []
    return f'; did you mean "{close[0]}"?' if close else ""


def unknown_field(parent: JsonPath, name: str, allowed: Iterable[str]) -> Issue:
    """Return the NVC603 issue for a field `name` of the object at `parent`."""
    hint = did_you_mean(name, allowed)
    return Issue((*parent, name), f'unknown field "{name}"{hint}', UNKNOWN_FIELD)
