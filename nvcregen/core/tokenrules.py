"""Token patterns from a maintained corpus: gitleaks' rule set, vendored as data.

`catalog/secrets/gitleaks.toml` is gitleaks' own `config/gitleaks.toml` at a release
tag, copied byte for byte (`catalog/secrets/SOURCES.md`: provenance, licence, refresh).
This module reads it: each rule's regular expression (Go's RE2 syntax, translated to
Python's where the two differ), its keywords (lower-case text a match must hold: the
clues `core/secrets.py` tests first), the least Shannon entropy its secret must have,
the capture group that is the secret, and its allow lists (regular expressions and
stop words that mark a match as an example, a placeholder or a variable). The global
allow list applies to every rule. What a rule does with file paths is not used: nvcregen
scans strings, not files.

Rules nvcregen leaves out are named in `LEFT_OUT`, each with its reason.
"""

from __future__ import annotations

import math
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from nvcregen.core.datafiles import data_dir

RULES_FILE = ("secrets", "gitleaks.toml")  # under the catalog

# Rules not used, and why. Each would either fire on ordinary configuration (nvcregen's
# own trees are the test: `test_no_shipped_object_holds_a_secret`) or cost more than
# linear time on hostile text.
LEFT_OUT: Mapping[str, str] = {
    "generic-api-key": "any long value after a word such as key, token, secret or auth,"
    " told from configuration by entropy alone: a site's Secret names and every digest",
    "curl-auth-header": "a curl command line, matched with unbounded `.*?` runs across"
    " lines: quadratic on hostile text; nvcregen's own Authorization patterns cover it",
    "curl-auth-user": "a curl command line, matched with unbounded `.*` runs across lines",
    "kubernetes-secret-yaml": "a Secret manifest's data, matched with unbounded `(?s:.)+`"
    " runs; the data itself is decoded and searched (`core/secrets.py`)",
    "pkcs12-file": "a file name rule, with no pattern for text",
    "nuget-config-password": "a nuget.config line (gitleaks scopes it to that file name):"
    ' `value="(.{8,})"` rescans to the line\'s end from every start, quadratic on a site'
    ' of repeated `<add key="Password" value="` (found by review: 37 s for 328 KB)',
    "jwt": "nvcregen's own JSON Web Token pattern finds the same; this one's keyword `ey`"
    " is in half the generated objects (`key`), and its unbounded runs before a `.` are"
    " quadratic on a megabyte of `eyJ`",
}

# Rules kept with fewer keywords, and why: a keyword in every generated object would open
# every object to the closer look (NVC669's quick scan), and find nothing there.
NARROWED: Mapping[str, tuple[tuple[str, ...], str]] = {
    "vault-service-token": (
        ("hvs.",),
        "`s.` (the legacy token's prefix) is in every generated object (`k8s.io`): only"
        " the current `hvs.` form is looked for",
    ),
}

# Keyword rules open with a lazy run of name characters before the vendor's word
# (`[\w.-]{0,50}?`, twice in some): it only moves the match's start, and tried at every
# position it makes the search 50 to 2,500 times slower. It is dropped.
_LEAD = r"[\w.-]{0,50}?"

# POSIX classes gitleaks' rules use inside brackets, in Python's terms.
_POSIX = {
    "[:alnum:]": "A-Za-z0-9",
    "[:alpha:]": "A-Za-z",
    "[:digit:]": "0-9",
    "[:xdigit:]": "0-9A-Fa-f",
    "[:lower:]": "a-z",
    "[:upper:]": "A-Z",
    "[:space:]": r"\t\n\v\f\r ",
    "[:word:]": r"\w",
}
_FLAGS = re.compile(r"\(\?([imsU-]+)\)")


class RuleError(ValueError):
    """The vendored rule set holds something this reader cannot translate."""


