"""A note said once per run (`results/runnotes.py`): counted, its nodes named up to SHOWN."""

from __future__ import annotations

from nvcregen.results.runnotes import SHOWN, PortNote, fold_notes


def notes(nodes: int, ports: int = 1, text: str = "x not shown") -> list[PortNote]:
    return [
        PortNote(f"n{i:02d}", f"mlx5_{p} port 1", text) for i in range(nodes) for p in range(ports)
    ]


def test_each_distinct_note_once_with_its_ports_and_nodes() -> None:
    assert fold_notes(notes(1)) == ("x not shown (1 port of 1 node: n00)",)
    both = notes(2, 2) + notes(2, 2) + notes(1, text="y not shown")  # a port said twice: once
    assert fold_notes(both) == (
        "x not shown (4 ports of 2 nodes: n00, n01)",
        "y not shown (1 port of 1 node: n00)",
    )
    assert fold_notes([]) == ()


def test_the_nodes_named_are_capped_exactly() -> None:
    assert SHOWN == 8
    (at,) = fold_notes(notes(SHOWN))
    assert at.endswith(": n00, n01, n02, n03, n04, n05, n06, n07)")
    (over,) = fold_notes(reversed(notes(SHOWN + 1)))
    assert (
        over
        == "x not shown (9 ports of 9 nodes: n00, n01, n02, n03, n04, n05, n06, n07 and 1 more)"
    )
