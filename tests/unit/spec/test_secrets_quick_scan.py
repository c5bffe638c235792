"""The quick scans NVC669 runs on every generated object and string, against references.

`has_clue` (is an object worth a closer look) and `_matches` (the patterns of one view)
were made faster (clues tested as one flat tuple at C speed; base64 runs with neither an
upper-case letter nor padding skipped without a call): they must answer exactly what the
plain reading of the rules answers (`_reference` and `_reference_matches` below, the
scans as first written) on the detect-secrets samples, the issue's reproducers, harmless
values, every string and every object of the shipped `out/` tree, and on any text.
"""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import pytest
import yaml
from detect_secrets.plugins.github_token import GitHubTokenDetector
from detect_secrets.plugins.openai import OpenAIDetector
from detect_secrets.plugins.stripe import StripeDetector
from hypothesis import given, settings
from hypothesis import strategies as st

from nvcregen.check import policy
from nvcregen.core import secrets
from nvcregen.core.secrets import has_clue

ROOT = Path(__file__).resolve().parents[3]
TOKEN = "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def _reference(text: str) -> bool:
    """`has_clue` as first written: each kind's clues in turn, then every base64 run."""
    lowered = text.lower()
    if any(clue in lowered for kind in secrets._kinds() for clue in kind.clues):
        return True
    if secrets._INVISIBLE.search(text) or secrets._PERCENT.search(text):
        return True
    if secrets._HEX_TEXT.search(text):  # hex of text (issue #32)
        return True
    if any(re.search("[2-7]", run) for run in re.findall("[A-Z2-7]{20,}", text)):  # base32
        return True
    return any(secrets._candidate(m.group()) is not None for m in secrets._BASE64.finditer(text))


def _reference_matches(view: str) -> list[tuple[int, int, int]]:
    """`_matches` as first written: each kind's clues and needs in turn; (kind, span) each."""
    lowered = view.lower()
    found = []
    for index, kind in enumerate(secrets._kinds()):
        if any(clue in lowered for clue in kind.clues) and all(n in lowered for n in kind.needs):
            found += [
                (index, m.start(), m.end())
                for m in kind.pattern.finditer(view)
                if kind.valid is None or kind.valid(m)
            ]
    return found


def _matches(view: str) -> list[tuple[int, int, int]]:
    return [(index, m.start(), m.end()) for index, m in secrets._matches(view)]


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


SAMPLES = [
    TOKEN,
    f"ci_{TOKEN}",
    _b64(TOKEN),
    "x_" + base64.urlsafe_b64encode(TOKEN.encode()).decode(),
    _b64("-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n"),
    "AKIAIOSFODNN7EXAMPLE_prod",
    "Authorization: Basic " + _b64("admin:hunter22"),
    "https://bot%3Ahunter22@git.example.com/r.git",
    TOKEN[:9] + "\u200b" + TOKEN[9:],
    "sha256:" + "4c" * 32,
    "requiredDuringSchedulingIgnoredDuringExecution",
    "TrainJob/single-node-nccl-all-reduce-962d714f-r1-g1",
    "NCCL_DEBUG_SUBSYS=INIT,NET",
    "disk-" + "a" * 48,
    # the skip's boundaries: 16 characters (a run), 15 (none), padding alone, one capital
    "abcdefghijklmnop",
    "abcdefghijklmno=",
    "abcdefghijklmnop=",
    "abcdefghijkl" + "mno=",
    "abcd1234efgh5678====",
    "abcdefghijklmnoP",
    "Abcdefghijklmno1",
    "abcdefghijk-lmnopqrsT1u2v3w4X5y6",
    "ABCDEFGHIJKLMNOP/abcdefghijklmnop",
    "",
]
_CORPUS = [*GitHubTokenDetector.denylist, *OpenAIDetector.denylist, *StripeDetector.denylist]


@pytest.mark.parametrize("text", SAMPLES)
def test_the_quick_scan_answers_as_the_reference_on_samples(text: str) -> None:
    for sample in (text, f"prefix {text} suffix", json.dumps({"a": [text]})):
        assert has_clue(sample) == _reference(sample), sample
        assert _matches(sample) == _reference_matches(sample), sample


def test_the_pattern_scan_finds_each_kind_as_the_reference_does() -> None:
    kubeconfig = "apiVersion: v1\nkind: Config\nusers:\n- name: admin\n"
    several = f"{TOKEN} and AKIAIOSFODNN7EXAMPLE and Bearer {'a' * 24}"
    for view in (kubeconfig, kubeconfig.replace("users", "people"), several, "no clue at all"):
        assert _matches(view) == _reference_matches(view), view
    assert [index for index, _, _ in _matches(several)] == sorted(
        {index for index, _, _ in _matches(several)}
    )
    # the comparison says something: three secrets (gitleaks' github-pat finds the token too)
    assert {(start, end) for _, start, end in _matches(several)} == {(0, 40), (45, 65), (70, 101)}
    assert _matches("no clue at all") == []


def test_the_boundaries_of_the_skip_are_where_the_reference_puts_them() -> None:
    # lower case and no padding: skipped, as `_candidate` would refuse it
    assert not has_clue("abcdefghijklmnopqrs")
    # the same run padded to a whole group of four: not skipped, a candidate
    assert has_clue("abcdefghijklmnopqrs=")
    # one capital letter (and a digit): not skipped, a candidate
    assert has_clue("abcdefghijklmnoP1")
    # 15 characters are no run at all, capitals or not
    assert not has_clue("Abcdefghijklmn1")
    # 16 are one
    assert has_clue("aBcDeFgHiJkLmNoP")


