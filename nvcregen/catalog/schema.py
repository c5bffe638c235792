"""Generate the published JSON Schema of catalog files from the catalog models.

Every catalog file an editor opens names a definition of it on its first line
(`# yaml-language-server: $schema=../../schemas/catalog.v1alpha1.json#/$defs/HardwareEntry`);
`nvcregen schema --catalog` prints it, and a test fails when the committed file drifts
from the models or a catalog file does not validate against it.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import JsonSchemaMode, models_json_schema

from nvcregen.catalog.charts import ChartEntry
from nvcregen.catalog.engines import EngineFacts
from nvcregen.catalog.kindblocks import entry_model
from nvcregen.catalog.models import (
    Baseline,
    DefaultImages,
    ExampleDigests,
    HardwareEntry,
    PodSizes,
)
from nvcregen.catalog.physics_data import PhysicsData
from nvcregen.spec.schema import EditorSchemaGenerator, describe_properties

CATALOG_SCHEMA_ID = "https://nvcregen.io/schemas/catalog.v1alpha1.json"
CATALOG_SCHEMA_FILE = "catalog.v1alpha1.json"


def entry_files() -> dict[str, type[BaseModel]]:
    """Each catalog file (a glob under catalog/) and the model `catalog/load.py` reads it as.

    Tests are read with the model built from the registered kinds (`kindblocks.py`).
    """
    return {
        "hardware/*.yaml": HardwareEntry,
        "tests/*.yaml": entry_model(),
        "baselines/*.yaml": Baseline,
        "charts/*.yaml": ChartEntry,
        "images.yaml": DefaultImages,
        "physics.yaml": PhysicsData,
        "pods.yaml": PodSizes,
        "example-digests.yaml": ExampleDigests,
        "engines.yaml": EngineFacts,
    }


def catalog_json_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of catalog files: one definition per kind of file.

    The schema itself accepts any catalog file (`anyOf` the file definitions); a file
    names its own definition (`#/$defs/<Model>`) to be checked as exactly that.
    """
    entries = list(dict.fromkeys(entry_files().values()))  # in order, each once
    wanted: list[tuple[type[BaseModel], JsonSchemaMode]] = [(m, "validation") for m in entries]
    _, generated = models_json_schema(wanted, by_alias=True, schema_generator=EditorSchemaGenerator)
    definitions: dict[str, Any] = generated.get("$defs", {})
    schema: dict[str, Any] = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": CATALOG_SCHEMA_ID,
        "title": "nvcregen catalog entries (v1alpha1)",
        "description": (
            "The files under catalog/: hardware, tests, baselines, charts, images, physics,"
            " pods, example digests and engine limits. Name one definition:"
            " $schema=...#/$defs/<Model>."
        ),
        "anyOf": [{"$ref": f"#/$defs/{m.__name__}"} for m in entries],
        "$defs": definitions,
    }
    describe_properties(schema, tuple(entries))
    return schema


def catalog_json_schema_text() -> str:
    """The schema as the exact text committed as `schemas/catalog.v1alpha1.json`."""
    return json.dumps(catalog_json_schema(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
