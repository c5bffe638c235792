"""Generate the published JSON Schema of Site files from the pydantic models."""

from __future__ import annotations

import json
from typing import Any

from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import core_schema

from nvcregen.spec.v1alpha1 import Site

SCHEMA_ID = "https://nvcregen.io/schemas/site.v1alpha1.json"
SCHEMA_FILE = "site.v1alpha1.json"


class _SiteSchemaGenerator(GenerateJsonSchema):
    """Schema for people and editors: optional keys are omitted, never written as null."""

    def nullable_schema(self, schema: core_schema.NullableSchema) -> JsonSchemaValue:
        # `X | None = None` means "may be left out"; a literal null is not part of the language,
        # and dropping the anyOf keeps validation errors specific.
        return self.generate_inner(schema["schema"])

    def default_schema(self, schema: core_schema.WithDefaultSchema) -> JsonSchemaValue:
        value = super().default_schema(schema)
        if value.get("default", 0) is None:
            del value["default"]
        return value

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False


def site_json_schema() -> dict[str, Any]:
    """Return the JSON Schema (draft 2020-12) that Site files are validated against."""
    schema = Site.model_json_schema(
        by_alias=True, mode="validation", schema_generator=_SiteSchemaGenerator
    )
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = SCHEMA_ID
    schema["title"] = "nvcregen Site (nvcregen.io/v1alpha1)"
    return schema


def site_json_schema_text() -> str:
    """Return the schema as the exact text committed under `schemas/`."""
    return json.dumps(site_json_schema(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
