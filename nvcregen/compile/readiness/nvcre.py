"""The longest names NVCRE's own objects may have, which the alerts' patterns match.

NVCRE's objects are written by its engine's package (`engines/readiness/nvcre/layer.py`);
these limits stay in the layer for `compile/monitoring/alerts.py`, which matches the names
of the Workflows NVCRE makes from them.
"""

from __future__ import annotations

from typing import Final

CERTIFICATION_NAME_MAX: Final = 40
WORKLOADRUN_NAME_MAX: Final = 52
