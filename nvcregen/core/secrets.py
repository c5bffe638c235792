"""Recognisable secrets in text: credentials in URLs, private keys, kubeconfigs, tokens.

Whatever a site holds ends up in `out/`, which is committed to Git and read by a GitOps
controller, so nothing secret may pass. Every pattern nvcregen knows is in this module
(`_KINDS`); each is anchored on the secret's own shape (a fixed prefix, its alphabet and
its length), never on word boundaries, so a token glued to a word (`ci_ghp_...`,
`AKIA..._prod`) is found as well as a free-standing one. Kinds without a shape of their
own (an AWS secret access key, HTTP Basic credentials) are found by the words around them.

A text is also searched as it reads once decoded (`_views`): with invisible format
characters removed (a zero-width space splitting a token), percent-decoded, and with each
run of base64 decoded (a PEM key, a kubeconfig or a token as a Secret's `data` holds
it). Decoding is bounded in depth and in size, so a hostile input costs linear time.

`find_secret` names what it found, never the secret itself; `redact` masks every secret
in a text that is about to be printed (a message may quote a value from an input), and
`shown` is how a message quotes a value from an input at all.
"""

from __future__ import annotations

import base64
import binascii
import functools
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from urllib.parse import unquote

from nvcregen.core.tokenrules import Rule, vendored_rules

URL_CREDENTIALS = "url"  # what `find_secret` returns for a password in a URL
URL_TOKEN_USER = "a token as the user name of a URL"
MASK = "***"

# Decoding bounds: how many decodings deep, how many characters decoded in all (per text
# searched), and the shortest base64 run worth decoding (16 characters are 12 bytes).
MAX_DEPTH = 3
MAX_DECODED = 1 << 20
MIN_BASE64 = 16


def _basic_credentials(match: re.Match[str]) -> bool:
    """Whether `Basic <x>` carries credentials: x is base64 of `user:password`."""
    decoded = _b64(match.group("b64"))
    return decoded is not None and ":" in decoded and _mostly_text(decoded)


def _mixed_user(match: re.Match[str]) -> bool:
    """Whether a URL's long user name holds a letter and a digit, as tokens do."""
    user = match.group()
    return _DIGIT.search(user) is not None and _LETTER.search(user) is not None


_DIGIT = re.compile(r"[0-9]")
_LETTER = re.compile(r"[A-Za-z]")


@dataclass(frozen=True)
class _Kind:
    what: str  # words for a message: "a GitHub token"
    pattern: re.Pattern[str]
    clues: tuple[str, ...]  # lower-case text a match must hold (a cheap test first)
    valid: Callable[[re.Match[str]], bool] | None = None  # a check the pattern cannot make
    needs: tuple[str, ...] = ()  # lower-case text the view must hold too, anywhere
    span: Callable[[re.Match[str]], tuple[int, int]] | None = None  # the secret, if not all


def _kind(
    what: str,
    pattern: str,
    clues: tuple[str, ...],
    valid: Callable[[re.Match[str]], bool] | None = None,
    needs: tuple[str, ...] = (),
) -> _Kind:
    return _Kind(what, re.compile(pattern), clues, valid, needs)


