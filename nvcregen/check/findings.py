"""A problem found in one generated object, before it is tied to a file or a site line."""

from __future__ import annotations

from dataclasses import dataclass

from nvcregen.core.errors import Severity


@dataclass(frozen=True)
class Finding:
    """One problem in one object: where in the object, what, and how bad."""

    pointer: str
    code: str
    message: str
    severity: Severity = Severity.ERROR
    hint: str = ""
