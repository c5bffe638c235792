"""nvcregen's own policies for generated objects, one object at a time (pure)."""

from __future__ import annotations

import marshal
from collections.abc import Iterator, Mapping
from functools import lru_cache
from typing import Any

from nvcregen.check.findings import Finding
from nvcregen.check.kueuefields import kueue_fields
from nvcregen.core import codes
from nvcregen.core.errors import Severity
from nvcregen.core.fields import list_at, mapping_at
from nvcregen.core.labels import UNVERIFIED_TLS
from nvcregen.core.nvcre import NVCRE_API
from nvcregen.core.secrets import (
    ENTRY_JOIN,
    URL_CREDENTIALS,
    entry_clue,
    find_secret,
    has_clue,
)
from nvcregen.spec.positions import pointer

OLD_GROUP = "cre.nvidia.com"
IMAGE_KEYS = frozenset({"image"})
_GBPS = "_gbps"
_SKIP_VERIFY = "insecureSkipVerify"
# A tree repeats its strings (a repository URL, a label, an image in every site): what a
# text of up to this many characters holds is searched for once per process, and at most
# SECRETS_REMEMBERED such texts are kept (8 million characters at most). Longer texts are
# searched every time and never kept.
SECRET_TEXT_REMEMBERED = 4096
SECRETS_REMEMBERED = 2048
# Whether a text holds a clue (`has_clue`) is remembered the same way, and for many more
# short texts (node names, labels: 8 million characters at most again).
SHORT_TEXT = 128
SHORT_CLUES_REMEMBERED = 1 << 16


def mentions(value: Any, *texts: str) -> bool:
    """False only when no string anywhere in `value` (key or value) contains one of `texts`.

    A scan in C that spares most objects a walk in Python: marshal writes every string it
    holds whole (a repeated one is written once, then referred to), in UTF-8.
    """
    try:
        data = marshal.dumps(value)
    except ValueError:  # not plain data: assume it might
        return True
    return any(text.encode() in data for text in texts)


def find_key(
    value: Any, key: str, path: tuple[str | int, ...] = ()
) -> list[tuple[tuple[str | int, ...], Any]]:
    """Every (path, value) under a mapping key named `key`, anywhere in JSON-like data."""
    if not path and not mentions(value, key):
        return []
    found: list[tuple[tuple[str | int, ...], Any]] = []
    if isinstance(value, dict):
        for name, item in value.items():
            if name == key:
                found.append(((*path, name), item))
            if isinstance(item, dict | list):
                found += find_key(item, key, (*path, name))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            if isinstance(item, dict | list):
                found += find_key(item, key, (*path, index))
    return found


def check_policies(obj: Mapping[str, Any], *, strict: bool = False) -> list[Finding]:
    """Return every policy finding for one object."""
    findings = list(_api_group(obj))
    findings += _secret_values(obj)
    findings += secret_strings(obj)
    findings += _scrape_tls(obj)
    findings += kueue_fields(obj)
    if mentions(obj, _GBPS, *IMAGE_KEYS, _SKIP_VERIFY):
        for path, value in _suspects(obj, ()):
            findings += _node(path, value, strict=strict)
    if _states_why_unverified(obj):
        findings = [f for f in findings if f.code != codes.NVC622.code]
    return findings


def _states_why_unverified(obj: Mapping[str, Any]) -> bool:
    """Whether the object says why it skips verification (a self-signed target): no NVC622."""
    return bool((mapping_at(obj, "metadata", "annotations") or {}).get(UNVERIFIED_TLS))