# Quantifiers that could backtrack over a long run are bounded (or possessive), so every
# pattern stays linear in the text (`test_every_pattern_is_fast_on_hostile_text`). The
# prefixes follow the vendors' documented token formats (the same families as
# detect-secrets' plugins, which the tests draw their samples from).
_OWN_KINDS: tuple[_Kind, ...] = (
    # a password in a URL: scheme://user:password@ (a user alone, ssh://git@host, is none);
    # `***` is what `redact` leaves, so a masked URL is not found again
    _kind(
        URL_CREDENTIALS, r"[A-Za-z][A-Za-z0-9+.-]{0,30}://[^/\s:@]*:(?!\*\*\*@)[^/\s@]+@", ("://",)
    ),
    # a token as a URL's user name, with no password (`https://<PAT>@dev.azure.com/...`,
    # a classic GitHub token's 40 hex digits, `ssh://<token>@host`, scp-style
    # `<token>@host:path`): a user of 32 or more letters, digits and underscores, with a
    # letter and a digit; user names people choose (`git`, `oauth2`, `x-access-token`,
    # `deploy-bot-l20`) are shorter or split into words
    _kind(
        URL_TOKEN_USER,
        r"(?:(?<=://)|(?<![^\s\"'=,(\[{<]))[A-Za-z0-9_]{32,256}"
        r"(?=@(?!sha\d{3}:)[A-Za-z0-9.-]{1,253}[:/]|@[A-Za-z0-9.-]{1,253}\Z)",
        ("@",),
        _mixed_user,
    ),
    _kind(
        "a private key",
        r"BEGIN[ A-Z0-9]{0,40}PRIVATE KEY|PuTTY-User-Key-File-\d",
        ("private key", "putty-user-key-file-"),
    ),
    _kind("kubeconfig credentials", r"client-(?:key|certificate)-data\s*:", ("client-",)),
    # a kubeconfig: `kind: Config` with `users:` (anywhere: keys come in any order)
    _kind("kubeconfig credentials", r"kind:\s*Config\b", ("kind:",), needs=("users:",)),
    _kind(
        "a GitHub token",
        r"gh[pousr]_[A-Za-z0-9_]{36}|github_pat_[A-Za-z0-9_]{22}",
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    ),
    _kind(
        "an AWS access key id",
        r"(?:A3T[A-Z0-9]|ABIA|ACCA|AKIA|ASIA)[A-Z0-9]{16}",
        ("a3t", "abia", "acca", "akia", "asia"),
    ),
    _kind(
        "an AWS secret access key",
        r"(?i:aws).{0,20}?(?i:key|pwd|pw|password|pass|token).{0,20}?"
        r"[\"'=:\s]\s{0,8}[\"']?[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+])",
        ("aws",),
    ),
    _kind(
        "a Slack token",
        r"(?i:xox[abposre]-)(?:[0-9]+-)+[A-Za-z0-9]|xox[abposre]-[A-Za-z0-9-]{10}"
        r"|xapp-\d-[A-Za-z0-9-]{10}"
        r"|hooks\.slack\.com/services/T[A-Za-z0-9_]+/B[A-Za-z0-9_]+/[A-Za-z0-9_]+",
        ("xox", "xapp-", "hooks.slack.com"),
    ),
    _kind(
        "a JSON Web Token",
        r"eyJ[A-Za-z0-9_-]{8,1024}+\.eyJ[A-Za-z0-9_-]{8,4096}+\.[A-Za-z0-9_-]{8}",
        ("eyj",),
    ),
    _kind("a bearer token", r"(?i:bearer)\s+[A-Za-z0-9._~+/-]{20,}", ("bearer",)),
    _kind(
        "HTTP Basic credentials",
        r"(?i:basic)\s+(?P<b64>[A-Za-z0-9+/]{4,}={0,2})",
        ("basic",),
        _basic_credentials,
    ),
    _kind(
        "a GitLab token",
        r"(?:glpat|gldt|glft|glsoat|glrt|glcbt|glimt|glptt|glagent|gloas)-[A-Za-z0-9_-]{20}"
        r"|GR1348941[A-Za-z0-9_-]{20}",
        (
            "glpat-",
            "gldt-",
            "glft-",
            "glsoat-",
            "glrt-",
            "glcbt-",
            "glimt-",
            "glptt-",
            "glagent-",
            "gloas-",
            "gr1348941",
        ),
    ),
    _kind(
        "a Google credential",
        r"AIza[0-9A-Za-z_-]{35}|GOCSPX-[A-Za-z0-9_-]{28}|ya29\.[0-9A-Za-z_-]{20}",
        ("aiza", "gocspx-", "ya29."),
    ),
    _kind(
        "a Stripe key",
        r"[rs]k_(?:live|test)_[0-9A-Za-z]{24}|whsec_[A-Za-z0-9]{32}",
        ("k_live_", "k_test_", "whsec_"),
    ),
    _kind(
        "an OpenAI or Anthropic API key",
        r"sk-[A-Za-z0-9_-]{20,100}?T3BlbkFJ[A-Za-z0-9]{20}"
        r"|sk-(?:proj|svcacct|admin|ant-api\d\d|ant-admin\d\d)-[A-Za-z0-9_-]{20}"
        r"|sk-(?=[a-z0-9]{0,47}[A-Z])[A-Za-z0-9]{48}",  # legacy: mixed case, not hex
        ("sk-",),
    ),
    _kind(
        "an npm token",
        r"npm_[A-Za-z0-9]{36}|_authToken\s*=\s*(?!\$\{)[^\s\"'$]{8}",
        ("npm_", "_authtoken"),
    ),
    _kind("an Azure storage key", r"AccountKey=[A-Za-z0-9+/=]{40}", ("accountkey=",)),
    _kind("a SendGrid key", r"SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}", ("sg.",)),
    _kind("a PyPI token", r"pypi-AgE[A-Za-z0-9_-]{70}", ("pypi-age",)),
    _kind("a Square token", r"sq0(?:csp|atp)-[0-9A-Za-z_\\-]{22}", ("sq0csp-", "sq0atp-")),
    _kind("a Hugging Face token", r"hf_[A-Za-z]{34}", ("hf_",)),
    # families gitleaks' rule set (below) lacks at the vendored version (issue #32):
    # Docker Hub personal and organisation access tokens, Tailscale keys
    # (`tskey-auth-<id>CNTRL-<secret>`, and the api, client, scim and webhook kinds)
    _kind("a Docker Hub access token", r"dckr_(?:pat|oat)_[A-Za-z0-9_-]{27}", ("dckr_",)),
    _kind(
        "a Tailscale key",
        r"tskey-(?:auth|api|client|scim|webhook)-[A-Za-z0-9]{6,40}-[A-Za-z0-9]{16}",
        ("tskey-",),
    ),
)


