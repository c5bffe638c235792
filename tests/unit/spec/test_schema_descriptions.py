"""Every property of the Site schema has a description, from the models' docstrings.

Issue 12 item 12: editors (yaml-language-server) show a property's `description` on
hover; none had one.
"""

from __future__ import annotations

from typing import Any

from nvcregen.spec.schema import site_json_schema


def _properties(schema: dict[str, Any]) -> dict[str, dict[str, Any]]:
    found = {f"Site.{k}": v for k, v in schema["properties"].items()}
    for name, definition in schema["$defs"].items():
        found |= {f"{name}.{k}": v for k, v in definition.get("properties", {}).items()}
    return found


def test_every_property_has_a_one_line_description() -> None:
    found = _properties(site_json_schema())
    assert len(found) > 140
    missing = [name for name, prop in found.items() if not prop.get("description")]
    assert missing == []
    assert all("\n" not in prop["description"] for prop in found.values())


def test_descriptions_come_from_field_and_model_docstrings() -> None:
    found = _properties(site_json_schema())
    # the string under the field
    assert found["Stage.pinTransport"]["description"].startswith("Run RDMA collectives as")
    # the sentence of the model's docstring that names the field
    assert found["Window.timeoutFactor"]["description"].startswith("`timeoutFactor` is the")
    # a property that is a model: that model's summary
    assert (
        found["SiteSpec.readiness"]["description"]
        == "What runs, in which order, and within which budget."
    )