def _suspects(value: Any, path: tuple[str | int, ...]) -> list[tuple[tuple[str | int, ...], Any]]:
    """The nodes a policy might object to; cheap tests only, since almost all pass.

    A plain recursive scan: this runs on every node of every object `check` reads.
    """
    found: list[tuple[tuple[str | int, ...], Any]] = []
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(item, str):
                if "_gbps" in item or (key in IMAGE_KEYS and "@sha256:" not in item):
                    found.append(((*path, key), item))
            elif item is True:
                if key == "insecureSkipVerify":
                    found.append(((*path, key), item))
            elif isinstance(item, dict | list):
                found += _suspects(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            if isinstance(item, str):
                if "_gbps" in item:
                    found.append(((*path, index), item))
            elif isinstance(item, dict | list):
                found += _suspects(item, (*path, index))
    return found


def _api_group(obj: Mapping[str, Any]) -> Iterator[Finding]:
    api = str(obj.get("apiVersion", ""))
    if api.split("/", 1)[0] == OLD_GROUP:
        yield Finding(
            "/apiVersion",
            codes.NVC624.code,
            f"{api} is NVCRE's pre-rename API group",
            hint=f"use {NVCRE_API}",
        )


# Where the Prometheus Operator's monitors keep their endpoints.
_ENDPOINTS = {"ServiceMonitor": "endpoints", "PodMonitor": "podMetricsEndpoints"}


def _scrape_tls(obj: Mapping[str, Any]) -> Iterator[Finding]:
    """NVC681: an HTTPS endpoint that verifies its target without a CA to verify against.

    Prometheus's own trust store never holds the CA of an in-cluster serving certificate,
    so such a scrape fails on every attempt. A self-signed target (NVCRE 0.7.0's controller:
    its chart mounts no certificate) verifies against no CA at all, so the hint leads with
    skipping verification on purpose; a CA helps only where the target serves what it signed.
    """
    field = _ENDPOINTS.get(str(obj.get("kind")))
    if field is None or not str(obj.get("apiVersion", "")).startswith("monitoring.coreos.com/"):
        return
    for index, endpoint in enumerate(list_at(obj, "spec", field)):
        if not isinstance(endpoint, Mapping) or str(endpoint.get("scheme", "")).lower() != "https":
            continue
        tls = mapping_at(endpoint, "tlsConfig") or {}
        if tls.get("insecureSkipVerify") is True or tls.get("ca") or tls.get("caFile"):
            continue
        yield Finding(
            f"/spec/{field}/{index}/tlsConfig",
            codes.NVC681.code,
            "this HTTPS endpoint verifies the server's certificate but names no CA: every "
            "scrape would fail verification",
            hint="skip verification explicitly (insecureSkipVerify: true; a bearer token still "
            "authenticates the scrape) unless the target serves a certificate signed by a CA "
            "you can name (tlsConfig.ca); NVCRE 0.7.0's controller serves a self-signed one",
        )


def _secret_values(obj: Mapping[str, Any]) -> Iterator[Finding]:
    if obj.get("kind") == "Secret" and obj.get("apiVersion") == "v1":
        for key in ("data", "stringData"):
            if obj.get(key):
                yield Finding(
                    f"/{key}",
                    codes.NVC623.code,
                    "a Secret with values must not be in out/",
                    hint="reference an existing Secret by name instead",
                )


def secret_strings(obj: Mapping[str, Any]) -> list[Finding]:
    """NVC669: a password in a URL or secret material in any string or key of the object.

    A search of each key and string for the patterns' clues and for encoded text
    (`has_clue`, at C speed, each distinct short text once per process) finds almost every
    object clean; only an object holding one has its strings and keys matched, each as
    it is and decoded (`core/secrets.py`). A secret in a key is reported at its mapping,
    so the pointer printed never holds it; a string is also read with its key
    (`aws_secret_access_key: <40 characters>`: the word `aws` is in the key or the string).
    """
    if not _clue_anywhere(obj):
        return []
    found = []
    reported: set[tuple[str | int, ...]] = set()  # strings, and mappings for their keys
    for path, value, part in _strings(obj, ()):
        if path in reported or (part == "entry" and path[:-1] in reported):
            continue  # one finding a string; none for an entry whose key was reported
        what = _secret_in(value)
        if what is not None:
            reported.add(path)
            shown = "a password in a URL" if what == URL_CREDENTIALS else what
            where = "a key of this mapping" if part == "key" else "this string"
            found.append(
                Finding(
                    pointer(path),
                    codes.NVC669.code,
                    f"{where} holds {shown}; out/ is committed and must hold no secret",
                    hint="remove it from the site (nvcregen refuses it there: NVC113/NVC114)"
                    " and rotate it",
                )
            )
    return found


def _clue_anywhere(obj: Any) -> bool:
    """Whether some key or string in JSON-like `obj` has a clue (`has_clue`).

    A key is also read with its string, as `secret_strings` reads it (`entry_clue`: a
    kubeconfig's `kind:` across the two). A fleet's objects repeat their texts (a
    container's command in every run), which is why each is tested once.
    """
    stack = [obj] if isinstance(obj, dict | list) else []
    while stack:
        value = stack.pop()
        items = value.items() if isinstance(value, dict) else enumerate(value)
        for key, item in items:
            if isinstance(key, str) and _clue(key):
                return True
            if isinstance(item, str):
                if _clue(item) or (isinstance(key, str) and entry_clue(key, item)):
                    return True
            elif isinstance(item, dict | list):
                stack.append(item)
    return False


def _clue(text: str) -> bool:
    """`has_clue(text)`, remembered for short texts (`SECRET_TEXT_REMEMBERED`)."""
    if len(text) <= SHORT_TEXT:
        return _short_clue(text)
    return _clue_remembered(text) if len(text) <= SECRET_TEXT_REMEMBERED else has_clue(text)


@lru_cache(maxsize=SHORT_CLUES_REMEMBERED)
def _short_clue(text: str) -> bool:
    return has_clue(text)


@lru_cache(maxsize=SECRETS_REMEMBERED)
def _clue_remembered(text: str) -> bool:
    return has_clue(text)


def _secret_in(text: str) -> str | None:
    """`find_secret(text)`, remembered for short texts (`SECRET_TEXT_REMEMBERED`)."""
    return _remembered(text) if len(text) <= SECRET_TEXT_REMEMBERED else find_secret(text)


@lru_cache(maxsize=SECRETS_REMEMBERED)
def _remembered(text: str) -> str | None:
    return find_secret(text)


def _strings(
    value: Any, path: tuple[str | int, ...]
) -> Iterator[tuple[tuple[str | int, ...], str, str]]:
    """Every string, key and key-with-its-string: (where, or its mapping for a key; text; part)."""
    if isinstance(value, str):
        yield path, value, "string"
    elif isinstance(value, dict):
        for key, item in value.items():
            yield path, str(key), "key"
            yield from _strings(item, (*path, key))
            if isinstance(item, str):  # a secret told by its key's words
                yield (*path, key), f"{key}{ENTRY_JOIN}{item}", "entry"
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _strings(item, (*path, index))


def _node(path: tuple[str | int, ...], value: Any, *, strict: bool) -> list[Finding]:
    where = pointer(path)
    key = path[-1] if path else None
    found: list[Finding] = []
    if isinstance(value, str) and "_gbps" in value:
        found.append(
            Finding(
                where,
                codes.NVC620.code,
                f"'{value}' uses a deprecated _gbps metric name",
                hint="use the _gbs names: GB/s, bytes per second",
            )
        )
    if key in IMAGE_KEYS and isinstance(value, str) and "@sha256:" not in value:
        found.append(
            Finding(
                where,
                codes.NVC621.code,
                f"image {value} is pinned by tag only",
                Severity.ERROR if strict else Severity.WARNING,
                "append @sha256:<digest> so every node runs the same bytes",
            )
        )
    if key == "insecureSkipVerify" and value is True:
        found.append(
            Finding(
                where,
                codes.NVC622.code,
                "TLS certificate verification is off",
                Severity.WARNING,
                "verify against the CA that signed the target's certificate if it serves "
                "one; if it is self-signed (NVCRE 0.7.0's controller), say so in the "
                f"object's {UNVERIFIED_TLS} annotation",
            )
        )
    return found
