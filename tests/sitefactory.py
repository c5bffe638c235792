"""Small valid Site files as YAML text, with knobs to tweak them, for the unit tests.

`site_yaml()` returns a site that validates without a single diagnostic: two H100 nodes
with two InfiniBand NICs, an intra-node and an inter-node stage, digest-pinned images.
Each keyword replaces one section; blocks are written unindented and indented here.
`edit()` changes one exact piece of text. Lines in assertions come from `line_of()`, so a
test states *which* text a diagnostic must point at, not a number that drifts.

This lives in `tests/` (not `tests/unit/`) because `tests/` is the folder pytest puts on
`sys.path` for `tests/conftest.py`, and a second conftest.py would clash under mypy.
"""

from __future__ import annotations

import textwrap
from functools import cache

from nvcregen.catalog.load import Catalog, load_catalog
from nvcregen.core.errors import Diagnostic, has_errors
from nvcregen.plan.model import TestUnit
from nvcregen.plan.resolve import plan
from nvcregen.plan.resolved import Plan
from nvcregen.spec.load import load_document
from nvcregen.spec.parse import parse_model
from nvcregen.spec.positions import Document
from nvcregen.spec.v1alpha1 import Site
from nvcregen.validate.schema import validate_schema

FILE = "site.yaml"
NCCL_IMAGE = (
    "nvcr.io/nvidia/pytorch:26.01-py3"
    "@sha256:4c1ad2a5ba5cd7a1b5e7c16cbc8cc5e5a7f5b5d5a4f2e4b9c86a1d0f3b2e6c7d"
)
DCGM_IMAGE = (
    "nvcr.io/nvidia/cloud-native/dcgm:4.5.2-1-ubuntu22.04"
    "@sha256:9e0f5b7c6d1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4"
)
TRAINING_IMAGE = "nvcr.io/nvidia/pytorch:26.01-py3@sha256:" + "1" * 64

IMAGES = f"""\
nccl: {NCCL_IMAGE}
dcgm: {DCGM_IMAGE}
training: {TRAINING_IMAGE}
"""
POOL = """\
- name: gpu
  model: H100
  nodes: [gpu-1, gpu-2]
  nics:
    count: 2
    fabric: ib
    speed: 400Gb/s
    hcas: [mlx5_0, mlx5_1]
    resourceName: rdma/ib
"""
STAGES = """\
- name: node
  scope: intra-node
  tests: [dcgm-l1, nccl-all-reduce]
- name: fabric
  scope: inter-node
  tests: [nccl-all-reduce]
"""
WINDOW = "{maxConcurrentJobs: 2, deadline: 12h, gpuHours: 500}"


def _block(text: str, indent: int) -> str:
    return textwrap.indent(textwrap.dedent(text).strip("\n") + "\n", " " * indent)


def site_yaml(
    *,
    name: str = "lab",
    pools: str = POOL,
    stages: str = STAGES,
    thresholds: str = "",
    window: str = WINDOW,
    rounds: int = 1,
    images: str = IMAGES,
    dependencies: str = "",
) -> str:
    """Return the text of a valid site; each argument replaces one section."""
    parts = [
        "apiVersion: nvcregen.io/v1alpha1\n",
        "kind: Site\n",
        "metadata:\n",
        f"  name: {name}\n",
        "spec:\n",
        f"  cluster: {name}\n",
        "  kubernetes:\n",
        '    version: "1.30"\n',
    ]
    if dependencies:
        parts += ["  dependencies:\n", _block(dependencies, 4)]
    if images:
        parts += ["  images:\n", _block(images, 4)]
    parts += ["  nodePools:\n", _block(pools, 4)]
    parts += [
        "  readiness:\n",
        f"    rounds: {rounds}\n",
        f"    window: {window}\n",
        "    stages:\n",
        _block(stages, 6),
    ]
    if thresholds:
        parts += ["  thresholds:\n", _block(thresholds, 4)]
    return "".join(parts)


def edit(text: str, old: str, new: str) -> str:
    """Replace the one occurrence of `old` in `text` (fails loudly when it is not unique)."""
    assert text.count(old) == 1, f"{old!r} occurs {text.count(old)} times"
    return text.replace(old, new)


def line_of(text: str, needle: str) -> int:
    """Return the 1-based line of the one occurrence of `needle` in `text`."""
    assert text.count(needle) == 1, f"{needle!r} occurs {text.count(needle)} times"
    return text[: text.index(needle)].count("\n") + 1


@cache
def catalog() -> Catalog:
    """The real catalog, loaded once per test session."""
    return load_catalog()


def load(text: str) -> Document:
    """Load YAML text as a document; the text must be well-formed YAML."""
    doc, diags = load_document(text.encode("utf-8"), FILE)
    assert doc is not None, diags
    assert not diags, diags
    return doc


def schema_diagnostics(text: str) -> list[Diagnostic]:
    """Diagnostics of validating the text against the Site JSON Schema."""
    return validate_schema(load(text))


def parse(text: str) -> tuple[Site, Document]:
    """Load, schema-check and parse a site; the text must pass all three."""
    doc = load(text)
    schema = validate_schema(doc)
    assert not has_errors(schema), schema
    site, diags = parse_model(doc, Site)
    assert site is not None, diags
    return site, doc


def site(text: str | None = None) -> Site:
    """The parsed Site for `text` (the default site when None)."""
    return parse(site_yaml() if text is None else text)[0]


def plan_of(site: Site, doc: Document | None = None) -> Plan:
    """The Plan of a parsed site against the shipped catalog, as `check_site` builds it.

    `doc` is the document it was parsed from; a site changed in a test has none, and its
    pointers then name the file without a line.
    """
    written = doc if doc is not None else Document(FILE, "", {}, {}, {}, {})
    return Plan(site, written, catalog(), tuple(plan(site, catalog())))


def units_of(text: str | None = None) -> list[TestUnit]:
    """The planned test units of a site (the default site when None)."""
    return plan(site(text), catalog())


def unit(test_units: list[TestUnit], stage: str, test: str) -> TestUnit:
    """The one unit of `test` in `stage`."""
    found = [u for u in test_units if u.stage.name == stage and u.test.name == test]
    assert len(found) == 1, [(u.stage.name, u.test.name) for u in test_units]
    return found[0]