def _vendored(rule: Rule) -> _Kind:
    what = f"a token (gitleaks rule {rule.id})"
    return _Kind(what, rule.pattern, rule.keywords, rule.accepts, span=rule.secret_span)


@functools.cache
def _kinds() -> tuple[_Kind, ...]:
    """Nvcregen's own kinds, then gitleaks' rules (`core/tokenrules.py`), read once.

    Read on first use, not at import: every command imports this module to print.
    """
    return _OWN_KINDS + tuple(_vendored(rule) for rule in vendored_rules())


@functools.cache
def _clues() -> tuple[str, ...]:
    """Every pattern's clues in one flat tuple, tested at C speed (`map`).

    Almost every text holds none, and then no pattern needs a look.
    """
    return tuple(dict.fromkeys(clue for kind in _kinds() for clue in kind.clues))


# Invisible characters that split a token without showing: Unicode's format characters
# (category Cf, every one: `tests/unit/spec/test_secrets.py` checks), fillers, variation
# selectors and the combining grapheme joiner.
_INVISIBLE = re.compile(
    "[\u00ad\u034f\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u115f\u1160\u17b4\u17b5"
    "\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\u3164\ufe00-\ufe0f"
    "\ufeff\uffa0\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3"
    "\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f\U000e0100-\U000e01ef]+"
)
_PERCENT = re.compile(r"%[0-9A-Fa-f]{2}")
_BASE64 = re.compile(rf"[A-Za-z0-9+/_-]{{{MIN_BASE64},}}={{0,2}}")
_HEX = re.compile(r"[0-9A-Fa-f]+=*")
# Hex of text: a byte of printable ASCII is 0x20-0x7e, so every other digit is 2 to 7 (a
# digest's bytes almost never are, twelve in a row); one case throughout.
_HEX_TEXT = re.compile(r"(?:[2-7][0-9a-f]){12,}|(?:[2-7][0-9A-F]){12,}")
# Base32 (RFC 4648: upper case and 2-7, padded to 8 characters) of twelve bytes or more.
_BASE32 = re.compile(r"[A-Z2-7]{20,}={0,6}")
_UPPER = re.compile(r"[A-Z]")
_LOWER = re.compile(r"[a-z]")
_DIGIT_OR_PLUS = re.compile(r"[0-9+]")
_URLSAFE = str.maketrans("-_", "+/")
_TEXT_BYTES = re.compile(rb"[\t\n\r\x20-\x7e]")


def _b64(run: str) -> str | None:
    """A base64 run decoded (standard or URL-safe alphabet, padding optional), as text."""
    core = run.rstrip("=").translate(_URLSAFE)
    if len(core) % 4 == 1:
        core = core[:-1]  # a lone last character decodes to no byte
    try:
        raw = binascii.a2b_base64(core + "=" * (-len(core) % 4))
    except binascii.Error:
        return None
    return raw.decode("latin-1") if raw else None


