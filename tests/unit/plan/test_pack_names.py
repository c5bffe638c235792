"""Pack names cannot be taken for a test's run (nvcregen.plan.packs, nvcregen.plan.periodic).

A packed run is named `<site>-<stage>-pack-<n>-<hash>` and a test run alone
`<site>-<stage>-<test>-<hash>`; collect tells them apart by the `pack-<n>` part
(results/logplace.py). Tests come only from the packaged catalog, so no catalog test
may be named like a pack.
"""

from __future__ import annotations

from nvcregen.catalog.load import load_catalog
from nvcregen.plan.packs import PACK_PREFIX
from nvcregen.plan.periodic import PERIODIC_PREFIX


def test_no_catalog_test_is_named_like_a_pack() -> None:
    """Neither a one-shot pack (`pack-<n>`) nor a periodic one (`periodic-<n>`)."""
    names = list(load_catalog().tests)
    assert names
    assert [n for n in names if n.startswith((PACK_PREFIX, PERIODIC_PREFIX))] == []
