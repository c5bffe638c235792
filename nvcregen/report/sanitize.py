"""Sanitized reports: internal addresses, host names and registries as stable placeholders.

The seed published its CSV and summary JSON only after taking out internal addresses,
registries and identifiers. `report --sanitize` does the same to everything it writes
(the page, summary.md, and the bandwidth.csv and summary.json exports): the archive's
texts are rewritten before they are read, so no escaped or reformatted copy of a name
can slip through. Replaced, each by a placeholder numbered in sorted order of the
originals (so the same nodes give the same placeholders run after run):

- node and host names the archive names (nodes of groups, failed, unjudged, excluded
  and succeeded nodes, hosts and ranks of logs, the nodes launcher pods ran on, node
  verdicts; inside a log's path and run name too) -> `node-A`, `node-B`, ...
  (letters, never numbers: `host-03` would read as a real node 3 of a numbered fleet);
  The history section's node groups (earlier runs' nodes too) get the same placeholders,
  an earlier run's node this run does not name the next letters after this run's;
- IPv4 addresses, and IPv6 ones written with `::` -> `ip-01`, ...;
- image registries other than the public ones (nvcr.io, docker.io, ghcr.io, quay.io,
  registry.k8s.io, gcr.io, public.ecr.aws) -> `registry-01.invalid`, ...;
- secrets (a token, a `user:password@` URL in a condition's message: `core/secrets.py`)
  -> `***`, as collect masks them in archives it writes (an older archive may hold them).

The archive itself is never changed: it still verifies against its SHA256SUMS.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from nvcregen.core.secrets import redact

PUBLIC = frozenset(
    {"nvcr.io", "docker.io", "ghcr.io", "quay.io", "registry.k8s.io", "gcr.io", "public.ecr.aws"}
)
_NODE_KEYS = frozenset({"nodes", "hosts", "excluded_nodes", "succeeded_nodes", "scheduled_on"})
_NAMED_AFTER = frozenset({"path", "run"})  # a log record's file and run, named by the user
_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
_IPV4 = re.compile(r"(?<![\d.])(?:\d{1,3}\.){3}\d{1,3}(?![\d.])")
_IPV6 = re.compile(r"(?<![\w:])[0-9a-fA-F]{0,4}(?::[0-9a-fA-F]{0,4})*::[0-9a-fA-F:%\w]*")
_IMAGE_HOST = re.compile(r"^([a-z0-9-]+(?:\.[a-z0-9-]+)+(?::\d+)?|[a-z0-9-]+:\d+)/")


@dataclass(frozen=True)
class Sanitizer:
    """The replacements of one archive."""

    names: dict[str, str]
    registries: dict[str, str]

    def __call__(self, text: str) -> str:
        """`text` with every secret masked, and every name, address and registry replaced."""
        text = _replace(redact(text), self.registries)
        text = _replace(text, self.names)
        addresses: dict[str, str] = {}
        for pattern in (_IPV4, _IPV6):
            for found in sorted(set(pattern.findall(text))):
                if found.strip(":"):
                    addresses.setdefault(found, "")
        numbered = {a: f"ip-{n:02d}" for n, a in enumerate(sorted(addresses), 1)}
        return _replace(text, numbered)

    def extended(self, names: Iterable[str]) -> Sanitizer:
        """These replacements and placeholders for the `names` they lack.

        The new ones (an earlier run's nodes) are lettered after these, in sorted order,
        so the names these replace keep their placeholders.
        """
        new = sorted(set(names) - self.names.keys())
        more = {n: f"node-{letters(i)}" for i, n in enumerate(new, len(self.names))}
        return Sanitizer(self.names | more, self.registries)

    def within(self, text: str) -> str:
        """`text` (a log's path or run name) with every node name in it replaced.

        Names stand between characters other than letters and digits there: a user
        names a saved log after its node (`node-health-gpu-07.log`).
        """
        return _replace(self(text), self.names, inside=True)


def _replace(text: str, mapping: Mapping[str, str], *, inside: bool = False) -> str:
    if not mapping:
        return text
    names = "|".join(re.escape(n) for n in sorted(mapping, key=len, reverse=True))
    pattern = (
        re.compile(r"(?<![A-Za-z0-9])(?:" + names + r")(?![A-Za-z0-9])")
        if inside
        else re.compile(r"(?<![\w.-])(?:" + names + r")(?![\w-]|\.\w)")
    )
    return pattern.sub(lambda m: mapping[m[0]], text)


def sanitizer(texts: Mapping[str, str]) -> Sanitizer:
    """The replacements for an archive's texts (summary.json, verdicts.json, provenance)."""
    names: set[str] = set()
    for name in ("summary.json", "verdicts.json"):
        names |= set(_node_names(json.loads(texts[name])))
    provenance = json.loads(texts["provenance.json"])
    hosts = {
        match[1]
        for image in provenance.get("images") or []
        if isinstance(image, dict) and (match := _IMAGE_HOST.match(str(image.get("image", ""))))
    }
    private = sorted(h for h in hosts if h not in PUBLIC)
    return Sanitizer(
        {n: f"node-{letters(i)}" for i, n in enumerate(sorted(names))},
        {h: f"registry-{i:02d}.invalid" for i, h in enumerate(private, 1)},
    )


def letters(index: int) -> str:
    """A placeholder's letters, as spreadsheet columns: 0 -> A, 25 -> Z, 26 -> AA."""
    found = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, len(_LETTERS))
        found = _LETTERS[rest] + found
    return found


def _node_names(data: object) -> Iterator[str]:
    """Node and host names anywhere in summary.json or verdicts.json."""
    if isinstance(data, dict):
        for key, value in data.items():
            if key in _NODE_KEYS and isinstance(value, list):
                yield from (v for v in value if isinstance(v, str) and v)
            elif key in {"failed_nodes", "unjudged_nodes"} and isinstance(value, list):
                yield from (str(v["name"]) for v in value if isinstance(v, dict) and v.get("name"))
            elif key in {"node", "host", "pod_node"} and isinstance(value, str) and value:
                yield value
            else:
                yield from _node_names(value)
    elif isinstance(data, list):
        for item in data:
            yield from _node_names(item)


def sanitize_texts(texts: Mapping[str, str]) -> dict[str, str]:
    """Every text sanitized with the replacements the texts themselves call for.

    JSON is rewritten value by value and CSV cell by cell, so a node named like a key
    or a column cannot break the file's structure.
    """
    clean = sanitizer(texts)
    out = {}
    for name, text in texts.items():
        if name.endswith(".json"):
            data = _walk(json.loads(text), clean)
            out[name] = json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
        elif name.endswith(".csv"):
            buffer = io.StringIO()
            writer = csv.writer(buffer, lineterminator="\n")
            writer.writerows([clean(cell) for cell in row] for row in csv.reader(io.StringIO(text)))
            out[name] = buffer.getvalue()
        else:
            out[name] = clean(text)
    return out


def _walk(data: object, clean: Sanitizer) -> object:
    if isinstance(data, str):
        return clean(data)
    if isinstance(data, dict):
        return {
            key: clean.within(value)
            if key in _NAMED_AFTER and isinstance(value, str)
            else _walk(value, clean)
            for key, value in data.items()
        }
    if isinstance(data, list):
        return [_walk(item, clean) for item in data]
    return data
