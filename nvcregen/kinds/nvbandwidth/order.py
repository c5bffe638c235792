"""nvbandwidth's testcase order: `-l` lists, and naming the tests v0.7+ waive without a name.

v0.7 and v0.8 print `Waived:` with no name for a testcase they skip (two GPUs needed on a
one-GPU node, GPUs that are no peers); the text names only what ran. Testcases run in the
order asked for (the `-l` order by default, the `-t` order otherwise), so the unnamed lines
between two named testcases are the ones that order puts between them, when exactly that
many. `DEFAULT_ORDER` holds the `-l` lists of the captured versions
(`tests/fixtures/captures/nvbandwidth/v0.*-list.txt`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from nvcregen.ingest.limits import matched
from nvcregen.ingest.lines import strip_prefix
from nvcregen.ingest.models import IngestFormatError
from nvcregen.kinds.nvbandwidth.models import NvbwRun, Testcase
from nvcregen.kinds.nvbandwidth.text import VERSION

_V07 = (
    "host_to_device_memcpy_ce",
    "device_to_host_memcpy_ce",
    "host_to_device_bidirectional_memcpy_ce",
    "device_to_host_bidirectional_memcpy_ce",
    "device_to_device_memcpy_read_ce",
    "device_to_device_memcpy_write_ce",
    "device_to_device_bidirectional_memcpy_read_ce",
    "device_to_device_bidirectional_memcpy_write_ce",
    "all_to_host_memcpy_ce",
    "all_to_host_bidirectional_memcpy_ce",
    "host_to_all_memcpy_ce",
    "host_to_all_bidirectional_memcpy_ce",
    "all_to_one_write_ce",
    "all_to_one_read_ce",
    "one_to_all_write_ce",
    "one_to_all_read_ce",
    "host_to_device_memcpy_sm",
    "device_to_host_memcpy_sm",
    "host_to_device_bidirectional_memcpy_sm",
    "device_to_host_bidirectional_memcpy_sm",
    "device_to_device_memcpy_read_sm",
    "device_to_device_memcpy_write_sm",
    "device_to_device_bidirectional_memcpy_read_sm",
    "device_to_device_bidirectional_memcpy_write_sm",
    "all_to_host_memcpy_sm",
    "all_to_host_bidirectional_memcpy_sm",
    "host_to_all_memcpy_sm",
    "host_to_all_bidirectional_memcpy_sm",
    "all_to_one_write_sm",
    "all_to_one_read_sm",
    "one_to_all_write_sm",
    "one_to_all_read_sm",
    "host_device_latency_sm",
    "device_to_device_latency_sm",
    "device_local_copy",
)
_V04 = (
    "host_to_device_memcpy_ce",
    "device_to_host_memcpy_ce",
    "host_to_device_bidirectional_memcpy_ce",
    "device_to_host_bidirectional_memcpy_ce",
    "device_to_device_memcpy_read_ce",
    "device_to_device_memcpy_write_ce",
    "device_to_device_bidirectional_memcpy_read_ce",
    "device_to_device_bidirectional_memcpy_write_ce",
    "all_to_host_memcpy_ce",
    "all_to_host_bidirectional_memcpy_ce",
    "host_to_all_memcpy_ce",
    "host_to_all_bidirectional_memcpy_ce",
    "all_to_one_write_ce",
    "all_to_one_read_ce",
    "one_to_all_write_ce",
    "one_to_all_read_ce",
    "host_to_device_memcpy_sm",
    "device_to_host_memcpy_sm",
    "device_to_device_memcpy_read_sm",
    "device_to_device_memcpy_write_sm",
    "device_to_device_bidirectional_memcpy_read_sm",
    "device_to_device_bidirectional_memcpy_write_sm",
    "all_to_host_memcpy_sm",
    "all_to_host_bidirectional_memcpy_sm",
    "host_to_all_memcpy_sm",
    "host_to_all_bidirectional_memcpy_sm",
    "all_to_one_write_sm",
    "all_to_one_read_sm",
    "one_to_all_write_sm",
    "one_to_all_read_sm",
)
DEFAULT_ORDER: dict[str, tuple[str, ...]] = {"v0.4": _V04, "v0.7": _V07, "v0.8": _V07}
_LISTED = re.compile(r"^(?P<i>\d{1,4}), (?P<name>[a-z][a-z0-9_]{0,63}):$")
MAX_LISTED = 1000


def parse_list(text: str) -> tuple[str, ...]:
    """The testcase names of an `nvbandwidth -l` output, in its index order.

    Raises:
        IngestFormatError: No `nvbandwidth Version:` line, no testcase listed, or an
            index out of order.

    """
    names: list[str] = []
    seen_version = False
    for number, raw in enumerate(text.splitlines(), start=1):
        line = strip_prefix(matched(raw))
        seen_version = seen_version or VERSION.match(line) is not None
        found = _LISTED.match(line)
        if found is None:
            continue
        if int(found["i"]) != len(names) or len(names) >= MAX_LISTED:
            raise IngestFormatError(f"line {number}: testcase index {found['i']} out of order")
        names.append(found["name"])
    if not seen_version or not names:
        raise IngestFormatError("not an `nvbandwidth -l` list (no version line or no testcase)")
    return tuple(names)


def name_waived(run: NvbwRun, order: Sequence[str] | None = None) -> NvbwRun:
    """The run with each unnamed waived testcase named by `order` (its version's default).

    A gap between two named testcases whose unnamed lines do not match the names the
    order puts there in number leaves them unnamed: nothing is guessed.
    """
    known = tuple(order) if order is not None else DEFAULT_ORDER.get(run.version or "")
    if known is None or all(t.name is not None for t in run.testcases):
        return run
    position = {name: i for i, name in enumerate(known)}
    named: list[Testcase] = []
    gap: list[Testcase] = []
    last = -1
    for test in (*run.testcases, None):
        if test is not None and test.name is None:
            gap.append(test)
            continue
        following = len(known) if test is None else position.get(test.name or "", -1)
        between = known[last + 1 : following] if following > last else ()
        fits = len(between) == len(gap) and following >= 0
        named += [replace(t, name=n) for t, n in zip(gap, between, strict=False)] if fits else gap
        gap = []
        if test is not None:
            named.append(test)
            last = following if following >= 0 else last
    return replace(run, testcases=tuple(named))
