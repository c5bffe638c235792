"""Read `dcgmi diag` results: the JSON of `-j` (DCGM 3.x and 4.x) and the text tables.

DCGM 3.x JSON sits under `"DCGM GPU Diagnostic"` with `"version"` inside it and results
keyed by `gpu_ids` (a string `"0,1,2"` or a bare number) or `gpu_id`; DCGM 4.x puts it
under `"DCGM Diagnostic"` with results keyed by `entity_id`, a `test_summary` per test and
the version in `metadata`. Log noise before the JSON, `null` entries between tests and
mixed-case statuses are all allowed. JSON that does not decode (an excerpt cut mid-key,
an elided `{"..."}`) is salvaged test by test and the run marked truncated. Text tables are
read by `dcgmdiag_text.py`.

When DCGM gives up before it runs a test, `dcgmi diag` prints no table, only its reason:

```
Error: Unable to complete diagnostic for entities 0,1,2,3. Return: (-30) : DCGM GPU ...
Error: Cannot load plugins. Unable to change to the plugin dir '/usr/libexec/...' ...
```

Such an output is a failed run with no tests and DCGM's own lines as its errors.
"""

from __future__ import annotations

import bisect
import json
import re

from nvcregen.ingest.dcgmdiag_results import (
    find_level,
    find_level_at,
    result_word,
    run_status,
    unique,
    worst,
)
from nvcregen.ingest.dcgmdiag_text import looks_like_table, parse_dcgm_text
from nvcregen.ingest.limits import MAX_DIGITS, TOO_LONG, InputLimitError, bounded_int, matched
from nvcregen.ingest.limits import raw_decode as bounded_decode
from nvcregen.ingest.lines import strip_prefix, without_timestamps
from nvcregen.ingest.models import DcgmGpuResult, DcgmRun, DcgmTest, IngestFormatError

_ROOT_KEYS = ("DCGM Diagnostic", "DCGM GPU Diagnostic")
_ROOT = re.compile(r'"DCGM (?:GPU )?Diagnostic"\s*:')
_OBJECT_START = re.compile(r"^[ \t]*\{", re.MULTILINE)
_CATEGORY = re.compile(r'"category"\s*:\s*"(?P<value>[^"\\]*)"')
_NAME = re.compile(r'"name"\s*:\s*"(?P<value>[^"\\]*)"')
_VERSION = re.compile(r'"version"\s*:\s*"(?P<value>[^"\\]*)"')
_RUNTIME_ERROR = re.compile(r"^Error: (?P<message>\S.*)$")
_DCGM_WORDS = re.compile(
    r"Return: \(-?\d+\)|diagnostic|plugin|host ?engine|NVVS|DCGM", re.IGNORECASE
)
MAX_ERROR_LINES = 50


def parse_dcgm(text: str, source: str) -> list[DcgmRun]:
    """Read every `dcgmi diag` result in a file.

    Args:
        text: The captured output (JSON or text table, log noise allowed).
        source: The name to record as each run's `file`.

    Returns:
        The runs in file order.

    Raises:
        IngestFormatError: The text holds neither DCGM diagnostic JSON nor a result table;
            an `InputLimitError` when its JSON is nested too deeply or holds a number
            too long to read (`limits.py`).

    """
    text = without_timestamps(text)
    if _ROOT.search(text) or '"test_categories"' in text:
        return _json_runs(text, source)
    if looks_like_table(text):
        runs = parse_dcgm_text(text, source)
        if runs:
            return runs
    if (run := _runtime_error(text, source)) is not None:
        return [run]
    raise IngestFormatError("not dcgmi diag output: no diagnostic JSON and no result table")


def _runtime_error(text: str, source: str) -> DcgmRun | None:
    """A failed run from DCGM's `Error: ...` lines, when it printed no table.

    A line that continues an error (a path wrapped onto the next line) is joined to it.
    At least one line must be DCGM's (a return code, diagnostics, plugins, the host
    engine), so a stray `Error:` of another program is not taken for DCGM's.
    """
    errors: list[str] = []
    for whole in text.splitlines():
        raw = matched(whole)
        line = raw.strip()  # `Error: ` would read as a pdsh host label
        if not line.startswith("Error: "):
            line = strip_prefix(raw).strip()
        if match := _RUNTIME_ERROR.match(line):
            errors.append(match["message"])
        elif errors and line.startswith(("'", "/")):
            errors[-1] += " " + line
        if len(errors) >= MAX_ERROR_LINES:
            break
    if not any(_DCGM_WORDS.search(error) for error in errors):
        return None
    return DcgmRun(
        file=source,
        format="text",
        status="failed",
        tests=(),
        level=find_level(text),
        errors=tuple(f"DCGM runtime error: {error}" for error in unique(errors)),
    )


class _Budget:
    """How many characters the decoder may still scan: a few times the text, then stop.

    Every object start is tried, and a failed try scans as far as its error; without a
    bound, thousands of unclosed objects make the search quadratic in the text's length.
    """

    def __init__(self, text: str) -> None:
        self.left = 8 * len(text) + (1 << 20)

    def spend(self, scanned: int) -> bool:
        """Count a scan; False once the budget is spent."""
        self.left -= max(scanned, 1)
        return self.left > 0


