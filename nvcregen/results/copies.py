"""Evidence that stands for two runs, and rounds that repeat (pure; issue #31).

A log is evidence for one run at most. Two final rounds read from logs (trainer mode)
are the same evidence when their logs are the same bytes, or when every figure of
their tables is the same (the out-of-place bandwidths of every size: real sweeps of
some 30 sizes never repeat to the hundredth of a GB/s, even on one node twice). Each
of them is then incomplete, with a finding naming the other:

- NVC740 (`unbound`): the other is a round of another group or test: one log saved as
  another run's (the passing pair's as the failing pair's, one node's for every node);
- NVC741 (`anomaly`): the other is another round of the same group: a round copied
  into the next ones.

Only final rounds are compared: a failed, truncated or empty log proves nothing that a
copy could abuse (two pods that printed nothing have the same empty log).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from itertools import islice

from nvcregen.core import codes
from nvcregen.results.findings import Finding
from nvcregen.results.logrecords import LogRecord
from nvcregen.results.models import BandwidthMeasurement, Finality
from nvcregen.results.runs import RunSet
from nvcregen.results.words import Word

_SHOWN = 3
Digests = Mapping[tuple[str, str], str]
"""A log's sha256 by the namespace and name of the run it was read for."""


def log_digests(records: Iterable[LogRecord]) -> dict[tuple[str, str], str]:
    """Each log's sha256 by (namespace, run), as a round's `ref` names its run."""
    return {(r.path.split("/")[1], r.run): r.sha256 for r in records}


def copies(runs: RunSet, digests: Digests) -> list[Finding]:
    """A finding for every final logged round whose evidence another round has too.

    Rounds that share their bytes or their figures are one class (found in one pass:
    linear in the rounds, however many copies a log has); each round of a class of
    several names the first others and how many more there are.
    """
    rounds = [
        (run.stage, run.test, m)
        for run in runs.runs
        for m in run.bandwidth
        if m.from_log and m.finality is Finality.FINAL
    ]
    sums = [digests.get((m.ref.namespace, m.ref.name)) for _, _, m in rounds]
    first: dict[object, int] = {}  # a digest or a table -> the first round that had it
    parent = list(range(len(rounds)))
    for i, (_, _, m) in enumerate(rounds):
        figures = tuple((r.size_bytes, float(r.alg_bw), float(r.bus_bw)) for r in m.rows)
        for key in (
            ("bytes", sums[i]) if sums[i] else None,
            ("figures", figures) if figures else None,
        ):
            if key is not None:
                _join(parent, first.setdefault(key, i), i)
    classes: dict[int, list[int]] = {}
    for i in range(len(rounds)):
        classes.setdefault(_root(parent, i), []).append(i)
    found = []
    for members in classes.values():
        if len(members) < 2:
            continue
        groups = Counter((rounds[i][0], rounds[i][1], rounds[i][2].group) for i in members)
        for i in members:
            stage, test, m = rounds[i]
            shown = list(islice((j for j in members if j != i), _SHOWN))
            named = [
                f"{_name(rounds[j], (stage, test))}, "
                + ("byte for byte" if sums[j] and sums[j] == sums[i] else "figure for figure")
                for j in shown
            ]
            more = len(members) - 1 - len(shown)
            alone = groups[stage, test, m.group] == len(members)  # rounds of one group only
            found.append(_finding(stage, test, m, named, more, copied_round=alone))
    return sorted(found, key=lambda f: (f.stage, f.test, f.group, f.round or 0))


def _root(parent: list[int], i: int) -> int:
    while parent[i] != i:
        parent[i] = parent[parent[i]]
        i = parent[i]
    return i


def _join(parent: list[int], i: int, j: int) -> None:
    parent[_root(parent, j)] = _root(parent, i)


def _finding(
    stage: str,
    test: str,
    m: BandwidthMeasurement,
    named: Sequence[str],
    more: int,
    *,
    copied_round: bool,
) -> Finding:
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
            "stage": stage,
            "test": test,
            "group": m.group,
            "round": m.iteration,
            "source": m.ref.name,
            "message": text,
        }
    )


def _name(other: tuple[str, str, BandwidthMeasurement], here: tuple[str, str]) -> str:
    stage, test, m = other
    where = "" if (stage, test) == here else f"{stage}/{test} "
    group = f"{m.group} " if m.group else ""
    return f"{where}{group}round {m.iteration} ({m.ref.name})"
