"""`parse_fast`: libyaml without aliases, and a quicker path for bytes that cannot hold one."""

from __future__ import annotations

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