def _b32(run: str) -> str | None:
    """A base32 run decoded as text, at the first of its 8 offsets that reads as text.

    A run holding no digit is an upper-case word, not base32 of text: base32 of ASCII
    holds one in practice (`_might_be_encoded` skips the others too).
    """
    core = run.rstrip("=")
    if _DIGIT.search(core) is None:
        return None
    for skip in range(8):  # a run glued to a word starts off its 8-character grid
        part = core[skip:]
        part = part[: len(part) - len(part) % 8 if len(part) % 8 in (1, 3, 6) else len(part)]
        try:
            raw = base64.b32decode(part + "=" * (-len(part) % 8))
        except binascii.Error:
            continue
        decoded = raw.decode("latin-1")
        if len(decoded) >= 8 and _mostly_text(decoded):
            return decoded
    return None


def _candidate(run: str) -> str | None:
    """The part of a base64-looking run that may be base64 of text, if any.

    One encoding uses one alphabet: a run holding `-` or `_` and `+` or `/` is a word or a
    path (`Job/single-node-r1`), or a word glued to standard base64 (`ci_<base64>`), of
    which the part after the last `-` or `_` is kept. Hex (digests) and runs that do not
    look encoded (`_looks_encoded`: words, names, paths) are not decoded, unless padding
    completes a 4-character group (`NCCL_DEBUG=` is no base64).
    """
    if ("-" in run or "_" in run) and ("+" in run or "/" in run):
        run = run[max(run.rfind("-"), run.rfind("_")) + 1 :]
    if len(run) < MIN_BASE64 or _HEX.fullmatch(run):
        return None
    if run.endswith("=") and len(run) % 4 == 0:
        return run
    return run if _looks_encoded(run) else None


def _looks_encoded(run: str) -> bool:
    """What base64 of text (twelve bytes or more) holds in practice.

    Upper- and lower-case letters, and a digit or `+` or upper case in one character of
    four; words in camel case (`requiredDuringScheduling`) have fewer upper-case letters
    and no digit. Base64 of text in upper case and digits (an AWS key id) can have no
    lower-case letter: such a run is read when it has a digit and whole 4-character groups.
    """
    upper = len(_UPPER.findall(run))
    if upper == 0:
        return False  # names, paths
    if _LOWER.search(run) is None:  # CONSTANT_NAMES, or base64 of upper case and digits
        return len(run) % 4 == 0 and _DIGIT_OR_PLUS.search(run) is not None
    return _DIGIT_OR_PLUS.search(run) is not None or upper * 4 >= len(run)


def _mostly_text(decoded: str) -> bool:
    """Whether decoded bytes read as text (nine in ten printable): else it was no base64."""
    raw = decoded.encode("latin-1", "replace")
    return len(_TEXT_BYTES.findall(raw)) * 10 >= len(raw) * 9


def _decodings(text: str) -> Iterator[str]:
    """The ways `text` may read once decoded, one step deep."""
    visible = _INVISIBLE.sub("", text)
    if visible != text:
        yield visible
    if _PERCENT.search(visible):
        yield unquote(visible, errors="replace")
    for match in _HEX_TEXT.finditer(visible):
        yield bytes.fromhex(match.group()).decode("latin-1")
    for match in _BASE32.finditer(visible):
        decoded = _b32(match.group())
        if decoded is not None:
            yield decoded
    for match in _BASE64.finditer(visible):
        run = _candidate(match.group())
        if run is None:
            continue
        for skip in range(4):  # a run glued to a word starts off its 4-character grid
            decoded = _b64(run[skip:])
            if decoded is not None and len(decoded) >= 8 and _mostly_text(decoded):
                yield decoded
                break


def _views(text: str) -> Iterator[str]:
    """`text`, then what it reads as decoded (breadth first, bounded by MAX_*)."""
    yield text
    budget = MAX_DECODED
    level = [text]
    for _ in range(MAX_DEPTH):
        following: list[str] = []
        for parent in level:
            for view in _decodings(parent):
                budget -= len(view)
                if budget < 0:
                    return
                yield view
                following.append(view)
        if not following:
            return
        level = following


def _matches(view: str) -> Iterator[tuple[int, re.Match[str]]]:
    """Every secret found in one view: (its kind's index, the match)."""
    lowered = view.lower()
    has = lowered.__contains__
    if not any(map(has, _clues())):
        return
    for index, kind in enumerate(_kinds()):
        if any(map(has, kind.clues)) and all(map(has, kind.needs)):
            for match in kind.pattern.finditer(view):
                if kind.valid is None or kind.valid(match):
                    yield index, match


