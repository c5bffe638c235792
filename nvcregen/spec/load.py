"""Load a site YAML file into a Document with positions, or diagnostics saying why not."""

from __future__ import annotations

import bisect
import dataclasses
import re
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.error import MarkedYAMLError

from nvcregen.core import codes
from nvcregen.core.errors import Diagnostic, Severity, Span, has_errors
from nvcregen.spec._events import Builder
from nvcregen.spec.bounded import MAX_SITE_BYTES, read_limited
from nvcregen.spec.positions import LINE_BREAK, Document
from nvcregen.spec.secrets import secret_diagnostics

MAX_BYTES = MAX_SITE_BYTES
MAX_PER_CODE = 20  # diagnostics of one code shown before the rest are summarised

_BOM = b"\xef\xbb\xbf"
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
# Characters YAML forbids, plus NEL, LS, PS (ruamel splits tokens on them but does not
# count them as lines) and a BOM after the start (ruamel gives it no column): with those,
# positions would drift from what editors show.
_BAD_CHAR = re.compile(
    "[^\t\n\r\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]"
)
_LEADING_WS = re.compile(r"[ \t]*")
_TOKEN_WORDS = {
    "<block mapping start>": "a new mapping",
    "<block sequence start>": "a new sequence",
    "<block end>": "the end of the indented block",
    "<scalar>": "a value",
    "<stream end>": "the end of the file",
    "<document start>": "'---'",
    "<alias>": "an alias",
    "<anchor>": "an anchor",
    "<tag>": "a tag",
}
_SYNTAX_HINT = "check indentation and quoting near here"
_TAB_HINT = "YAML indentation must use spaces"


def load_file(file: Path, display: str) -> tuple[Document | None, list[Diagnostic]]:
    """Read and load one site file.

    Args:
        file: The file to read.
        display: The name diagnostics and spans use for it.

    Returns:
        The document (None when there are errors) and every diagnostic found;
        an unreadable file is reported as NVC100.

    """
    raw, diags = read_site_bytes(file, display)
    return (None, diags) if raw is None else load_document(raw, display)


def read_site_bytes(file: Path, display: str) -> tuple[bytes | None, list[Diagnostic]]:
    """Read a site file's bytes; NVC110 if larger than `MAX_BYTES` (told before reading)."""
    try:
        raw = read_limited(file, MAX_BYTES)
        return (raw, []) if raw is not None else (None, [_too_large(display, MAX_BYTES)])
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        msg = f"cannot read the file: {reason}"
        hint = "check that the path names a readable file"
        return None, [Diagnostic(Span(display), Severity.ERROR, codes.NVC100.code, msg, hint=hint)]


def load_document(
    raw: bytes, path: str, *, max_bytes: int = MAX_BYTES
) -> tuple[Document | None, list[Diagnostic]]:
    """Load the bytes of one site file.

    Plain scalars resolve with the YAML 1.2 core schema; quoted ones are strings.
    Never raises for any input bytes.

    Args:
        raw: The file content.
        path: The name diagnostics and spans use for the file.
        max_bytes: The largest file read (a site's; an inventory's bound is its own).

    Returns:
        The document, or None when any error was found, and all diagnostics
        (errors and warnings) sorted by position.

    """
    if len(raw) > max_bytes:
        return None, [_too_large(path, max_bytes)]
    text, problems = _decode(raw, path)
    if problems:
        return None, _capped(problems)
    starts = [0, *(m.end() for m in LINE_BREAK.finditer(text))]
    long_comments = _long_comments(path, text, starts)
    if long_comments:
        return None, _capped(long_comments)
    tabs = _indent_tabs(text, starts)
    builder = Builder(path, text, tabs)
    completed, syntax = _parse(builder)
    diags = builder.diags
    flagged = {i for i in tabs if i not in builder.tolerated}
    diags += [_tab_error(path, starts, i) for i in sorted(flagged)]
    if syntax is not None and _index(starts, syntax.span) not in flagged:
        diags.append(syntax)  # else the TAB already reported is the cause
    if completed and not builder.has_root:
        msg = "the file is empty or holds only comments"
        diags.append(_error(Span(path), codes.NVC106.code, msg, "write the site as a YAML mapping"))
    diags = _capped(diags)
    if has_errors(diags) or not isinstance(builder.root, dict):
        return None, diags
    document = Document(
        path=path,
        text=text,
        data=builder.root,
        spans=MappingProxyType(builder.spans),
        key_spans=MappingProxyType(builder.key_spans),
        raw=MappingProxyType(builder.raw),
    )
    secrets = secret_diagnostics(document)  # NVC113/NVC114: nothing secret reaches out/
    return (None, _capped(diags + secrets)) if secrets else (document, diags)


