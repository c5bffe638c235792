"""Generate the published JSON Schema of an archive's JSON files from the archive's model.

`nvcregen schema --archive` prints it; `schemas/archive.v1alpha1.json` is that text,
and a test fails when the committed file drifts from the models or an archive a test
collects does not validate against it. Each file names its definition:

    summary.json     #/$defs/SummaryFile
    verdicts.json    #/$defs/Verdicts
    provenance.json  #/$defs/ProvenanceFile

The schema states exactly what `collect` writes: keys by their field names, every
object closed (`additionalProperties: false`), a key that may be absent not required.
nvcregen's own readers are more lenient: they ignore keys they do not know, so an
archive written by a later version still reads.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaMode, models_json_schema

from nvcregen.results.archivemodel import FILES

ARCHIVE_SCHEMA_ID = "https://nvcregen.io/schemas/archive.v1alpha1.json"
ARCHIVE_SCHEMA_FILE = "archive.v1alpha1.json"


class _ArchiveSchemaGenerator(GenerateJsonSchema):
    """No titles on fields: the files' keys are their names."""

    def field_title_should_be_set(self, schema: Any) -> bool:
        """Never: a field's title would only repeat its key."""
        return False


def archive_json_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of an archive's JSON files: one definition per file.

    The schema itself accepts any of them (`anyOf` the file definitions); a reader names
    one (`#/$defs/<Model>`, see FILES) to check a file as exactly that.
    """
    models = list(FILES.values())
    wanted: list[tuple[type[BaseModel], JsonSchemaMode]] = [(m, "validation") for m in models]
    _, generated = models_json_schema(
        wanted, by_alias=False, schema_generator=_ArchiveSchemaGenerator
    )
    definitions: dict[str, Any] = generated.get("$defs", {})
    for definition in definitions.values():
        if "properties" in definition:
            definition["additionalProperties"] = False  # collect writes no other key
            for prop in definition["properties"].values():
                _keywords(prop)
    named = "; ".join(f"{name}: #/$defs/{model.__name__}" for name, model in FILES.items())
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": ARCHIVE_SCHEMA_ID,
        "title": "nvcregen results archive files (v1alpha1)",
        "description": (
            "The JSON files of a run folder `nvcregen collect` writes"
            f" (results/<site>/<run-id>/). {named}."
        ),
        "anyOf": [{"$ref": f"#/$defs/{m.__name__}"} for m in models],
        "$defs": definitions,
    }


# pydantic leaves a bound it cannot place in the core schema (on a number read through a
# validator of its own, `models.Decimal`) under its own name: JSON Schema's is another
_BOUNDS = {"ge": "minimum", "le": "maximum", "gt": "exclusiveMinimum", "lt": "exclusiveMaximum"}


def _keywords(prop: dict[str, Any]) -> None:
    for bound, keyword in _BOUNDS.items():
        if bound in prop:
            prop[keyword] = prop.pop(bound)


def archive_json_schema_text() -> str:
    """The schema as the exact text committed as `schemas/archive.v1alpha1.json`."""
    return json.dumps(archive_json_schema(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
