"""Catalog blocks come from the registry (issue 36's last Done-when): a new kind is its package.

`TestEntry` names no kind; the model `catalog/tests/` is read with, and the catalog schema
published from, is built from the registered kinds (`catalog/kindblocks.py`). A throwaway
kind written outside `nvcregen/` and registered for one test shows it: its catalog file
loads with its block typed, a wrong block is refused where it is written, and the schema
lists the block, with no file of `nvcregen/` edited.
"""

from __future__ import annotations

import importlib
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Literal, get_args, get_origin

import pytest
from sitefactory import catalog, line_of
from throwawaykinds import Extra, Throwaway, package_digest, registering

from nvcregen.catalog.kindblocks import entry_model
from nvcregen.catalog.load import load_catalog
from nvcregen.catalog.models import TestEntry as Entry
from nvcregen.catalog.schema import catalog_json_schema
from nvcregen.core.datafiles import data_dir
from nvcregen.core.errors import NvcregenError, Severity
from nvcregen.kindapi import registry
from nvcregen.kindapi.protocol import FixedTime
from nvcregen.kindapi.registry import KINDS, kind_of

COMMON = ["name", "title", "kind", "scopes", "transport", "image", "measurement", "nvcre"]
PROVENANCE = ["notes", "sources"]

DCGM_BLOCK = "dcgm: {level: 1, needsHostengine: false, expectedDuration: 1m}\n"
PARAMS_SOURCE = '''
from typing import Annotated

from pydantic import Field

from nvcregen.spec.v1alpha1 import Duration, StrictModel


class StorageParams(StrictModel):
    """A storage benchmark: fio against the node's scratch volume."""

    block_size: str
    expected_duration: Duration
    jobs: Annotated[int, Field(ge=1, le=64)] = 1
'''
KIND_SOURCE = """
from nvcregen.core import units
from nvcregen.kindapi.protocol import FixedTime, TestKind
from extrakinds.{package}.params import StorageParams


class Storage(TestKind[StorageParams]):
    name = "{name}"
    params = StorageParams
    per_node = one_node = True
    collective = node_health = False

    def duration_basis(self, test):
        return self.block(test).expected_duration

    def fixed_time(self, test, pod_start):
        block = self.block(test)
        ms = units.parse_duration(pod_start) + units.parse_duration(block.expected_duration)
        return FixedTime(ms / 1000, f"{{pod_start}} start-up + fio x{{block.jobs}}")


KIND = Storage()
"""
TEST_FILE = """\
name: storage-fio
title: fio on the scratch volume
kind: storage
scopes: [intra-node]
transport: none
image: dcgm
measurement: none
storage:
  blockSize: 1MiB
  expectedDuration: 5m
  jobs: 4
sources: [a throwaway kind of tests/unit/catalog/test_kind_blocks.py]
"""


STORAGE = Throwaway(PARAMS_SOURCE, KIND_SOURCE, "storage-fio.yaml", TEST_FILE)


@pytest.fixture
def register(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[str], Extra]]:
    """Registers the storage kind under a given name after the real ones (throwawaykinds)."""
    yield from registering(tmp_path, monkeypatch, STORAGE)


def test_a_registered_kinds_catalog_file_loads_with_its_block_typed(
    register: Callable[[str], Extra],
) -> None:
    extra = register("storage")
    loaded = load_catalog(extra.catalog)
    test = loaded.tests["storage-fio"]
    params = importlib.import_module(f"{extra.package}.params").StorageParams
    block = KINDS["storage"].block(test)
    assert isinstance(block, params)  # the package's own model, as the kind reads it
    assert block.model_dump() == {"block_size": "1MiB", "expected_duration": "5m", "jobs": 4}
    assert kind_of(test).fixed_time(test, "15s") == FixedTime(315.0, "15s start-up + fio x4")
    assert type(test) is entry_model() and "dcgm-l1" in loaded.tests  # beside the real ones
    assert package_digest() == extra.before  # no file of nvcregen/ edited