# ruamel gathers a comment one character at a time into a string (`scan_to_next_token`),
# which costs time quadratic in the comment's length: an 800 KB comment took 9 s to load.
# No site needs a line this long holding a `#`; node lists in flow style have none.
MAX_COMMENT_LINE = 64 * 1024


def _long_comments(path: str, text: str, starts: list[int]) -> list[Diagnostic]:
    """NVC119: lines over MAX_COMMENT_LINE characters that hold a `#` (a comment, most likely)."""
    found = []
    ends = [*starts[1:], len(text)]
    for number, (start, end) in enumerate(zip(starts, ends, strict=True), 1):
        if end - start <= MAX_COMMENT_LINE:  # quick: the line with its break fits
            continue
        line = text[start:end].rstrip("\r\n\x85\u2028\u2029")
        if len(line) > MAX_COMMENT_LINE and "#" in line:
            column = line.index("#") + 1
            msg = f"line {number} holds a `#` and is {len(line):,} characters long"
            hint = f"shorten the comment: a line holding a `#` may be {MAX_COMMENT_LINE:,} long"
            found.append(_error(Span(path, number, column), codes.NVC119.code, msg, hint))
    return found


def _too_large(path: str, max_bytes: int) -> Diagnostic:
    msg = f"the file is larger than {max_bytes // 1024} KiB"
    hint = "a site file should be small; split it or check that this is the right file"
    return _error(Span(path), codes.NVC110.code, msg, hint)


def _error(span: Span, code: str, message: str, hint: str) -> Diagnostic:
    return Diagnostic(span, Severity.ERROR, code, message, hint=hint)


def _where(starts: list[int], index: int) -> tuple[int, int]:
    """Return the 1-based line and column of a character index, given line start indexes."""
    line = bisect.bisect_right(starts, index)
    return line, index - starts[line - 1] + 1


def _decode(raw: bytes, path: str) -> tuple[str, list[Diagnostic]]:
    """Decode UTF-8 (dropping a BOM); report undecodable bytes and disallowed characters."""
    if raw.startswith(_UTF16_BOMS):
        msg = "the file is UTF-16 encoded, not UTF-8"
        return "", [_error(Span(path), codes.NVC101.code, msg, "save the file as UTF-8")]
    raw = raw.removeprefix(_BOM)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        prefix = raw[: exc.start].decode("utf-8")
        starts = [0, *(m.end() for m in LINE_BREAK.finditer(prefix))]
        line, column = _where(starts, len(prefix))
        msg = f"the file is not valid UTF-8: byte 0x{raw[exc.start]:02x} cannot be decoded"
        return "", [
            _error(Span(path, line, column), codes.NVC101.code, msg, "save the file as UTF-8")
        ]
    problems: list[Diagnostic] = []
    starts = [0, *(m.end() for m in LINE_BREAK.finditer(text))]
    for match in _BAD_CHAR.finditer(text):
        line, column = _where(starts, match.start())
        code = ord(match.group())
        msg = f"character U+{code:04X} is not allowed in a site file"
        hint = f'remove it, or write it as "\\u{code:04X}" inside a double-quoted string'
        if code == 0:
            hint = "remove it; if the file is UTF-16 or binary, save it as UTF-8 text"
        problems.append(_error(Span(path, line, column), codes.NVC101.code, msg, hint))
        if len(problems) > MAX_PER_CODE:
            break  # enough: _capped() keeps MAX_PER_CODE and says there are more
    return text, problems


