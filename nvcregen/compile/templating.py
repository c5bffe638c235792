"""The jinja2 environment for generated scripts: thin templates, strict variables."""

from __future__ import annotations

from functools import cache

import jinja2


@cache
def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader("nvcregen.compile", "templates"),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,  # shell scripts, not HTML
    )


def render_template(name: str, **context: object) -> str:
    """Render a template from `nvcregen/compile/templates/`; a missing variable is an error."""
    return _environment().get_template(name).render(**context)
