"""Pack names cannot be taken for a test's run (nvcregen.plan.packs).

A packed run is named `<site>-<stage>-pack-<n>-<hash>` and a test run alone
`<site>-<stage>-<test>-<hash>`; collect tells them apart by the `pack-<n>` part
(results/logplace.py). Tests come only from the packaged catalog, so no catalog test
may be named like a pack.
"""

from __future__ import annotations

import re

from nvcregen.catalog.load import load_catalog
from nvcregen.plan.packs import PACK_PREFIX


def test_no_catalog_test_is_named_like_a_pack() -> None:
    names = list(load_catalog().tests)
    assert names
    like_a_pack = re.compile(rf"{re.escape(PACK_PREFIX)}[0-9]")
    assert [n for n in names if like_a_pack.match(n) or n.startswith(PACK_PREFIX)] == []