def _json_runs(text: str, source: str) -> list[DcgmRun]:
    decoder = json.JSONDecoder()
    budget = _Budget(text)
    runs: list[DcgmRun] = []
    end = 0
    level = find_level_at(text)
    for start in _OBJECT_START.finditer(text):
        if start.end() <= end:
            continue
        try:
            doc, end = bounded_decode(decoder, text, start.end() - 1)
        except json.JSONDecodeError as exc:
            if budget.spend(exc.pos - start.end()):
                continue
            break
        if isinstance(doc, dict) and any(key in doc for key in _ROOT_KEYS):
            found = level[1] if level is not None and level[0] <= end else None
            runs.append(_run_from_json(doc, found, source))
        if not budget.spend(end - start.end()):
            break
    return runs or [_salvage(text, source, budget)]


def _run_from_json(doc: dict[str, object], level: int | None, source: str) -> DcgmRun:
    body = _dict(doc.get("DCGM Diagnostic")) or _dict(doc.get("DCGM GPU Diagnostic"))
    tests: list[DcgmTest] = []
    for category in _list(body.get("test_categories")):
        cat = _dict(category)
        name = str(cat.get("category", ""))
        tests += [_test(_dict(t), name) for t in _list(cat.get("tests")) if _dict(t)]
    version = body.get("version") or _dict(doc.get("metadata")).get("version")
    error = body.get("runtime_error")
    errors = (str(error),) if error else ()
    return DcgmRun(
        file=source,
        format="json",
        status=run_status(tests, runtime_error=bool(error), truncated=False),
        tests=tuple(tests),
        dcgm_version=str(version) if version else None,
        level=level,
        errors=errors,
    )


def _test(obj: dict[str, object], category: str) -> DcgmTest:
    gpus: list[DcgmGpuResult] = []
    errors: list[str] = []
    info: list[str] = []
    words: list[str] = []
    for item in _list(obj.get("results")):
        result = _dict(item)
        if not result:
            continue  # DCGM 3.x prints null between entries
        word = result_word(result.get("status"))
        notes = _messages(result.get("info"))
        words.append(word)
        errors += _messages(result.get("warnings")) + _messages(result.get("warning"))
        info += notes
        gpus += [DcgmGpuResult(gpu, word, notes) for gpu in _gpu_ids(result)]
    summary = _dict(obj.get("test_summary")).get("status")
    return DcgmTest(
        name=str(obj.get("name", "")),
        category=category,
        result=result_word(summary) if summary else worst(words),
        gpus=tuple(gpus),
        errors=unique(errors),
        info=unique(info),
    )


def _gpu_ids(result: dict[str, object]) -> list[int]:
    """GPU ids of a result: `gpu_ids` ("0,1,2" or 0), `gpu_id` ("0"), or a GPU `entity_id`."""
    group = result.get("entity_group")
    if group is not None and str(group).upper() != "GPU":
        return []
    raw = next((result[key] for key in ("gpu_ids", "gpu_id", "entity_id") if key in result), None)
    if isinstance(raw, bool) or raw is None:
        return []
    if isinstance(raw, int):
        if abs(raw) >= 10**MAX_DIGITS:
            raise InputLimitError(TOO_LONG, f"a GPU id has more than {MAX_DIGITS} digits")
        return [raw]
    return [bounded_int(part, "a GPU id") for part in re.findall(r"\d+", str(raw))]


def _messages(value: object) -> tuple[str, ...]:
    """Message strings of a `warnings`/`info` value: a string, or a list of strings/objects."""
    items = value if isinstance(value, list) else [value]
    found: list[str] = []
    for item in items:
        if isinstance(item, str) and item.strip():
            found.append(item.strip())
        elif isinstance(item, dict):
            text = item.get("warning") or item.get("message") or item.get("info")
            if isinstance(text, str) and text.strip():
                found.append(text.strip())
    return tuple(found)


def _salvage(text: str, source: str, budget: _Budget) -> DcgmRun:
    """Read what a cut or hand-edited JSON result still holds, test by test."""
    decoder = json.JSONDecoder()
    tests: list[DcgmTest] = []
    found = list(_CATEGORY.finditer(text))
    categories = [m.start() for m in found]
    braces = [m.start() for m in re.finditer(r"\{", text)]
    for match in _NAME.finditer(text):
        before = bisect.bisect_left(braces, match.start())
        if not before:
            continue
        brace = braces[before - 1]
        try:
            obj, end = bounded_decode(decoder, text, brace)
        except json.JSONDecodeError as exc:
            end = exc.pos
            obj = None
        at = bisect.bisect_left(categories, match.start())
        category = found[at - 1]["value"] if at else ""
        if isinstance(obj, dict) and obj.get("name") == match["value"]:
            tests.append(_test(obj, category))
        if not budget.spend(end - brace):
            break
    version = _VERSION.search(text)
    return DcgmRun(
        file=source,
        format="json",
        status=run_status(tests, runtime_error=False, truncated=True),
        tests=tuple(tests),
        dcgm_version=version["value"] if version else None,
        level=find_level(text),
        errors=("the JSON does not decode (cut short or edited); read test by test",),
    )


def _dict(value: object) -> dict[str, object]:
    return value if isinstance(value, dict) else {}


def _list(value: object) -> list[object]:
    return value if isinstance(value, list) else []
