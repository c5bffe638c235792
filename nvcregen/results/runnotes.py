"""Notes said once per run: each distinct note with how many ports and which nodes (pure).

A note that holds on many ports of many nodes (a link-counter limit a driver's counters
cannot show: `hw_counters/rnr_nak_retry_err` on every port of an InfiniBand fleet) was
said per port in each node's log record: about 1.6 MB of summary.json on a 1,024-node
run, saying one thing. A run says it once (`RunResult.notes`), with its count of ports
and nodes and the first nodes by name (`SHOWN` of them, then how many more).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

SHOWN = 8  # nodes named in a note; the rest counted


@dataclass(frozen=True)
class PortNote:
    """A note about one port of one node: `text` says the same for every port it holds on."""

    node: str
    port: str  # `mlx5_0 port 1`
    text: str


def fold_notes(notes: Iterable[PortNote]) -> tuple[str, ...]:
    """One line per distinct note, in the order first seen: its ports and nodes, by name."""
    ports: dict[str, set[tuple[str, str]]] = {}
    nodes: dict[str, set[str]] = {}
    for note in notes:
        ports.setdefault(note.text, set()).add((note.node, note.port))
        nodes.setdefault(note.text, set()).add(note.node)
    lines = []
    for text, held in ports.items():
        names = sorted(nodes[text])
        more = len(names) - SHOWN
        shown = ", ".join(names[:SHOWN]) + (f" and {more} more" if more > 0 else "")
        lines.append(
            f"{text} ({_count(len(held), 'port')} of {_count(len(names), 'node')}: {shown})"
        )
    return tuple(lines)


def _count(number: int, what: str) -> str:
    return f"{number} {what}{'' if number == 1 else 's'}"
