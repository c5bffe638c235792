"""Node lists summarised: runs of numbered names as `prefix[a-b]`."""

from __future__ import annotations

from nvcregen.fabric.names import SHOW_MAX, compress, shown


def test_a_fleet_is_one_range() -> None:
    assert compress(f"gpu-{i:04d}" for i in range(1024)) == "gpu-[0000-1023]"


def test_gaps_widths_and_plain_names_stay_apart() -> None:
    names = ["gpu-0001", "gpu-0002", "gpu-0004", "n9", "n10", "login", "gpu-0003", "x1"]
    assert compress(names) == "gpu-[0001-0004],login,n9,n10,x1"
    assert compress(["a-1", "a-3"]) == "a-1,a-3"


def test_short_lists_are_printed_whole() -> None:
    few = [f"n{i}" for i in range(SHOW_MAX)]
    assert shown(few) == ",".join(few)
    assert shown([*few, f"n{SHOW_MAX}"]) == f"n[0-{SHOW_MAX}]"
    assert shown([]) == "-"
