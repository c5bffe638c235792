"""The jinja2 environments for generated scripts: thin templates, strict variables."""

from __future__ import annotations

from functools import cache

import jinja2

COMPILE = "nvcregen.compile"  # the package whose `templates/` the compiler's own scripts are in


@cache
def _environment(package: str) -> jinja2.Environment:
    """A package's templates: a kind's own first, then the compiler's.

    A kind's script may import the compiler's shared macros (`rail-helpers.sh.j2`: the
    shell functions several kinds' scripts print, written once).
    """
    own = jinja2.PackageLoader(package, "templates")
    shared = jinja2.PackageLoader(COMPILE, "templates")
    return jinja2.Environment(
        loader=own if package == COMPILE else jinja2.ChoiceLoader([own, shared]),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,  # shell scripts, not HTML
    )


def render_template(name: str, **context: object) -> str:
    """Render a template from `nvcregen/compile/templates/`; a missing variable is an error."""
    return render_packaged(COMPILE, name, **context)


def render_packaged(package: str, name: str, **context: object) -> str:
    """Render a template of `package`'s `templates/` folder (a kind's own, package data)."""
    return _environment(package).get_template(name).render(**context)