def _indent_tabs(text: str, starts: list[int]) -> list[int]:
    """Return the index of the first TAB in the leading whitespace of each line."""
    tabs = []
    for start in starts:
        leading = _LEADING_WS.match(text, start)
        offset = leading.group().find("\t") if leading else -1
        if offset >= 0:
            tabs.append(start + offset)
    return tabs


def _tab_error(path: str, starts: list[int], index: int) -> Diagnostic:
    line, column = _where(starts, index)
    msg = "a TAB character is used for indentation"
    return _error(Span(path, line, column, column + 1), codes.NVC103.code, msg, _TAB_HINT)


def _parse(builder: Builder) -> tuple[bool, Diagnostic | None]:
    """Feed parser events to the builder; return (parsed to the end, syntax error)."""
    events = YAML(typ="rt").parse(builder.text)
    while True:
        try:
            event = next(events)
        except StopIteration:
            return True, None
        except MarkedYAMLError as exc:
            return False, _syntax_error(builder, exc)
        except Exception:  # ruamel may fail in other ways on broken input
            return False, _syntax_error(builder, None)
        if not builder.feed(event):
            events.close()
            return False, None


def _syntax_error(builder: Builder, exc: MarkedYAMLError | None) -> Diagnostic:
    """Turn a ruamel error into NVC102 at its problem mark."""
    problem: Any = exc and (exc.problem or exc.context)
    mark: Any = (exc and (exc.problem_mark or exc.context_mark)) or builder.last
    span = Span(builder.path, mark.line + 1, mark.column + 1) if mark else Span(builder.path)
    text = _clean(str(problem or "the YAML cannot be parsed"))
    notes: tuple[str, ...] = ()
    if exc and exc.context and exc.problem and exc.context_mark:
        where = f"line {exc.context_mark.line + 1}, column {exc.context_mark.column + 1}"
        notes = (f"{' '.join(str(exc.context).split())} (at {where})",)
    index = mark.index if mark else -1
    tab = 0 <= index < len(builder.text) and builder.text[index] == "\t"
    hint = "use spaces instead of TAB characters" if tab else _SYNTAX_HINT
    msg = f"YAML syntax error: {text}"
    return Diagnostic(span, Severity.ERROR, codes.NVC102.code, msg, hint=hint, notes=notes)


def _clean(problem: str) -> str:
    """Make a ruamel problem text one line of plain words."""
    text = " ".join(problem.split())
    text = re.sub(r"\('([^']*)',\)", r"'\1'", text)  # ('<x>',) -> '<x>'
    text = text.replace("character '\\t'", "a TAB character").replace("'\\t'", "a TAB character")
    text = text.replace("'\\x00'", "the end of the file")  # ruamel's end-of-input sentinel
    for token, words in _TOKEN_WORDS.items():
        text = text.replace(f"'{token}'", words).replace(token, words)
    return text


def _index(starts: list[int], span: Span) -> int:
    """Return the character index of a span's start (-1 when past the last line)."""
    if not 1 <= span.line <= len(starts):
        return -1
    return starts[span.line - 1] + span.column - 1


def _capped(diags: list[Diagnostic]) -> list[Diagnostic]:
    """Sort diagnostics and keep MAX_PER_CODE of each code, summarising the rest."""
    counts: dict[str, int] = {}
    kept: list[Diagnostic] = []
    first_hidden: dict[str, Diagnostic] = {}
    for diag in sorted(diags, key=Diagnostic.sort_key):
        counts[diag.code] = counts.get(diag.code, 0) + 1
        if counts[diag.code] <= MAX_PER_CODE:
            kept.append(diag)
        else:
            first_hidden.setdefault(diag.code, diag)
    for code, diag in first_hidden.items():
        msg = f"further {code} problems from here on are not shown"
        kept.append(dataclasses.replace(diag, message=msg, path="", notes=()))
    return sorted(kept, key=Diagnostic.sort_key)