@pytest.mark.parametrize("pattern", _CORPUS, ids=lambda p: p.pattern[:24])
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_the_quick_scan_answers_as_the_reference_on_the_corpus(
    pattern: re.Pattern[str], data: st.DataObject
) -> None:
    text = pattern.pattern.replace("(?!\\w)", "")
    flags = (pattern.flags & ~re.UNICODE) | re.ASCII
    token = data.draw(st.from_regex(re.compile(text, flags), fullmatch=True))
    for sample in (token, _b64(token), token.lower(), f"x_{token}="):
        assert has_clue(sample) == _reference(sample), sample
        assert _matches(sample) == _reference_matches(sample), sample


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="abcxyzABZ019+/_-=%: .\u200b", max_size=80))
def test_the_quick_scan_answers_as_the_reference_on_any_text(text: str) -> None:
    assert has_clue(text) == _reference(text)
    assert _matches(text) == _reference_matches(text)


@pytest.mark.slow
def test_the_quick_scan_answers_as_the_reference_on_the_shipped_tree() -> None:
    objects = [
        doc
        for path in sorted((ROOT / "out").rglob("*.yaml"))
        for doc in yaml.safe_load_all(path.read_text())
        if isinstance(doc, dict)
    ]
    assert len(objects) > 100
    texts = [json.dumps(obj, ensure_ascii=False) for obj in objects]
    texts += [s for obj in objects for s in _strings(obj)]
    assert [has_clue(t) for t in texts] == [_reference(t) for t in texts]
    assert [_matches(t) for t in texts] == [_reference_matches(t) for t in texts]
    # both answers occur: the comparison says something
    assert any(_reference(t) for t in texts)
    assert not all(_reference(t) for t in texts)


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (*_strings(k), *_strings(v))]
    if isinstance(value, list):
        return [s for item in value for s in _strings(item)]
    return []


def test_an_object_is_looked_at_closer_exactly_when_one_of_its_texts_has_a_clue() -> None:
    """NVC669's gate: the object's keys and strings each tested, as the JSON text was.

    Every object of the shipped tree is gated as the reference gates its JSON text; a
    clue in a key, deep in a list or in a text too long to be remembered opens the gate;
    no clue spans two texts (none holds a quote).
    """
    objects = [
        doc
        for path in sorted((ROOT / "out").rglob("*.yaml"))
        for doc in yaml.safe_load_all(path.read_text())
        if isinstance(doc, dict)
    ]
    gated = [policy._clue_anywhere(obj) for obj in objects]
    assert gated == [_reference(json.dumps(obj, ensure_ascii=False)) for obj in objects]
    assert any(gated) and not all(gated)
    long = "x" * policy.SECRET_TEXT_REMEMBERED + TOKEN
    for obj in (
        {"a": {TOKEN: 1}},
        {"a": [{"b": [1, "ok", TOKEN]}]},
        {"a": long},
        {"a": "x" * (policy.SHORT_TEXT - len(TOKEN)) + TOKEN},  # short, at the limit
        {"a": "x" * (policy.SHORT_TEXT + 1 - len(TOKEN)) + TOKEN},  # one over
        [TOKEN],
    ):
        assert policy._clue_anywhere(obj), obj
    assert not policy._clue_anywhere({"kind": "Config", "a": ["b", {"c": "d"}], "n": 1})
    assert not policy._clue_anywhere({"a": "ghp", "b": "_"})  # ghp_ across two texts: none


_PIECES = st.sampled_from(
    [
        *("kind", "Kind", "Config", "users:", "\n", " ", ":", "x", "ghp_", "A1b2" * 9, "%41"),
        *("==", "QUJDREVGR0hJSktMTU5PUA==", "\u200b", "https://u:p@h", "aws", "Abcdefghijklmn1"),
    ]
)
_TEXTS = st.lists(_PIECES, max_size=6).map("".join)


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(st.dictionaries(_TEXTS, _TEXTS | st.lists(_TEXTS, max_size=3), max_size=4))
def test_the_gate_never_hides_a_secret_the_closer_look_would_find(obj: dict[str, object]) -> None:
    """Whatever NVC669's closer look finds in an object, the gate opened for."""
    real = policy._clue_anywhere
    try:
        policy._clue_anywhere = lambda _: True  # type: ignore[assignment]
        unguarded = policy.secret_strings(obj)
    finally:
        policy._clue_anywhere = real
    assert not unguarded or real(obj), (obj, unguarded)


def test_a_kubeconfig_split_between_a_key_and_its_string_opens_the_gate() -> None:
    """`kind:` is neither the key's nor the string's: it is the entry's line."""
    obj = {"data": {"kind": "Config\nusers:\nAbcdefghijklmn1"}}
    assert policy._clue_anywhere(obj)
    assert [(f.code, f.pointer) for f in policy.secret_strings(obj)] == [("NVC669", "/data/kind")]
    # Every object has a kind: without the rest of the pattern, no closer look.
    assert not policy._clue_anywhere({"kind": "Config", "data": {"users": "x"}})
    assert not secrets.entry_clue("kind", "Config") and secrets.entry_clue("Kind", "users:")
