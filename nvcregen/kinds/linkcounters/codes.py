"""The link counters kind's NVC codes, registered with the rest (`kindapi.registry.load_codes`)."""

from __future__ import annotations

from nvcregen.core.codes import ERROR, NOTE_0023_LINK_COUNTERS, REGISTRY, Code, register


def _code(number: int, title: str) -> Code:
    return register(REGISTRY, Code(number, title, ERROR, doc=NOTE_0023_LINK_COUNTERS))


NVC760 = _code(760, "a link counter reset, wrapped or saturated")
NVC761 = _code(761, "a port with no after-snapshot")
NVC762 = _code(762, "a link counter over its limit")
NVC763 = _code(763, "a link counter snapshot over its bounds")
NVC764 = _code(764, "link counter snapshots further apart than their run")
