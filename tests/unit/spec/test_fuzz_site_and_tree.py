"""Fuzzing the site loader and check's tree reader: no input is an internal error (#20).

Each property feeds hostile bytes (a shipped site or generated file with parts replaced by
huge numbers, deep nesting, tags, anchors, control and format characters, secrets, or
arbitrary text) to a reader of untrusted input and asserts it answers with data or
diagnostics, never an exception (which the command line reports as exit 70).

`make test` runs a few seconds of it (`FUZZ_EXAMPLES` examples per property);
`make fuzz-site` runs it longer (NVCREGEN_FUZZ_EXAMPLES=2000).
"""

from __future__ import annotations

import contextlib
import os
import shutil
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sitefactory import catalog

from nvcregen.check.reader import GeneratedFile
from nvcregen.check.tree import check_tree
from nvcregen.core.errors import Diagnostic
from nvcregen.spec.bounded import load_json
from nvcregen.spec.fast import parse_fast
from nvcregen.spec.load import load_document
from nvcregen.validate.site import load_site

ROOT = Path(__file__).resolve().parents[3]
FUZZ_EXAMPLES = int(os.environ.get("NVCREGEN_FUZZ_EXAMPLES", "60"))
SITES = [p.read_text() for p in sorted((ROOT / "sites").glob("*.yaml"))]
OUT_FILES = sorted((ROOT / "out").rglob("*.yaml"))[:40]
INDEX = (ROOT / "out" / "l20-pool" / "index.json").read_text()

HOSTILE = st.sampled_from(
    [
        "9" * 5000,
        "-" + "9" * 4301,
        "0x" + "f" * 5000,
        "1e999",
        "-.inf",
        ".nan",
        "[" * 2000,
        "{" * 2000 + "}" * 2000,
        "- " * 1200 + "x",
        "!!binary aGk=",
        "!!set {a}",
        "!custom x",
        "&a x",
        "*a",
        "<<: {a: 1}",
        "~",
        "",
        "'unterminated",
        '"\\x00\\ud800"',
        "\t",
        "x\u200by",
        "\u2028",
        "\ufeff",
        "ci_ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8",
        "LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQo=",
        "https%3A%2F%2Fu%3Ap%40h",
        "y" * 100_000,
        "a: 1\na: 2",
        "? [a, b]\n: c",
        "%YAML 1.1\n---",
        "--- a\n--- b",
    ]
)
FUZZ = settings(
    max_examples=FUZZ_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@st.composite
def mutated(draw: st.DrawFn, texts: list[str]) -> bytes:
    """One of `texts` with a few lines or values replaced, cut, repeated or re-indented."""
    lines = draw(st.sampled_from(texts)).splitlines()
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(lines) - 1))
        piece = draw(st.one_of(HOSTILE, st.text(max_size=40)))
        line = lines[at]
        match draw(st.integers(0, 4)):
            case 0:  # the value of a `key: value` line
                key, _, _ = line.partition(":")
                lines[at] = f"{key}: {piece}"
            case 1:
                lines[at] = piece
            case 2:
                del lines[at : at + draw(st.integers(1, 3))]
            case 3:
                lines.insert(at, line)
            case _:
                lines[at] = " " * draw(st.integers(0, 9)) + line.lstrip()
        if not lines:
            lines = [""]
    raw = "\n".join(lines).encode("utf-8", "surrogatepass")
    if draw(st.booleans()):  # a few raw bytes anywhere: invalid UTF-8, NUL, BOMs
        at = draw(st.integers(0, len(raw)))
        raw = raw[:at] + draw(st.binary(max_size=4)) + raw[at:]
    return raw


def no_crash_diagnostics(diags: list[Diagnostic]) -> None:
    for diag in diags:
        assert diag.code.startswith("NVC") and diag.message


@pytest.mark.slow
@FUZZ
@given(raw=mutated(SITES))
def test_the_site_loader_never_fails_on_any_site(raw: bytes) -> None:
    doc, diags = load_document(raw, "s.yaml")
    no_crash_diagnostics(diags)
    assert doc is not None or diags
    loaded = load_site(raw, "s.yaml", catalog())  # YAML, schema, semantics, plan
    no_crash_diagnostics(loaded.diagnostics)


@FUZZ
@given(raw=st.binary(max_size=400))
def test_the_site_loader_never_fails_on_any_bytes(raw: bytes) -> None:
    no_crash_diagnostics(load_site(raw, "s.yaml", catalog()).diagnostics)


@FUZZ
@given(raw=mutated([p.read_text() for p in OUT_FILES]))
def test_the_tree_reader_never_fails_on_any_file(
    raw: bytes, tmp_path_factory: pytest.TempPathFactory
) -> None:
    folder = tmp_path_factory.mktemp("out")
    file = folder / "f.yaml"
    file.write_bytes(raw)
    generated = GeneratedFile(file, "out/f.yaml")
    data, limit = generated.data, generated.limit
    if data is None:
        no_crash_diagnostics(generated.loaded[1])
    assert limit is None or limit.code in {"NVC605", "NVC606", "NVC607"}


@FUZZ
@given(raw=mutated([INDEX]), file=mutated([p.read_text() for p in OUT_FILES[:5]]))
def test_check_never_fails_on_any_tree(
    raw: bytes, file: bytes, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """A site folder with a hostile index.json and a hostile file, checked whole."""
    root = tmp_path_factory.mktemp("project")
    site = root / "out" / "lab"
    (site / "gitops").mkdir(parents=True)
    (site / "index.json").write_bytes(raw)
    (site / "gitops" / "x.yaml").write_bytes(file)
    shutil.copytree(ROOT / "sites", root / "sites")
    no_crash_diagnostics(check_tree(root / "out", root, catalog()))


@FUZZ
@given(raw=st.one_of(mutated([INDEX]), st.binary(max_size=200)))
def test_the_bounded_readers_raise_only_value_errors(raw: bytes) -> None:
    """`load_json` and `parse_fast` refuse with ValueError or YAMLError, nothing else."""
    with contextlib.suppress(ValueError):
        load_json(raw)
    with contextlib.suppress(yaml.YAMLError):
        parse_fast(raw)
