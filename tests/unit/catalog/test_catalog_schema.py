"""schemas/catalog.v1alpha1.json: generated from the catalog models; every catalog file fits."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from jsonschema import Draft202012Validator

from nvcregen.catalog.load import load_catalog
from nvcregen.catalog.schema import catalog_json_schema, catalog_json_schema_text, entry_files
from nvcregen.cli import main
from nvcregen.spec.fast import parse_fast

ROOT = Path(__file__).resolve().parents[3]
CATALOG = ROOT / "catalog"
SHIPPED = ROOT / "schemas" / "catalog.v1alpha1.json"
REFRESH = "nvcregen schema --catalog > schemas/catalog.v1alpha1.json"
NAMES = "# yaml-language-server: $schema="
FILES = sorted(
    (file.relative_to(CATALOG).as_posix(), model.__name__)
    for pattern, model in entry_files().items()
    for file in CATALOG.glob(pattern)
)


def validator(definition: str) -> Draft202012Validator:
    schema = json.loads(SHIPPED.read_text(encoding="utf-8"))
    return Draft202012Validator({"$defs": schema["$defs"], "$ref": f"#/$defs/{definition}"})


def errors(definition: str, data: Any) -> list[str]:
    return [e.message for e in validator(definition).iter_errors(data)]


def test_the_shipped_schema_is_the_generated_one() -> None:
    shipped = SHIPPED.read_text(encoding="utf-8")
    assert json.loads(shipped) == catalog_json_schema(), f"out of date; refresh: `{REFRESH}`"
    assert shipped == catalog_json_schema_text(), f"formatting differs; refresh: `{REFRESH}`"


def test_nvcregen_schema_catalog_prints_it() -> None:
    result = CliRunner().invoke(main, ["schema", "--catalog"])
    assert result.exit_code == 0
    assert result.output == SHIPPED.read_text(encoding="utf-8")
    site = CliRunner().invoke(main, ["schema"])
    assert json.loads(site.output)["$id"].endswith("/site.v1alpha1.json")


def test_every_file_the_catalog_loads_is_listed() -> None:
    listed = {name for name, _ in FILES}
    shipped = {p.relative_to(CATALOG).as_posix() for p in CATALOG.rglob("*.yaml")}
    assert listed == shipped
    catalog = load_catalog()  # the models entry_files() names are the ones load reads with
    assert len([n for n in listed if n.startswith("hardware/")]) == len(catalog.hardware)
    assert len([n for n in listed if n.startswith("tests/")]) == len(catalog.tests)


@pytest.mark.parametrize(("name", "definition"), FILES)
def test_every_catalog_file_validates_against_its_definition(name: str, definition: str) -> None:
    raw = (CATALOG / name).read_bytes()
    assert errors(definition, parse_fast(raw)) == []
    first = raw.decode("utf-8").splitlines()[0]
    if first.startswith(NAMES):  # an editor checks the file against what its first line names
        target, _, pointer = first.removeprefix(NAMES).partition("#")
        assert (CATALOG / name).parent.joinpath(target).resolve() == SHIPPED.resolve()
        assert pointer == f"/$defs/{definition}"


def test_a_file_naming_the_schema_names_every_kind_that_has_a_line() -> None:
    named = {name for name, _ in FILES if (CATALOG / name).read_text().startswith(NAMES)}
    assert {n.split("/")[0] for n in named} == {
        "hardware",
        "tests",
        "baselines",
        "images.yaml",
        "pods.yaml",
        "engines.yaml",
    }


def test_the_schema_refuses_what_the_models_refuse() -> None:
    data = parse_fast((CATALOG / "hardware" / "h100.yaml").read_bytes())
    assert errors("HardwareEntry", data) == []
    assert errors("HardwareEntry", {**data, "gpusPerNode": 17}) == [
        "17 is greater than the maximum of 16"
    ]
    assert errors("HardwareEntry", {**data, "gpusPerNode": 16}) == []
    assert errors("HardwareEntry", {**data, "gpus_per_node": 8}) == [
        "Additional properties are not allowed ('gpus_per_node' was unexpected)"
    ]
    whole = json.loads(SHIPPED.read_text(encoding="utf-8"))
    assert Draft202012Validator(whole).is_valid(data)  # the bare schema takes any entry
    assert not Draft202012Validator(whole).is_valid({"model": "H100"})