def drop_leading_context(pattern: str) -> str:
    """`pattern` without the optional lazy runs it opens with (`_LEAD`).

    A match of the rest is a match of the whole (each run may be empty), and the other
    way round the rest matches where the vendor's word begins; the secret's group is
    the same.
    """
    flag = "(?i)" if pattern.startswith("(?i)") else ""
    rest = pattern[len(flag) :]
    while True:
        if rest.startswith(_LEAD):
            rest = rest[len(_LEAD) :]
        elif rest.startswith("(?i:" + _LEAD):
            rest = "(?i:" + rest[4 + len(_LEAD) :]
        else:
            return flag + rest


def go_to_python(pattern: str) -> str:
    r"""A Go (RE2) regular expression as Python's `re` reads it, with the same meaning.

    Go sets flags anywhere (`lin_api_(?i)[a-z0-9]{40}`): from there to the end of the
    enclosing group, alternatives after a `|` included. Python allows flags only at the
    start, so each later setting becomes a scoped group `(?i:...)` closed before every `|`
    and reopened after it, and closed with its group. `\z` (the end of the text) is
    Python's `\Z`; POSIX classes (`[[:alnum:]]`) are spelt out.

    Raises:
        RuleError: For a POSIX class not in `_POSIX`.

    """
    out: list[str] = []
    levels: list[list[str]] = [[]]  # per open group: the flags of scoped groups opened in it
    index = 0
    while index < len(pattern):
        char = pattern[index]
        flags = _FLAGS.match(pattern, index)
        if char == "\\":
            pair = pattern[index : index + 2]
            out.append(r"\Z" if pair == r"\z" else pair)
            index += 2
            continue
        if char == "[":
            text, index = _bracket(pattern, index)
            out.append(text)
            continue
        if flags is not None and index > 0:
            out.append(f"(?{flags[1]}:")
            levels[-1].append(flags[1])
            index = flags.end()
            continue
        if char == "(":
            levels.append([])
        elif char == ")" and len(levels) > 1:
            out.append(")" * len(levels.pop()))
        elif char == "|" and levels[-1]:
            opened = levels[-1]
            char = ")" * len(opened) + "|" + "".join(f"(?{f}:" for f in opened)
        out.append(char)
        index += 1
    out.append(")" * len(levels[0]))
    return "".join(out)


def _bracket(pattern: str, index: int) -> tuple[str, int]:
    """The character class opening at `index`, translated, and where it ends."""
    out = ["["]
    index += 1
    if pattern.startswith("^", index):
        out.append("^")
        index += 1
    if pattern.startswith("]", index):  # a `]` first is a literal
        out.append("]")
        index += 1
    while index < len(pattern) and pattern[index] != "]":
        if pattern[index] == "\\":
            out.append(pattern[index : index + 2])
            index += 2
        elif pattern.startswith("[:", index):
            end = pattern.find(":]", index)
            name = pattern[index : end + 2]
            if end < 0 or name not in _POSIX:
                raise RuleError(f"unknown POSIX class at {index} in {pattern!r}")
            out.append(_POSIX[name])
            index = end + 2
        else:
            out.append(pattern[index])
            index += 1
    out.append("]")
    return "".join(out), index + 1


@dataclass(frozen=True)
class Allow:
    """One allow list: a match is allowed when a regex finds its target or a stop word."""

    target: str  # "secret" (the default), "match" or "line" (read as the whole text)
    regexes: tuple[re.Pattern[str], ...]
    stopwords: tuple[str, ...]  # lower case
    all_of: bool  # condition = "AND": both a regex and a stop word (when both are given)

    def allows(self, secret: str, match: str, text: str) -> bool:
        """Whether this allow list lets the match pass as no secret."""
        target = {"match": match, "line": text}.get(self.target, secret)
        by_regex = any(r.search(target) for r in self.regexes)
        lowered = secret.lower()
        by_word = any(word in lowered for word in self.stopwords)
        if self.all_of and self.regexes and self.stopwords:
            return by_regex and by_word
        return by_regex or by_word


