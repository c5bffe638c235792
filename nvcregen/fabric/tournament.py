"""Round-robin pairing of leaves: every leaf pair once, in the fewest rounds (pure).

The circle method: leaf 0 stays, the others rotate one place a round. With L leaves
(L even) that is L-1 rounds of L/2 disjoint pairs, the least possible since each leaf
meets L-1 others at most one at a time; an odd L gets a bye leaf, L rounds.
"""

from __future__ import annotations

from collections.abc import Sequence

_BYE = -1


def rounds(count: int) -> list[list[tuple[int, int]]]:
    """The pairs of each round, leaves numbered 0..count-1, each pair (low, high)."""
    if count < 2:
        return []
    ring = list(range(count)) + ([_BYE] if count % 2 else [])
    size = len(ring)
    schedule: list[list[tuple[int, int]]] = []
    for _ in range(size - 1):
        pairs = [(ring[i], ring[size - 1 - i]) for i in range(size // 2)]
        schedule.append(sorted((min(a, b), max(a, b)) for a, b in pairs if _BYE not in (a, b)))
        ring = [ring[0], ring[-1], *ring[1:-1]]
    return schedule


def leaf_rounds(leaves: Sequence[str]) -> list[list[tuple[str, str]]]:
    """`rounds` over named leaves, in the order given."""
    return [[(leaves[a], leaves[b]) for a, b in pairs] for pairs in rounds(len(leaves))]