def _might_be_encoded(text: str) -> bool:
    """Whether `text` holds a run some decoding reads (`_decodings`)."""
    if _HEX_TEXT.search(text) or any(_DIGIT.search(run) for run in _BASE32.findall(text)):
        return True
    return _looks_obfuscated(text)


def _looks_obfuscated(text: str) -> bool:
    """Invisible characters, percent-encoding or a run that looks like base64 of text.

    What `shown` will not quote: hex and base32 runs are left to the secret search
    (`might_hold_secret`), or every made-up digest (`sha256:4c4c...`) would be masked.
    """
    if _INVISIBLE.search(text) or _PERCENT.search(text):
        return True
    for run in _BASE64.findall(text):
        # `_candidate` keeps only a run ending in padding or holding an upper-case letter
        # (`_looks_encoded`), and what it keeps of a run ends where the run ends: a run of
        # neither (a name, a path, a digest) is none, told here without a call.
        if run[-1] != "=" and run.lower() == run:
            continue
        if _candidate(run) is not None:
            return True
    return False


def has_clue(text: str) -> bool:
    """Whether a secret may be in `text`: a pattern's clue, or something to decode.

    Clues are plain ASCII words with no quote, backslash or whitespace, and the encodings
    searched for read the same in a JSON text of the strings as in the strings themselves.
    """
    return any(map(text.lower().__contains__, _clues())) or _might_be_encoded(text)


_OWN_CLUES = tuple(dict.fromkeys(clue for kind in _OWN_KINDS for clue in kind.clues))


def _suspect(text: str) -> bool:
    """Whether a message should not quote `text`.

    It holds a clue of nvcregen's own patterns, an encoded-looking run, or a secret any
    pattern finds.
    """
    if any(map(text.lower().__contains__, _OWN_CLUES)) or _looks_obfuscated(text):
        return True
    return might_hold_secret(text)


def find_secret(text: str) -> str | None:
    """What secret `text` holds (`URL_CREDENTIALS`, or words such as "a GitHub token").

    The text is searched as it is, then as it reads decoded (`_views`).
    """
    for view in _views(text):
        for index, _ in _matches(view):
            return _kinds()[index].what
    return None


def might_hold_secret(text: str) -> bool:
    """Whether any pattern matches anywhere in `text`, decoded or not."""
    return has_clue(text) and find_secret(text) is not None


def entry_secret(key: str, value: str) -> str | None:
    """A secret in a mapping entry read as one line (`aws_secret_access_key: <40>`)."""
    return find_secret(f"{key}{ENTRY_JOIN}{value}")


ENTRY_JOIN = ": "


def entry_clue(key: str, value: str) -> bool:
    """Whether the entry's line (`entry_secret`) has a clue across the join, with its needs.

    A clue inside `key` or `value` is `has_clue`'s to find; this is one that begins in the
    key and ends in the value (`kind:` of a kubeconfig held as the string of a key `kind`).
    It counts only with the rest of its pattern's needs in the line, or every object
    (`kind: TrainJob`) would need a closer look. Encoded runs never cross the join:
    neither `:` nor a space is in their alphabets.
    """
    for head, needs in _joined(key):
        if value.lower().startswith(head):
            line = f"{key}{ENTRY_JOIN}{value}".lower()
            if all(need in line for need in needs):
                return True
    return False


