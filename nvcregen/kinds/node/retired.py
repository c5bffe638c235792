"""Retired pages past NVIDIA's limits (pure): a GPU that retired this many pages is worn.

The driver retires a page of GPU memory after one double-bit (DBE) or two single-bit (SBE)
ECC errors at one address, and keeps the list in the InfoROM for the board's life (NVIDIA,
"Dynamic Page Retirement", docs.nvidia.com/deploy/dynamic-page-retirement). The pending flag
says only that the newest retirement waits for a reset; the counts say how worn the memory is,
and they fail a GPU on their own.

The limits are NVIDIA's, as its own health check applies them (DCGM,
`DcgmGpuHardwareLimits.h` and `DcgmHealthWatch.cpp`, NVIDIA/DCGM):

- `DCGM_LIMIT_MAX_RETIRED_PAGES` = 60: a GPU whose SBE and DBE retired pages together reach
  60 fails (`DCGM_FR_RETIRED_PAGES_LIMIT`, "Retired pages ... exceeded the limit", the
  replacement (RMA) guidance). Later DCGM releases raised it to 63 to match the field
  diagnostic; nvcregen keeps 60, the documented figure, so it never passes a GPU DCGM 3.x
  fails.
- `DCGM_LIMIT_MAX_RETIRED_PAGES_SOFT_LIMIT` = 15: more than 15 pages retired for
  double-bit errors fails a GPU that keeps retiring (DCGM checks more than one a week since).
  One capture has no history to show the rate, so past 15 DBE pages the GPU fails here and
  the hint asks for the rate: a readiness gate does not clear memory that worn on trust.
"""

from __future__ import annotations

from nvcregen.kinds.node.models import GpuFacts

RETIRED_PAGES_LIMIT = 60  # SBE + DBE retired pages: at 60 the GPU fails (DCGM >= 60)
RETIRED_DBE_LIMIT = 15  # DBE retired pages: past 15 the GPU fails (DCGM > 15)


def retired_past_limit(gpu: GpuFacts) -> tuple[str, str] | None:
    """What a GPU's retired page counts break, if anything: (message, fact).

    Args:
        gpu: The GPU's facts; a count the driver did not give (`N/A`) counts as none.

    Returns:
        The message of the finding and the fact it points at (the DBE count when the DBE
        limit is what broke, else the count that is larger), or None within the limits.

    """
    sbe, dbe = gpu.retired_sbe or 0, gpu.retired_dbe or 0
    total = sbe + dbe
    if total >= RETIRED_PAGES_LIMIT:
        fact = "retired_dbe" if dbe >= sbe else "retired_sbe"
        return (
            f"{total} retired pages (SBE {sbe}, DBE {dbe}): at or past NVIDIA's limit of "
            f"{RETIRED_PAGES_LIMIT} per GPU",
            fact,
        )
    if dbe > RETIRED_DBE_LIMIT:
        return (
            f"{dbe} pages retired for double-bit ECC errors: past NVIDIA's limit of "
            f"{RETIRED_DBE_LIMIT}",
            "retired_dbe",
        )
    return None
