"""The round-robin schedule: every leaf pair once, each round disjoint, fewest rounds."""

from __future__ import annotations

import pytest

from nvcregen.fabric.tournament import rounds


@pytest.mark.parametrize("leaves", [2, 3, 4, 5, 16, 31, 32, 33])
def test_every_pair_once_in_the_fewest_rounds(leaves: int) -> None:
    schedule = rounds(leaves)
    pairs = [p for r in schedule for p in r]
    assert len(pairs) == len(set(pairs)) == leaves * (leaves - 1) // 2
    assert len(schedule) == (leaves - 1 if leaves % 2 == 0 else leaves)
    for played in schedule:
        seen = [leaf for pair in played for leaf in pair]
        assert len(seen) == len(set(seen))  # no leaf twice in a round
        assert len(played) == leaves // 2


def test_one_leaf_has_no_pairs() -> None:
    assert rounds(1) == rounds(0) == []
