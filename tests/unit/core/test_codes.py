"""The NVC code registry: complete, each code reported somewhere, documented, and the
generated `docs/codes.md` up to date (issue 35)."""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import pytest

from nvcregen.core import codes
from nvcregen.core.codes import REGISTRY, Code, register
from nvcregen.kindapi.registry import load_codes
from tools.codes import render

KIND_CODES = load_codes()  # each kind's codes module, its codes registered with the core's

ROOT = Path(__file__).resolve().parents[3]
PACKAGE = ROOT / "nvcregen"
REGISTRY_FILE = PACKAGE / "core" / "codes.py"
ALONE = re.compile(r"NVC[0-9]{3}")
LEADING = re.compile(r"(NVC[0-9]{3}): ")
MENTION = re.compile(r"\bNVC[0-9]{3}\b")


def reported(source: str) -> set[str]:
    """The codes a module reports: a string that is a code, a message that opens with one
    (`f"NVC824: ..."`), or a registry entry (`codes.NVC309`)."""
    found: set[str] = set()
    for node in ast.walk(parsed(source)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if ALONE.fullmatch(node.value):
                found.add(node.value)
        elif isinstance(node, ast.JoinedStr) and (code := _leading_code(node)):
            found.add(code)
        elif isinstance(node, ast.Attribute) and _is_registry_entry(node):
            found.add(node.attr)
    return found


def _is_registry_entry(node: ast.Attribute) -> bool:
    return bool(ALONE.fullmatch(node.attr)) and ast.unparse(node.value) == "codes"


@functools.cache
def parsed(source: str) -> ast.Module:
    """A module's tree, parsed once for all the scans below."""
    return ast.parse(source)


@functools.cache
def package_sources() -> dict[str, str]:
    return {
        p.relative_to(ROOT).as_posix(): p.read_text(encoding="utf-8")
        for p in sorted(PACKAGE.rglob("*.py"))
        if p != REGISTRY_FILE
    }


def documentation() -> dict[str, str]:
    docs = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    return {p.relative_to(ROOT).as_posix(): p.read_text(encoding="utf-8") for p in docs}


def test_the_scan_tells_a_string_from_a_registry_entry() -> None:
    source = (
        'a = "NVC111"\nb = codes.NVC222.code\nc = f"NVC333: {x}"\n"""NVC444 in a docstring."""\n'
    )
    assert literals(source) == {"NVC111", "NVC333"}
    assert reported(source) == {"NVC111", "NVC222", "NVC333"}


def test_the_scan_finds_each_way_a_code_is_reported() -> None:
    source = '''
X = "NVC111"
f(code="NVC222")
message = f"NVC333: {where} failed"
codes.NVC444.code
"""A docstring naming NVC555 reports nothing."""
other = f"see NVC666 {x}"
'''
    assert reported(source) == {"NVC111", "NVC222", "NVC333", "NVC444"}


@pytest.mark.slow
def test_every_code_reported_in_the_package_is_registered() -> None:
    missing = {
        f"{path}: {code}"
        for path, source in package_sources().items()
        for code in reported(source)
        if code not in REGISTRY
    }
    assert not missing, sorted(missing)


def literals(source: str) -> set[str]:
    """The codes a module writes as strings (`"NVC309"`, `f"NVC824: ..."`), not registered."""
    found: set[str] = set()
    for node in ast.walk(parsed(source)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if ALONE.fullmatch(node.value):
                found.add(node.value)
        elif isinstance(node, ast.JoinedStr) and (code := _leading_code(node)):
            found.add(code)
    return found


def _leading_code(node: ast.JoinedStr) -> str | None:
    first = node.values[0] if node.values else None
    text = first.value if isinstance(first, ast.Constant) else None
    found = LEADING.match(text) if isinstance(text, str) else None
    return found.group(1) if found else None


@pytest.mark.slow
def test_no_module_writes_a_code_as_a_string() -> None:
    written = {
        path: sorted(found)
        for path, source in package_sources().items()
        if (found := literals(source))
    }
    assert not written


def test_every_code_the_package_names_is_registered() -> None:
    """A docstring or comment naming a code names a registered one."""
    unknown = {
        f"{path}: {code}"
        for path, source in package_sources().items()
        for code in MENTION.findall(source)
        if code not in REGISTRY
    }
    assert not unknown, sorted(unknown)


def test_every_registered_code_is_reported_or_reserved_with_a_reason() -> None:
    used = set().union(*(reported(s) for s in package_sources().values()))
    idle = [c.code for c in REGISTRY.values() if c.code not in used and not c.reserved]
    assert not idle
    stale = [c.code for c in REGISTRY.values() if c.code in used and c.reserved]
    assert not stale


def test_every_registered_code_is_documented() -> None:
    """Each code's number is in README.md or docs/, and in the document its entry names."""
    docs = documentation()
    everywhere = "\n".join(docs.values())
    undocumented = [
        c.code for c in REGISTRY.values() if not re.search(rf"\b{c.code}\b", everywhere)
    ]
    assert not undocumented
    wrong = [
        f"{c.code}: {c.doc}"
        for c in REGISTRY.values()
        if c.doc and not re.search(rf"\b{c.code}\b", docs.get(c.doc, ""))
    ]
    assert not wrong


def test_no_document_names_an_unregistered_code() -> None:
    unknown = {
        f"{path}: {code}"
        for path, text in documentation().items()
        for code in MENTION.findall(text)
        if code not in REGISTRY
    }
    assert not unknown, sorted(unknown)


def test_docs_codes_md_is_the_generated_table() -> None:
    committed = (ROOT / "docs" / "codes.md").read_text(encoding="utf-8")
    assert committed == render(), "regenerate: python -m tools.codes > docs/codes.md"


def test_the_table_lists_every_code_once_with_its_title() -> None:
    rows = [line for line in render().splitlines() if line.startswith("| NVC")]
    assert [row.split(" | ")[0].removeprefix("| ") for row in rows] == list(REGISTRY)
    assert "| NVC309 | error | a malformed value (duration, size, comparison) |" in render()
    assert "| NVC314 |  | an image pinned by tag only |" in render()  # --strict decides


def test_the_table_links_each_document_from_docs() -> None:
    table = render()
    assert "[docs/design/0014-node-health.md](design/0014-node-health.md)" in table
    assert "[README.md](../README.md)" in table


def test_the_registry_is_in_ascending_order_and_every_title_is_short() -> None:
    numbers = [c.number for c in REGISTRY.values()]
    assert numbers == sorted(numbers)
    assert all(0 < len(c.title) <= 80 and c.title == c.title.strip() for c in REGISTRY.values())


def test_module_constants_are_the_registry_entries() -> None:
    """Each code is the constant of one module: the core's registry or one kind's codes."""
    for code, entry in REGISTRY.items():
        holders = [m for m in (codes, *KIND_CODES) if getattr(m, code, None) is entry]
        assert len(holders) == 1, code


def test_a_kinds_codes_are_registered_in_order_and_documented() -> None:
    """The burn-in kind's codes come from its package, and sit between their neighbours."""
    from nvcregen.kinds.burnin import codes as burnin

    assert burnin in KIND_CODES and not hasattr(codes, "NVC765")
    assert REGISTRY["NVC765"] is burnin.NVC765
    order = list(REGISTRY)
    assert order[order.index("NVC764") + 1 : order.index("NVC770")] == [
        "NVC765", "NVC766", "NVC767", "NVC768"
    ]  # fmt: skip
    assert "| NVC768 |  | a GPU under its model's burn-in floor |" in render()


def test_registering_keeps_the_registry_ascending() -> None:
    registry: dict[str, Code] = {}
    for number in (300, 100, 500, 200):
        register(registry, Code(number, f"code {number}"))
    assert list(registry) == ["NVC100", "NVC200", "NVC300", "NVC500"]


@pytest.mark.parametrize(
    ("number", "printed", "family"),
    [
        (1, "NVC001", "the output itself"),
        (99, "NVC099", "the output itself"),
        (100, "NVC100", "YAML"),
        (199, "NVC199", "YAML"),
        (200, "NVC200", "schema"),
        (799, "NVC799", "results read back"),
        (800, "NVC800", "node health"),
        (899, "NVC899", "node health"),
    ],
)
def test_a_code_prints_three_digits_and_its_family(number: int, printed: str, family: str) -> None:
    code = Code(number, "t")
    assert (code.code, str(code), code.family) == (printed, printed, family)


def test_a_code_registered_twice_is_refused() -> None:
    registry: dict[str, Code] = {}
    first = register(registry, Code(309, "first"))
    assert registry == {"NVC309": first}
    with pytest.raises(ValueError, match="NVC309 is registered twice"):
        register(registry, Code(309, "second"))
    assert registry == {"NVC309": first}


@pytest.mark.parametrize("number", [0, 900, -1])
def test_a_number_outside_every_family_is_refused(number: int) -> None:
    with pytest.raises(ValueError, match="no family holds this number"):
        register({}, Code(number, "t"))


@pytest.mark.parametrize("number", [1, 899])
def test_the_first_and_last_numbers_register(number: int) -> None:
    registry: dict[str, Code] = {}
    register(registry, Code(number, "t"))
    assert list(registry) == [f"NVC{number:03d}"]


def test_lookup_finds_a_registered_code_only() -> None:
    assert codes.lookup("NVC309") is codes.NVC309
    assert codes.lookup("NVC998") is None


def severities(source: str) -> dict[str, set[str]]:
    """Per code, the severities the calls or tuples reporting it name (`Severity.WARNING`)."""
    found: dict[str, set[str]] = {}
    for node in ast.walk(parsed(source)):
        if isinstance(node, ast.Call):
            parts = [*node.args, *(k.value for k in node.keywords)]
        elif isinstance(node, ast.Tuple):
            parts = list(node.elts)
        else:
            continue
        named = {
            p.attr.lower()
            for p in parts
            if isinstance(p, ast.Attribute) and ast.unparse(p.value) == "Severity"
        }
        for part in parts:
            code = ast.unparse(part)
            if named and re.fullmatch(r"codes\.NVC[0-9]{3}\.code", code):
                found.setdefault(code.split(".")[1], set()).update(named)
    return found


def test_the_severity_scan_reads_the_calls() -> None:
    source = "f(s, Severity.WARNING, codes.NVC109.code, m)\ng(codes.NVC110.code)\n"
    source += "h(codes.NVC314.code, severity=Severity.ERROR if strict else Severity.WARNING)\n"
    source += "problems = [(where, Severity.ERROR, codes.NVC330.code, message)]\n"
    assert severities(source) == {"NVC109": {"warning"}, "NVC330": {"error"}}


def test_a_fixed_severity_is_the_one_every_reporting_call_names() -> None:
    named: dict[str, set[str]] = {}
    for source in package_sources().values():
        for code, found in severities(source).items():
            named.setdefault(code, set()).update(found)
    wrong = {
        code: sorted(found)
        for code, found in named.items()
        if REGISTRY[code].severity and found != {REGISTRY[code].severity}
    }
    assert not wrong
    assert named["NVC109"] == {"warning"} and REGISTRY["NVC109"].severity == "warning"
