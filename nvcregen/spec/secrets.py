"""Refuse secrets in a site file, at the line of the field that holds one (NVC113, NVC114).

Every string a site carries (mapping keys included) may reach `out/` (an object, an
annotation, `index.json`), which is committed and read by a GitOps controller, so a
password in a URL (NVC113) or recognisable secret material (NVC114: a private key, a
kubeconfig, a common token format; `core/secrets.py`) is an error where it is written.
The diagnostic names what was found, never the secret, and printing it masks the value.
"""

from __future__ import annotations

from collections.abc import Iterator

from nvcregen.core import codes
from nvcregen.core.errors import Diagnostic, Severity
from nvcregen.core.secrets import URL_CREDENTIALS, entry_secret, find_secret
from nvcregen.spec.positions import Document, pointer

_ROTATE = "rotate it too: it may already be in your Git history"


def secret_diagnostics(doc: Document) -> list[Diagnostic]:
    """NVC113/NVC114 for every string of the document that holds a secret."""
    return [_diagnostic(doc, ptr, what, key=key) for ptr, what, key in _found(doc.data, ())]


def _found(value: object, path: tuple[str | int, ...]) -> Iterator[tuple[str, str, bool]]:
    if isinstance(value, str):
        what = find_secret(value)
        if what is not None:
            yield pointer(path), what, False
    elif isinstance(value, dict):
        for key, item in value.items():
            in_key = find_secret(key) if isinstance(key, str) else None
            if in_key is not None:
                yield pointer((*path, key)), in_key, True
            found = list(_found(item, (*path, key)))
            yield from found
            if not found and in_key is None and isinstance(key, str) and isinstance(item, str):
                what = entry_secret(key, item)  # a secret told by its key's words
                if what is not None:
                    yield pointer((*path, key)), what, False
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _found(item, (*path, index))


def _diagnostic(doc: Document, ptr: str, what: str, *, key: bool) -> Diagnostic:
    span = doc.span(ptr, key=key)
    if what == URL_CREDENTIALS:
        return Diagnostic(
            span,
            Severity.ERROR,
            codes.NVC113.code,
            "this URL carries a password (user:password@host); it would be written to out/",
            ptr,
            "remove it from the URL and give the credentials to the GitOps controller as a"
            f" Secret (Argo CD repository credentials, Flux secretRef); {_ROTATE}",
        )
    return Diagnostic(
        span,
        Severity.ERROR,
        codes.NVC114.code,
        f"this looks like {what}; secrets must not be in a site file (they reach out/)",
        ptr,
        f"keep it in a Kubernetes Secret and name the Secret instead; {_ROTATE}",
    )
