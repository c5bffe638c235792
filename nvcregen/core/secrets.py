"""Recognisable secrets in text: credentials in URLs, private keys, kubeconfigs, tokens.

Whatever a site holds ends up in `out/`, which is committed to Git and read by a GitOps
controller, so nothing secret may pass. These patterns find what can be told apart from
ordinary configuration with next to no false alarms:

- a URL with a password: `scheme://user:password@host` (a user name alone, as in
  `ssh://git@host`, is no secret);
- a PEM private key (`-----BEGIN ... PRIVATE KEY-----`);
- kubeconfig credentials (`client-key-data:`, `client-certificate-data:`, or a
  `kind: Config` document with `users:`);
- GitHub tokens (`ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_`, `github_pat_`), AWS access
  key ids (`AKIA...`, `ASIA...`), Slack tokens (`xoxb-`, `xoxp-`, ...), JSON Web Tokens
  (`eyJ...` in three dot-separated parts) and bearer tokens (`Bearer <token>`).

`find_secret` names what it found, never the secret itself; `redact` masks every secret
in a text that is about to be printed (a message may quote a value from an input).
"""

from __future__ import annotations

import re

_PATTERNS: tuple[tuple[str, str], ...] = (
    ("url", r"[A-Za-z][A-Za-z0-9+.-]*://[^/\s:@]*:[^/\s@]+@"),
    ("a PEM private key", r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----"),
    (
        "kubeconfig credentials",
        r"client-(?:key|certificate)-data\s*:|\bkind:\s*Config\b[\s\S]*\busers:",
    ),
    ("a GitHub token", r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})"),
    ("an AWS access key id", r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    ("a Slack token", r"\bxox[abprse]-[A-Za-z0-9-]{10,}"),
    ("a JSON Web Token", r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
    ("a bearer token", r"\bBearer\s+[A-Za-z0-9._~+/-]{20,}"),
)
_ANY = re.compile("|".join(f"(?P<p{i}>{pattern})" for i, (_, pattern) in enumerate(_PATTERNS)))
# Text each pattern cannot match without, in `_PATTERNS` order. A substring test runs
# about a hundred times faster than a regular expression's scan, and almost every text
# nvcregen checks (every object of a generated tree) holds none of these.
_CLUES: tuple[tuple[str, ...], ...] = (
    ("://",),
    ("PRIVATE KEY",),
    ("client-", "kind:"),
    ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    ("AKIA", "ASIA"),
    ("xox",),
    ("eyJ",),
    ("Bearer",),
)
_ONE = tuple(re.compile(pattern) for _, pattern in _PATTERNS)
URL_CREDENTIALS = "url"  # what `find_secret` returns for a password in a URL


def has_clue(text: str) -> bool:
    """Whether `text` holds any pattern's clue: without one, no secret can be in it.

    Clues are plain ASCII words with no quote, backslash or whitespace, so they read the
    same in a JSON text of the strings as in the strings themselves.
    """
    return any(clue in text for clues in _CLUES for clue in clues)


def might_hold_secret(text: str) -> bool:
    """Whether any pattern matches anywhere in `text`.

    Each pattern is searched only in a text that holds one of its clues (`_CLUES`).
    """
    return any(
        any(clue in text for clue in clues) and pattern.search(text) is not None
        for clues, pattern in zip(_CLUES, _ONE, strict=True)
    )


def find_secret(text: str) -> str | None:
    """What secret `text` holds (`URL_CREDENTIALS`, or words such as "a GitHub token")."""
    match = _ANY.search(text)
    if match is None or match.lastgroup is None:
        return None
    return _PATTERNS[int(match.lastgroup[1:])][0]


MASK = "***"


def redact(text: str) -> str:
    """`text` with every secret masked: a URL keeps its user name, nothing else is kept."""
    if not might_hold_secret(text):
        return text
    return _ANY.sub(_mask, text)


def _mask(match: re.Match[str]) -> str:
    found = match.group(0)
    if match.lastgroup != "p0":  # _PATTERNS[0]: a password in a URL
        return MASK
    user_ends = found.index(":", found.index("://") + 3)
    return f"{found[: user_ends + 1]}{MASK}@"


def redact_pointer(path: str) -> str:
    """A JSON pointer with any secret in its segments masked (`~1` is a `/` there)."""
    segments = path.split("/")
    decoded = [segment.replace("~1", "/").replace("~0", "~") for segment in segments]
    if not might_hold_secret("\n".join(decoded)):
        return path
    return "/".join(
        MASK if might_hold_secret(d) else s for s, d in zip(segments, decoded, strict=True)
    )
