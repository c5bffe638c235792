"""The output layers the readiness engines write, by name (`Manifest.component`).

Each is a folder of `out/<site>/`: "readiness" (the one-shot runs, either engine's),
"periodic" (trainer mode's CronJobs, design note 0021) and "preview" (NVCRE mode: what
NVCRE will create, for review; written out, never applied).
"""

from __future__ import annotations

from typing import Final

READINESS: Final = "readiness"
PERIODIC: Final = "periodic"
PREVIEW: Final = "preview"
