"""The shipped trainer-mode site with `readiness.periodic`, for the periodic tests.

`periodic_text()` adds a `periodic:` block under the shipped site's `packing:` line; its
stage `single-node` holds the DCGM levels and the intra-node NCCL tests.
"""

from __future__ import annotations

from sitefactory import edit
from trainerfactory import SHIPPED

PERIODIC = "    periodic: {schedule: '0 3 * * 0', stages: [single-node]}\n"


def periodic_text(block: str = PERIODIC) -> str:
    """The shipped trainer-mode site with `block` (a `periodic:` line) after `packing:`."""
    text = SHIPPED.read_text(encoding="utf-8")
    return edit(text, "    packing: packed\n", "    packing: packed\n" + block)
