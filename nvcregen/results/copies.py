"""Evidence that stands for two runs, and rounds that repeat (pure; issue #31).

A log is evidence for one run at most, and so is a table of figures. Two pieces of
evidence are the same when their logs are the same bytes (any log read: an NCCL
launcher's, a DCGM diagnostic's, a node-health capture's), or when every figure of
their tables is the same (the out-of-place bandwidths of every size: real sweeps of
some 30 sizes never repeat to the hundredth of a GB/s, even on one node twice). Each
of them is then incomplete, with a finding naming the other:

- NVC740 (`unbound`): the other is a round of another group, node or test: one log
  saved as another run's (the passing pair's as the failing pair's, one node's for
  every node);
- NVC741 (`anomaly`): the other is another round of the same group: a round copied
  into the next ones.

Tables are compared whether they were read from logs (trainer mode) or from NVCRE's
BandwidthMeasurements; an NVCRE table of fewer than two sizes is not (one figure can
repeat by chance, as a node's 1 GiB bandwidth on two healthy nodes). Only final rounds
and logs that finished are compared: a failed, truncated or empty log proves nothing
that a copy could abuse (two pods that printed nothing have the same empty log). A
finding about a per-node log (DCGM, node-health) names its node, which it keeps from
being cleared.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import islice

from nvcregen.core import codes
from nvcregen.kindapi.registry import KINDS
from nvcregen.results.findings import Finding
from nvcregen.results.logrecords import LogRecord
from nvcregen.results.models import Finality
from nvcregen.results.runs import RunSet
from nvcregen.results.words import Word

_SHOWN = 3
SIZES = 2
"""The fewest sizes of an NVCRE table whose figures are compared."""
Figures = tuple[tuple[int, float, float], ...]


@dataclass(frozen=True)
class Evidence:
    """One piece of evidence: a final round or a finished per-node log, and what it held.

    `nodes` is set for a per-node log only (its findings name the node); `digest` is
    the log's sha256 ("" for NVCRE's figures), `figures` the table ("" for none).
    """

    stage: str
    test: str
    group: str
    round: int | None
    source: str
    digest: str = ""
    figures: Figures = ()
    nodes: tuple[str, ...] = ()

    @property
    def holder(self) -> tuple[str, str, str, tuple[str, ...]]:
        """Whose evidence it is: its test and group (or node)."""
        return self.stage, self.test, self.group, self.nodes

    def name(self, here: tuple[str, str]) -> str:
        """`[stage/test ]group round N (source)`, the stage and test only when not `here`."""
        where = "" if (self.stage, self.test) == here else f"{self.stage}/{self.test} "
        label = self.group or ", ".join(self.nodes)
        return f"{where}{label + ' ' if label else ''}round {self.round} ({self.source})"


def evidence(runs: RunSet, records: Iterable[LogRecord]) -> list[Evidence]:
    """Every final round with its log's digest and table, and every finished per-node log."""
    records = list(records)
    rounds = [r for r in records if _collective(r.kind)]  # a round's evidence: its table
    # a run's log, or a packed run's section of one test and group (several per run)
    sums: dict[tuple[str, ...], str] = {
        (r.path.split("/")[1], r.run, r.stage, r.test, r.group): r.sha256 for r in rounds
    }
    per_run = Counter((r.path.split("/")[1], r.run) for r in rounds)
    sums |= {
        (r.path.split("/")[1], r.run): r.sha256
        for r in rounds
        if per_run[(r.path.split("/")[1], r.run)] == 1
    }
    found = []
    for run in runs.runs:
        for m in run.bandwidth:
            if m.finality is not Finality.FINAL:
                continue
            table = tuple((r.size_bytes, float(r.alg_bw), float(r.bus_bw)) for r in m.rows)
            figures = table if m.from_log or len(table) >= SIZES else ()
            key = (m.ref.namespace, m.ref.name, run.stage, run.test, m.group)
            digest = sums.get(key, sums.get(key[:2], "")) if m.from_log else ""
            if figures or digest:
                found.append(Evidence(run.stage, run.test, m.group, m.iteration, m.ref.name,
                                      digest, figures))  # fmt: skip
    for r in records:
        if _unmarked_before(r.kind) and not r.hosts:
            continue  # an older render's log names no node (DCGM's): honest ones can be alike
        if not _collective(r.kind) and r.status == "ok" and not r.job_failed:
            nodes = r.nodes or r.hosts[:1]
            found.append(Evidence(r.stage, r.test, r.group, r.round, r.run, r.sha256, (), nodes))
    return found


def _collective(kind: str) -> bool:
    """Whether a record's kind is a collective, whose round's evidence is its table."""
    known = KINDS.get(kind)
    return known is not None and known.collective


def _unmarked_before(kind: str) -> bool:
    """Whether a record's kind printed no begin line before some render (DCGM's)."""
    known = KINDS.get(kind)
    return known is not None and known.unmarked_before is not None


def copies(runs: RunSet, records: Iterable[LogRecord] = ()) -> list[Finding]:
    """A finding for every piece of evidence that another one has too.

    Pieces that share their bytes or their figures are one class (found in one pass:
    linear in the pieces, however many copies a log has); each piece of a class of
    several names the first others and how many more there are.
    """
    pieces = evidence(runs, records)
    first: dict[object, int] = {}  # a digest or a table -> the first piece that had it
    parent = list(range(len(pieces)))
    for i, piece in enumerate(pieces):
        for key in (
            ("bytes", piece.digest) if piece.digest else None,
            ("figures", piece.figures) if piece.figures else None,
        ):
            if key is not None:
                _join(parent, first.setdefault(key, i), i)
    classes: dict[int, list[int]] = {}
    for i in range(len(pieces)):
        classes.setdefault(_root(parent, i), []).append(i)
    found = []
    for members in classes.values():
        if len(members) < 2:
            continue
        holders = Counter(pieces[i].holder for i in members)
        for i in members:
            piece = pieces[i]
            here = (piece.stage, piece.test)
            shown = list(islice((j for j in members if j != i), _SHOWN))
            named = [
                f"{pieces[j].name(here)}, "
                + (
                    "byte for byte"
                    if pieces[j].digest == piece.digest != ""
                    else "figure for figure"
                )
                for j in shown
            ]
            more = len(members) - 1 - len(shown)
            alone = holders[piece.holder] == len(members)  # rounds of one group only
            found.append(_finding(piece, named, more, copied_round=alone))
    return sorted(found, key=lambda f: (f.stage, f.test, f.group, f.nodes, f.round or 0, f.source))


def _root(parent: list[int], i: int) -> int:
    while parent[i] != i:
        parent[i] = parent[parent[i]]
        i = parent[i]
    return i


def _join(parent: list[int], i: int, j: int) -> None:
    parent[_root(parent, j)] = _root(parent, i)


def _finding(piece: Evidence, named: Sequence[str], more: int, *, copied_round: bool) -> Finding:
    others = "; ".join(named) + (f" and {more} more" if more else "")
    if copied_round:
        code, kind = codes.NVC741.code, "anomaly"
        text = f"the same as {others}: a copied round proves nothing"
    else:
        code, kind = codes.NVC740.code, "unbound"
        text = f"the same evidence as {others}: one log is evidence for one run at most"
    return Finding.model_validate(
        {
            "code": code,
            "kind": kind,
            "word": Word.INCOMPLETE,
            "stage": piece.stage,
            "test": piece.test,
            "group": piece.group,
            "round": piece.round,
            "source": piece.source,
            "nodes": piece.nodes,
            "message": text,
        }
    )
