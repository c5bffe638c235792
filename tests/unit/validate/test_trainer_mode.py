"""Tests of the trainer-mode semantic checks (nvcregen.validate.trainer)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from sitefactory import catalog, line_of, parse, site_yaml
from trainerfactory import SELECTOR_POOL, SHIPPED, example_text, trainer_text

from nvcregen.core.errors import Severity
from nvcregen.validate import trainer as trainer_checks
from nvcregen.validate.semantic import check_references

# Semantic checks (validate/trainer.py)


def diagnose(text: str) -> list[Any]:
    site, doc = parse(text)
    return check_references(site, catalog(), doc)


SELECTOR_DCGM = """\
- name: node
  scope: intra-node
  tests: [dcgm-l1, nccl-all-reduce]
"""


def test_dcgm_on_a_selector_pool_is_an_error_in_trainer_mode() -> None:
    text = trainer_text(site_yaml(pools=SELECTOR_POOL, stages=SELECTOR_DCGM))
    found = [d for d in diagnose(text) if d.code == "NVC321"]
    (diag,) = found
    assert diag.severity is Severity.ERROR
    assert diag.path == "/spec/readiness/stages/0/tests/0"
    assert diag.span.line == line_of(text, "tests: [dcgm-l1")
    assert "pinned to each node" in diag.message
    assert "list the nodes of pool 'gpu'" in diag.hint
    assert [d.code for d in diagnose(site_yaml(pools=SELECTOR_POOL, stages=SELECTOR_DCGM))] == []


def test_nccl_on_a_selector_pool_warns_in_trainer_mode() -> None:
    text = trainer_text(site_yaml(pools=SELECTOR_POOL, stages=SELECTOR_DCGM))
    (diag,) = [d for d in diagnose(text) if d.code == "NVC323"]
    assert diag.severity is Severity.WARNING
    assert diag.path == "/spec/readiness/stages/0/tests/1"


def test_a_test_without_a_trainer_form_is_an_error() -> None:
    stages = "- name: fabric\n  scope: inter-node\n  tests: [training-goodput]\n"
    text = trainer_text(site_yaml(stages=stages))
    (diag,) = [d for d in diagnose(text) if d.code == "NVC322"]
    assert diag.severity is Severity.ERROR
    assert "engine: nvcre" in diag.hint
    assert not [d for d in diagnose(site_yaml(stages=stages)) if d.code == "NVC322"]


def test_the_example_trainer_site_has_no_problems() -> None:
    errors = [d for d in diagnose(example_text()) if d.severity is not Severity.INFO]
    assert errors == []
    shipped = [d for d in diagnose(SHIPPED.read_text()) if d.severity is not Severity.INFO]
    assert shipped == []


def test_packing_outside_trainer_mode_warns_at_its_line() -> None:
    stages = "- name: node\n  scope: intra-node\n  tests: [dcgm-l1, nccl-all-reduce]\n"
    packed = "  readiness:\n    packing: packed\n"
    text = site_yaml(stages=stages).replace("  readiness:\n", packed, 1)
    (diag,) = [d for d in diagnose(text) if d.code == "NVC324"]
    assert diag.severity is Severity.WARNING
    assert diag.path == "/spec/readiness/packing"
    assert diag.span.line == line_of(text, "packing: packed")
    assert "engine: trainer" in diag.hint
    assert not [d for d in diagnose(trainer_text(text)) if d.code == "NVC324"]
    per_run = text.replace("packing: packed", "packing: perRun")
    assert not [d for d in diagnose(per_run) if d.code == "NVC324"]


def test_every_trainer_mode_code_has_a_test() -> None:
    source = Path(trainer_checks.__file__).read_text(encoding="utf-8")
    codes = set(re.findall(r"codes\.(NVC3\d\d)\.code", source))
    # NVC345 (a pair test): tests/unit/kinds/rdmapair/; NVC344 is the pair kind's
    # `nvcre_refusal` (validate/nvcreform.py)
    assert codes == {"NVC321", "NVC322", "NVC323", "NVC324", "NVC345"}
