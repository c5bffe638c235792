"""Turn loaded YAML data into frozen models, reporting pydantic errors at their source."""

from __future__ import annotations

from typing import TypeVar

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from nvcregen.core import codes
from nvcregen.core.errors import Diagnostic, Severity
from nvcregen.spec.positions import Document, pointer

M = TypeVar("M", bound=BaseModel)


def parse_model(
    doc: Document, model: type[M], *, code: str = codes.NVC210.code
) -> tuple[M | None, list[Diagnostic]]:
    """Validate `doc.data` as `model`; map every error back to `file:line:column`.

    Args:
        doc: the loaded document with its positions.
        model: the pydantic model to build.
        code: diagnostic code for errors found here.

    Returns:
        The model (None when invalid) and the diagnostics.

    """
    try:
        return model.model_validate(doc.data), []
    except ValidationError as exc:
        diags = [_diagnostic(doc, err, code) for err in exc.errors(include_url=False)]
        return None, sorted(diags, key=Diagnostic.sort_key)


def _diagnostic(doc: Document, err: ErrorDetails, code: str) -> Diagnostic:
    loc = [part for part in err["loc"] if not str(part).startswith("function-")]
    where = pointer(loc)
    message = str(err["msg"]).removeprefix("Value error, ")
    on_key = False
    if err["type"] == "missing":
        message = f"missing required key '{loc[-1]}'"
        where = pointer(loc[:-1])
    elif err["type"] == "extra_forbidden":
        message, on_key = f"unknown key '{loc[-1]}'", True
    return Diagnostic(
        span=doc.span(where, key=on_key),
        severity=Severity.ERROR,
        code=code,
        message=message,
        path=where,
    )