@functools.lru_cache(maxsize=4096)
def _joined(key: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """For a clue that may cross the join after `key`: what the value must begin with."""
    lowered = key.lower()
    found = []
    for kind in _kinds():
        for clue in kind.clues:
            # `shift`: how many of the clue's characters are the key's (negative: the
            # clue begins that far inside the join)
            for shift in range(1 - len(ENTRY_JOIN), len(clue)):
                left, rest = clue[: max(shift, 0)], clue[max(shift, 0) :]
                join = ENTRY_JOIN[max(-shift, 0) :]
                if not lowered.endswith(left):
                    continue
                if rest.startswith(join):
                    found.append((rest[len(join) :], kind.needs))
                elif join.startswith(rest):  # the clue ends inside the join
                    found.append(("", kind.needs))
    return tuple(found)


_WORD = re.compile(r"\S+")
_TOKEN_TAIL = re.compile(r"[A-Za-z0-9_+/=-]+")


def _tail_end(text: str, end: int) -> int:
    tail = _TOKEN_TAIL.match(text, end)
    return end if tail is None else tail.end()


def _decoded_secret(word: str) -> bool:
    """Whether `word` holds a secret that shows only once it is decoded."""
    if not has_clue(word):
        return False
    views = _views(word)
    next(views)  # the word as it is
    return any(next(_matches(view), None) is not None for view in views)


def _span(kind: _Kind, match: re.Match[str]) -> tuple[int, int]:
    return match.span() if kind.span is None else kind.span(match)


def redact(text: str) -> str:
    """`text` with every secret masked: a URL keeps its user name, nothing else is kept.

    A secret found once decoded masks the whole word (run of non-space) that holds it,
    first: masking a span the word's raw text matches too (base32 of a token can hold
    what reads as an AWS key id) would leave the rest of the encoded token.
    """
    if not might_hold_secret(text):
        return text
    text = _WORD.sub(lambda m: MASK if _decoded_secret(m.group()) else m.group(), text)
    kinds = _kinds()
    spans = sorted((*_span(kinds[index], m), index) for index, m in _matches(text))
    parts: list[str] = []
    done = 0
    for start, end, index in spans:
        if start < done:
            continue  # inside a secret already masked
        found = text[start:end]
        parts.append(text[done:start])
        if kinds[index].what == URL_CREDENTIALS:
            user_ends = found.index(":", found.index("://") + 3)
            parts.append(f"{found[: user_ends + 1]}{MASK}@")
            done = end
        else:
            parts.append(MASK)
            done = _tail_end(text, end)  # the rest of the token too
    parts.append(text[done:])
    plain = "".join(parts)
    return _WORD.sub(lambda m: MASK if might_hold_secret(m.group()) else m.group(), plain)


def redact_data(data: object) -> object:
    """JSON-like data with every secret in its strings, keys included, masked (`redact`).

    What a cluster answers (a condition's message, a failed node's reason) is written to
    an archive's summary.json and verdicts.json, which are published: it is masked there.
    """
    if isinstance(data, str):
        return redact(data)
    if isinstance(data, dict):
        return {redact(k) if isinstance(k, str) else k: redact_data(v) for k, v in data.items()}
    if isinstance(data, list | tuple):
        return [redact_data(item) for item in data]
    return data


def redact_pointer(path: str) -> str:
    """A JSON pointer with any secret in its segments masked (`~1` is a `/` there)."""
    segments = path.split("/")
    decoded = [segment.replace("~1", "/").replace("~0", "~") for segment in segments]
    if not might_hold_secret("\n".join(decoded)):
        return path
    return "/".join(
        MASK if might_hold_secret(d) else s for s, d in zip(segments, decoded, strict=True)
    )


# What a message may quote from an input as it is: short, printable (no control, format
# or line-break character), without quotes or backslashes (so it reads the same quoted),
# and no secret.
MAX_SHOWN = 160
_QUOTES = re.compile("[\"'`\\\\]")


def shown(value: object, quote: str = '"') -> str:
    """How a message quotes a value from an input: whole when known safe, else masked.

    A string is shown whole (between `quote`s) only if it is at most `MAX_SHOWN`
    printable characters without quotes or backslashes, with no clue of nvcregen's own
    patterns, nothing that looks encoded (a random-looking run such as a key's body is
    masked too) and no match of gitleaks' rules (whose keywords, such as `ey` or `s.`,
    are in too many words to mask on sight); otherwise its length is said and its text
    masked, so no message echoes a value it refuses. Numbers, booleans and null read as
    JSON writes them; a number of more digits is not shown.
    """
    if isinstance(value, str):
        plain = value.isprintable() and not _QUOTES.search(value)
        if len(value) <= MAX_SHOWN and plain and not _suspect(value):
            return f"{quote}{value}{quote}"
        return f"{quote}{MASK}{quote} (a string of {len(value)} characters, not shown)"
    if isinstance(value, bool | int | float) or value is None:
        text = json.dumps(value) if not isinstance(value, int) or _few_digits(value) else ""
        return text if text and len(text) <= MAX_SHOWN else "a number too long to show"
    return "a list" if isinstance(value, list) else "a mapping"


_TOO_MANY_DIGITS = 10**MAX_SHOWN


def _few_digits(number: int) -> bool:
    """Whether an int has at most `MAX_SHOWN` digits (told without converting it to text)."""
    return bool(abs(number) < _TOO_MANY_DIGITS)
