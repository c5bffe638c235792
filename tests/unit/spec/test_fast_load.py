"""`parse_fast`: libyaml without aliases, and a quicker path for bytes that cannot hold one."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from nvcregen.spec import fast
from nvcregen.spec.fast import AliasError, parse_fast

DOCUMENTS = [
    b"a: 1\nb: [x, y]\nwhen: 2026-01-02\n",
    b"glob: '*.yaml'\nscript: |\n  echo $(( 2 * 3 ))\n",  # a `*` that is no alias
    b"base: &b {x: 1}\nother: {y: 2}\n",  # an anchor used once
    b"<<: {x: 1}\ny: 2\n",  # a merge key without an alias
]


@pytest.mark.parametrize("raw", DOCUMENTS)
def test_both_loaders_read_the_same_data(raw: bytes) -> None:
    assert parse_fast(raw) == yaml.load(raw, Loader=fast.LOADER)


def test_a_plain_date_stays_text_on_the_quick_path() -> None:
    assert b"*" not in DOCUMENTS[0]
    assert parse_fast(DOCUMENTS[0])["when"] == "2026-01-02"


def test_a_star_that_is_no_alias_reads_as_text() -> None:
    """A `*` sends the text to the aliasing loader, which the comparison of both loaders
    then calls twice: what it reads is stated here."""
    assert parse_fast(DOCUMENTS[1]) == {"glob": "*.yaml", "script": "echo $(( 2 * 3 ))\n"}


@pytest.mark.parametrize(
    "raw",
    [b"a: &x 1\nb: *x\n", b"a: &x {k: 1}\n<<: *x\n", "a: &x 1\nb: *x\n".encode("utf-16")],
)
def test_an_alias_is_refused_whatever_the_encoding(raw: bytes) -> None:
    with pytest.raises(AliasError):
        parse_fast(raw)


def test_a_tag_with_no_json_form_is_refused_on_the_quick_path() -> None:
    with pytest.raises(yaml.constructor.ConstructorError, match="no JSON form"):
        parse_fast(b"a: !!binary aGVsbG8=\n")


# The quick builder (`_quick_load`) against PyYAML's constructor on the same loader: the
# same data, or the same exception with the same message, for every document.
ROOT = Path(__file__).resolve().parents[3]
UNUSUAL = [
    b"",  # no document
    b"# only a comment\n",
    b"null\n",
    b"plain text\n",
    b"- 1\n- 0x1f\n- 0o17\n- 017\n- 1_000\n- 1:30\n- -7\n- +3\n",
    b"- 1.5\n- .inf\n- -.Inf\n- .nan\n- 1e3\n- 6.8523015e+5\n- 190:20:30.15\n",
    b"- yes\n- No\n- on\n- OFF\n- true\n- ~\n- Null\n- ''\n",
    b"a: 2026-01-02\nb: 2001-12-14t21:59:43.10-05:00\n",
    b"n: 1" + b"0" * 5000 + b"\n",  # a number too long: NVC605
    b"a: 1\na: 2\n",  # a key given twice: NVC607
    b"1: a\ntrue: b\n",  # equal keys of two types
    b"? [a, b]\n: c\n",  # an unhashable key
    b"? {a: 1}\n: c\n",
    b"<<: {x: 1}\ny: 2\n",  # merge keys
    b"<<: [{x: 1}, {y: 2}]\nz: 3\n",
    b"<<: 3\n",
    b"=: value key\n",
    b"a: !!str 12\nb: !!int '12'\nc: !!float '1'\nd: !!bool 'yes'\ne: !!null ''\n",
    b"a: !!int abc\n",
    b"a: !!binary aGVsbG8=\n",
    b"a: !!set {x: null}\n",
    b"a: !!omap [{x: 1}]\n",
    b"a: !!pairs [{x: 1}]\n",
    b"a: !!map x\n",
    b"a: !!seq x\n",
    b"a: !!str {x: 1}\n",
    b"a: !custom 1\n",
    b"a: !custom {x: 1}\n",
    b"a: !!python/object:os.system x\n",
    b"a: !<tag:yaml.org,2002:str> 5\n",
    b"%TAG !e! tag:yaml.org,2002:\n---\na: !e!int 7\n",
    b"---\na: 1\n---\nb: 2\n",  # two documents
    b"a: [1, 2\n",  # not YAML
    b"a: &x 1\nb: 2\n",  # an anchor used once
    b"a: 'unterminated\n",
    b"[" * 200 + b"]" * 200 + b"\n",
    b"{a: " * 150 + b"1" + b"}" * 150 + b"\n",
    b"\xef\xbb\xbfa: bom\n",
    "a: 1\nb: [x]\n".encode("utf-16"),
    b"a: \x00\n",
]


def _outcome(load: Callable[[bytes], object], raw: bytes) -> object:
    try:
        return ("data", load(raw))
    except yaml.YAMLError as exc:
        return ("error", type(exc), str(exc))


def _shipped() -> list[Path]:
    return [
        path
        for folder in ("out", "sites", "catalog")
        for path in sorted((ROOT / folder).rglob("*.yaml"))
    ]


@pytest.mark.parametrize("raw", DOCUMENTS + UNUSUAL)
def test_the_quick_builder_returns_or_raises_what_pyyaml_does(raw: bytes) -> None:
    def pyyaml(data: bytes) -> object:
        return yaml.load(data, Loader=fast._JsonLoader)

    assert _outcome(fast._quick_load, raw) == _outcome(pyyaml, raw)


def test_the_quick_builder_reads_the_shipped_tree_as_pyyaml_does() -> None:
    files = _shipped()
    assert len(files) > 150
    for path in files:
        raw = path.read_bytes()
        assert parse_fast(raw) == yaml.load(raw, Loader=fast.LOADER), path


def test_a_plain_document_is_built_without_pyyamls_constructor(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def refused(*_: object, **__: object) -> object:
        raise AssertionError("PyYAML's constructor was used")

    monkeypatch.setattr(yaml, "load", refused)
    assert parse_fast(b"a: [1, 2.5, true, null, x]\nb: {c: 2026-01-02}\n") == {
        "a": [1, 2.5, True, None, "x"],
        "b": {"c": "2026-01-02"},
    }
    with pytest.raises(AssertionError, match="constructor was used"):
        parse_fast(b"<<: {x: 1}\n")  # a merge key is left to PyYAML