def test_a_wrong_block_of_a_registered_kind_is_nvc220_where_it_is_written(
    register: Callable[[str], Extra],
) -> None:
    extra = register("storage")
    text = TEST_FILE.replace("  jobs: 4\n", "  jobs: 0\n")
    extra.test_file.write_text(text, encoding="utf-8")
    with pytest.raises(NvcregenError) as caught:
        load_catalog(extra.catalog)
    (found,) = caught.value.diagnostics
    assert (found.code, found.severity, found.path) == ("NVC220", Severity.ERROR, "/storage/jobs")
    assert (found.span.file, found.span.line, found.span.column) == (
        "catalog/tests/storage-fio.yaml",
        line_of(text, "jobs: 0"),
        9,
    )
    assert found.message == "Input should be greater than or equal to 1"
    text = TEST_FILE.replace("\nstorage:\n", "\nstorge:\n")  # its block under another name
    extra.test_file.write_text(text, encoding="utf-8")
    with pytest.raises(NvcregenError) as caught:
        load_catalog(extra.catalog)
    (unknown,) = caught.value.diagnostics
    assert (unknown.code, unknown.message) == ("NVC220", "unknown key 'storge'")
    assert (unknown.span.line, unknown.span.column) == (line_of(text, "storge:"), 1)
    text = TEST_FILE.replace("measurement: none\n", f"measurement: none\n{DCGM_BLOCK}")
    extra.test_file.write_text(text, encoding="utf-8")  # another kind's block beside its own
    with pytest.raises(NvcregenError) as caught:
        load_catalog(extra.catalog)
    (both,) = caught.value.diagnostics
    assert (
        both.message
        == "a storage test takes a `storage` block and no other (found: `dcgm`, `storage`)"
    )
    assert (both.code, both.span.file, both.span.line) == (
        "NVC220",
        "catalog/tests/storage-fio.yaml",
        1,
    )
    assert package_digest() == extra.before


def test_an_unregistered_kinds_file_is_refused_by_the_real_catalogs_model(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "catalog"
    shutil.copytree(data_dir("catalog"), folder)
    (folder / "tests" / "storage-fio.yaml").write_text(TEST_FILE, encoding="utf-8")
    with pytest.raises(NvcregenError) as caught:
        load_catalog(folder)
    messages = {(d.code, d.path, d.span.line) for d in caught.value.diagnostics}
    assert ("NVC220", "/storage", line_of(TEST_FILE, "storage:")) in messages
    assert ("NVC220", "/kind", line_of(TEST_FILE, "kind: storage")) in messages


def test_the_catalog_schema_lists_a_registered_kinds_block(
    register: Callable[[str], Extra],
) -> None:
    extra = register("storage")
    schema = catalog_json_schema()
    entry = schema["$defs"]["TestEntry"]
    assert entry["properties"]["storage"] == {
        "$ref": "#/$defs/StorageParams",
        "description": "A storage benchmark: fio against the node's scratch volume.",
    }
    assert entry["properties"]["kind"]["enum"] == [*KINDS]
    assert entry["properties"]["kind"]["enum"][-1] == "storage"
    assert set(schema["$defs"]["StorageParams"]["properties"]) == {
        "blockSize",
        "expectedDuration",
        "jobs",
    }
    assert package_digest() == extra.before


@pytest.mark.parametrize(
    "name", ["notes", "kind", "nvcre", "burn_in", "Storage", "2fio", "", "copy", "json", "schema"]
)
def test_a_kind_whose_name_cannot_be_a_block_is_a_bug_named(
    register: Callable[[str], Extra], name: str
) -> None:
    register(name)
    with pytest.raises(TypeError, match=f"kind '{name}' cannot name a catalog block"):
        entry_model()


@pytest.mark.parametrize("name", ["storage", "fio2", "a"])
def test_a_lowercase_name_of_letters_and_digits_is_a_block(
    register: Callable[[str], Extra], name: str
) -> None:
    register(name)
    assert name in entry_model().model_fields


def test_test_entry_holds_only_what_every_test_has() -> None:
    assert list(Entry.model_fields) == COMMON + PROVENANCE
    assert Entry.model_fields["kind"].annotation is str


def test_the_catalogs_model_has_exactly_the_registered_kinds_blocks() -> None:
    model = entry_model()
    assert model is entry_model()  # built once for the kinds registered
    assert issubclass(model, Entry) and model.__name__ == "TestEntry"
    blocks = [name for name in model.model_fields if name not in Entry.model_fields]
    # in registration order; run after the tests above, none of their throwaway kinds left
    assert blocks == list(KINDS) == [module.split(".")[2] for module in registry.KIND_MODULES]
    for name in blocks:
        field = model.model_fields[name]
        assert (field.annotation, field.alias, field.default) == (
            KINDS[name].params | None,
            name,
            None,
        )
    assert get_args(model.model_fields["kind"].annotation) == tuple(KINDS)
    assert get_origin(model.model_fields["kind"].annotation) is Literal
    assert all(type(test) is model for test in load_catalog().tests.values())


def test_a_tests_block_is_dumped_before_its_notes_and_sources() -> None:
    test = catalog().tests["nccl-all-reduce"]
    dumped = test.model_dump(by_alias=True, exclude_none=True)
    assert list(dumped) == [*COMMON, "nccl", *PROVENANCE]
    assert list(test.model_dump(exclude={"notes"})) == [
        *COMMON,
        *KINDS,
        "sources",
    ]