@dataclass(frozen=True)
class Rule:
    """One gitleaks rule, ready to search with."""

    id: str
    pattern: re.Pattern[str]
    keywords: tuple[str, ...]
    entropy: float
    group: int | None
    allows: tuple[Allow, ...]

    def secret(self, match: re.Match[str]) -> str:
        """The secret a match holds: the rule's group, else the first group that matched."""
        start, end = self.secret_span(match)
        return match.string[start:end]

    def secret_span(self, match: re.Match[str]) -> tuple[int, int]:
        """Where the secret is.

        A match also holds the text around it (`token = `, a closing quote or space).
        """
        if self.group is not None and self.group <= len(match.groups()):
            return match.span(self.group)
        for index, group in enumerate(match.groups(), 1):
            if group:
                return match.span(index)
        return match.span()

    def accepts(self, match: re.Match[str]) -> bool:
        """Whether a match is a secret: enough entropy, and no allow list lets it pass."""
        secret = self.secret(match)
        if self.entropy and shannon_entropy(secret) < self.entropy:
            return False
        text = match.string
        return not any(a.allows(secret, match.group(), text) for a in self.allows)


def shannon_entropy(text: str) -> float:
    """Bits per character of `text`, as gitleaks measures a secret's randomness."""
    if not text:
        return 0.0
    counts: dict[str, int] = {}
    for char in text:
        counts[char] = counts.get(char, 0) + 1
    size = len(text)
    return -sum(n / size * math.log2(n / size) for n in counts.values())


def _allow(entry: Mapping[str, Any]) -> Allow:
    return Allow(
        target=str(entry.get("regexTarget", "secret")),
        regexes=tuple(re.compile(go_to_python(str(r))) for r in entry.get("regexes", ())),
        stopwords=tuple(str(w).lower() for w in entry.get("stopwords", ())),
        all_of=str(entry.get("condition", "OR")).upper() == "AND",
    )


def _text_allow(entry: Mapping[str, Any]) -> bool:
    """Whether an allow list says something of text (one of paths alone says nothing)."""
    return bool(entry.get("regexes") or entry.get("stopwords"))


def parse_rules(data: Mapping[str, Any]) -> tuple[Rule, ...]:
    """The rules of a parsed gitleaks config, less `LEFT_OUT`, in the file's order.

    Raises:
        RuleError: For a rule that cannot be read (no keywords, an untranslatable
            pattern): a refresh must be looked at, not silently narrowed.

    """
    common = data.get("allowlist") or {}
    shared = (_allow(common),) if _text_allow(common) else ()
    rules = []
    for entry in data.get("rules", ()):
        rule_id = str(entry.get("id", ""))
        if rule_id in LEFT_OUT:
            continue
        keywords = tuple(str(k).lower() for k in entry.get("keywords", ()))
        if rule_id in NARROWED:
            keywords = tuple(k for k in keywords if k in NARROWED[rule_id][0])
        if not keywords or "regex" not in entry:
            raise RuleError(f"rule {rule_id!r} has no keywords or no regex")
        try:
            pattern = re.compile(go_to_python(drop_leading_context(str(entry["regex"]))))
        except re.error as exc:
            raise RuleError(f"rule {rule_id!r}: {exc}") from exc
        own = tuple(_allow(a) for a in entry.get("allowlists", ()) if _text_allow(a))
        group = entry.get("secretGroup")
        rules.append(
            Rule(
                rule_id,
                pattern,
                keywords,
                float(entry.get("entropy", 0.0)),
                int(group) if group is not None else None,
                own + shared,
            )
        )
    return tuple(rules)


def rules_path() -> Path:
    """Where the vendored rule set is."""
    return data_dir("catalog").joinpath(*RULES_FILE)


@cache
def vendored_rules() -> tuple[Rule, ...]:
    """The vendored rules, read once per process."""
    with rules_path().open("rb") as handle:
        return parse_rules(tomllib.load(handle))


def keywords_of(rules: Sequence[Rule]) -> frozenset[str]:
    """Every keyword of some rules."""
    return frozenset(k for rule in rules for k in rule.keywords)
