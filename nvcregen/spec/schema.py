"""Generate the published JSON Schema of Site files from the pydantic models.

`catalog/schema.py` generates the catalog's the same way (`EditorSchemaGenerator`,
`describe_properties`).
"""

from __future__ import annotations

import inspect
import json
import re
import typing
from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import core_schema

from nvcregen.spec.v1alpha1 import Site

SCHEMA_ID = "https://nvcregen.io/schemas/site.v1alpha1.json"
SCHEMA_FILE = "site.v1alpha1.json"


class EditorSchemaGenerator(GenerateJsonSchema):
    """Schema for people and editors: optional keys are omitted, never written as null."""

    def nullable_schema(self, schema: core_schema.NullableSchema) -> JsonSchemaValue:
        """`X | None` as `X`: a key that may be left out."""
        # `X | None = None` means "may be left out"; a literal null is not part of the language,
        # and dropping the anyOf keeps validation errors specific.
        return self.generate_inner(schema["schema"])

    def default_schema(self, schema: core_schema.WithDefaultSchema) -> JsonSchemaValue:
        """A field's default, except a default of None (the key is simply left out)."""
        value = super().default_schema(schema)
        if value.get("default", 0) is None:
            del value["default"]
        return value

    def field_title_should_be_set(self, schema: Any) -> bool:
        """No titles on fields: their descriptions say what they are."""
        return False


def site_json_schema() -> dict[str, Any]:
    """Return the JSON Schema (draft 2020-12) that Site files are validated against."""
    schema = Site.model_json_schema(
        by_alias=True, mode="validation", schema_generator=EditorSchemaGenerator
    )
    describe_properties(schema)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = SCHEMA_ID
    schema["title"] = "nvcregen Site (nvcregen.io/v1alpha1)"
    return schema


def site_json_schema_text() -> str:
    """Return the schema as the exact text committed under `schemas/`."""
    return json.dumps(site_json_schema(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z`(])")


def describe_properties(
    schema: dict[str, Any], roots: tuple[type[BaseModel], ...] = (Site,)
) -> None:
    """Give every property of every model a `description`, for editors' hover text.

    From the models' docstrings, in this order: the field's own docstring (the string
    under it, `use_attribute_docstrings`), the sentences of its model's docstring that
    name it in backticks, and, for a property that is a model, that model's summary.
    `roots` are the models the schema was generated from (the Site, or the catalog's).
    """
    models = {name: model for root in roots for name, model in _models(root).items()}
    for name, definition in [("Site", schema), *schema.get("$defs", {}).items()]:
        model = models.get(name)
        if model is None:
            continue
        for key, prop in definition.get("properties", {}).items():
            text = prop.get("description") or _mentions(model, key) or _referenced(prop, models)
            if text:
                prop["description"] = " ".join(text.split())  # one line, however written


def _models(root: type[BaseModel]) -> dict[str, type[BaseModel]]:
    """Every model reachable from `root` by its fields, by class name."""
    found: dict[str, type[BaseModel]] = {}
    pending = [root]
    while pending:
        model = pending.pop()
        if model.__name__ in found:
            continue
        found[model.__name__] = model
        for field in model.model_fields.values():
            pending += [
                t
                for t in _types(field.annotation)
                if isinstance(t, type) and issubclass(t, BaseModel)
            ]
    return found


def _types(annotation: Any) -> list[Any]:
    args = typing.get_args(annotation)
    return [annotation, *(t for arg in args for t in _types(arg))]


def _mentions(model: type[BaseModel], key: str) -> str:
    """The sentences of a model's docstring that name `key` in backticks."""
    doc = inspect.cleandoc(model.__doc__ or "")
    text = " ".join(doc.split())
    return " ".join(s for s in _SENTENCE.split(text) if f"`{key}`" in s or f"`{key}:" in s)


def _referenced(prop: dict[str, Any], models: dict[str, type[BaseModel]]) -> str:
    """The summary line of the model a property refers to, if it is one (or a list of one)."""
    target = prop.get("$ref") or (prop.get("items") or {}).get("$ref") or ""
    model = models.get(str(target).rsplit("/", 1)[-1])
    doc = inspect.cleandoc(model.__doc__ or "") if model is not None else ""
    return doc.split("\n\n", 1)[0].replace("\n", " ") if doc else ""
